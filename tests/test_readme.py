"""README.md as a front door: its table of contents leads to its sections, and every
`moose` command it shows is one the command line takes.

The bot it shows runs in test_readme_bot.py, its records transcript in
test_replay.py; the outputs it quotes come from runs in a fresh clone.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from moose import cli

README = Path(__file__).resolve().parent.parent / "README.md"


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")


def moose_commands(text: str) -> list[str]:
    """Every `moose ...` line of the README's bash and console blocks (comments dropped),
    and every `moose COMMAND ARG...` in its text (a bare `moose report` names one)."""
    found = []
    for block in re.findall(r"```(?:bash|console)\n(.*?)```", text, re.DOTALL):
        for line in block.splitlines():
            line = line.removeprefix("$ ")
            if line.startswith("moose "):
                found.append(line.split(" #", 1)[0].split(" >", 1)[0].strip())
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL).replace("\n", " ")
    for span in re.findall(r"`(moose [^`]+)`", prose):
        if len(span.split()) > 2 and not span.endswith(("--help", "--version")):
            found.append(span)
    return found


def test_the_table_of_contents_leads_to_every_section() -> None:
    text = README.read_text()
    sections = [anchor(h) for h in re.findall(r"^## (.+)$", text, re.MULTILINE)]
    listed = re.findall(r"^\d+\. \[[^\]]+\]\(#([^)]+)\)$", text, re.MULTILINE)
    assert listed == sections


def test_the_readme_stays_a_short_front_door() -> None:
    # Players and bot authors first; what an operator needs is in deploy/README.md.
    assert len(README.read_text().splitlines()) <= 300


@pytest.mark.parametrize("command", moose_commands(README.read_text()))
def test_every_moose_command_shown_is_one_the_command_line_takes(command: str) -> None:
    args = cli.build_parser().parse_args(shlex.split(command)[1:])
    assert getattr(args, "func", None) is not None, command
