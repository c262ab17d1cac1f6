"""README's bot for bot authors: its code block, run as written against a real `moose serve`."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import moose

from helpers import ServeProcess, play_seat

README = Path(__file__).resolve().parent.parent / "README.md"
RESULT = re.compile(r"(g_\w+) (won|lost) \[[\d, ]+\]")


def readme_bot() -> str:
    """The first Python block of README's "Write a bot"."""
    section = README.read_text().split("\n## Write a bot\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None, "README's Write a bot shows no Python block"
    return found[1]


def test_the_readme_bot_is_complete_in_under_20_lines_with_its_own_choose() -> None:
    code = readme_bot()
    assert len(code.splitlines()) < 20
    assert "def choose(self, view, legal)" in code
    assert not re.search(r"\b(random|greedy|cautious)\b[\"']", code)  # no built-in bot


async def run_bot(script: Path, *args: str) -> list[str]:
    """Run the README's bot to its end; its output lines (exit status 0)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(60):
        out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return out.decode().splitlines()


@pytest.mark.slow  # `moose serve`, and the bot as a process
async def test_the_readme_bot_plays_at_a_private_table_and_in_the_queue(
    moose_serve: Callable[..., ServeProcess], tmp_path: Path
) -> None:
    # A bot alone in the queue gets server bots after 0.5 s.
    proc = moose_serve("--data-dir", str(tmp_path / "data"), "--queue-bots-after", "0.5")
    script = tmp_path / "bot.py"
    script.write_text(readme_bot())
    async with moose.connect(proc.url, name="host") as host:
        code = (await host.create_table(2))["code"]
        bot = asyncio.ensure_future(run_bot(script, proc.url, code))
        async for msg in host.events():  # the bot sat down: start
            if msg["type"] == "table" and None not in msg["seats"]:
                break
        await host.start_table(code)
        game, _, _ = await play_seat(host, "greedy")
        (line,) = await bot
    assert RESULT.fullmatch(line) and line.startswith(f"{game} ")
    lines = await run_bot(script, proc.url)  # the queue: 3 games
    assert len(lines) == 3 and all(RESULT.fullmatch(line) for line in lines)
