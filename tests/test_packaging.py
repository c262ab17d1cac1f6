"""What `pip install moose-house` gives a bot author: a small client, no server.

The bare wheel carries the rules, records, bots, the async client and the
playing CLI; `moose serve` and `moose loadtest` need the `server` extra and say
so. One test builds the wheel and installs it into a fresh virtual environment
(from the package index, as a user would), then plays a game with a bot written
against it; the other checks the imports of the installed client in this one.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

from moose_server.commands import SERVER_MODULES

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = (*SERVER_MODULES, "moose_server.app", "moose_server.store")

# Run in a child interpreter: which modules does the client's import pull in?
IMPORTS = f"""
import json, sys
import moose, moose.bots, moose.cli, moose.client, moose.record, moose.rules
moose.cli.build_parser()
print(json.dumps(sorted(m for m in sys.modules if m in {FORBIDDEN!r}
                        or m.split(".")[0] in {SERVER_MODULES!r})))
"""

BOT = """
import asyncio, sys
import moose

class FirstMove:
    def choose(self, view, legal):
        return legal[0]

async def main():
    [result] = await moose.play_bot(sys.argv[1], FirstMove(), name="first", min_players=2,
                                    max_players=2)
    print("scores", result.scores, "seat", result.seat)

asyncio.run(main())
"""


def test_importing_the_client_pulls_in_none_of_the_servers_dependencies() -> None:
    out = subprocess.run([sys.executable, "-c", IMPORTS], capture_output=True, text=True,
                         check=True, timeout=60)  # fmt: skip
    assert json.loads(out.stdout) == []


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kwargs)  # type: ignore[call-overload,no-any-return]


@pytest.mark.timeout(600)  # a wheel build and a venv installed from the index
def test_the_bare_wheel_runs_a_bot_and_leaves_the_server_out(tmp_path: Path, moose_serve) -> None:
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                  str(tmp_path / "dist"), str(ROOT)])  # fmt: skip
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("moose_house-*.whl")
    venv.create(tmp_path / "venv", with_pip=True)
    python = str(tmp_path / "venv" / "bin" / "python")
    installed = _run([python, "-m", "pip", "install", "-q", str(wheel)])
    assert installed.returncode == 0, installed.stderr

    # No server dependency came with it, and the client imports none.
    probe = _run([python, "-c", IMPORTS])
    assert probe.returncode == 0, probe.stderr
    assert json.loads(probe.stdout) == []
    for module in SERVER_MODULES:
        assert _run([python, "-c", f"import {module}"]).returncode != 0, module

    # The server commands say which extra to install.
    serve = _run([str(tmp_path / "venv" / "bin" / "moose"), "serve"])
    assert serve.returncode == 2
    assert "pip install 'moose-house[server]'" in serve.stderr

    # A bot written against the bare install plays a whole game (a server bot fills
    # the other seat).
    server = moose_serve("--queue-bots-after", "0.2", "--data-dir", str(tmp_path / "data"))
    (tmp_path / "bot.py").write_text(textwrap.dedent(BOT))
    played = _run([python, str(tmp_path / "bot.py"), server.url])
    assert played.returncode == 0, played.stderr
    assert played.stdout.startswith("scores [")
