"""What `moose --help` and each command's help say: defaults shown, facts said one way."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from moose import __version__, cli
from moose.bots import BOTS
from moose.search import MCTS_COST


def parsers(
    parser: argparse.ArgumentParser, name: str = "moose"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the `moose` command line, with its command's words."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for word, sub in action.choices.items():
                yield from parsers(sub, f"{name} {word}")


def options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """A parser's options by their long flag."""
    return {flag: a for a in parser._actions for flag in a.option_strings if flag.startswith("--")}


def help_text(parser: argparse.ArgumentParser) -> str:
    """A parser's help as one line of words (argparse wraps it)."""
    return " ".join(parser.format_help().split())


def test_version_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        cli.main(["--version"])
    assert ended.value.code == 0
    assert capsys.readouterr().out == f"moose {__version__}\n"


def test_every_url_option_shows_its_default_and_names_moose_url() -> None:
    top = cli.build_parser()
    assert "MOOSE_URL" in help_text(top)
    checked = []
    for name, parser in parsers(top):
        url = options(parser).get("--url")
        if url is None or url.default is None:  # `moose loadtest --url`: none, it starts one
            continue
        checked.append(name)
        text = help_text(parser)
        assert f"(default {url.default}" in text and "MOOSE_URL" in text, name
    assert {"moose play", "moose arena join", "moose arena watch", "moose record"} <= set(checked)


def test_bot_choices_and_the_search_bots_cost_are_said_one_way() -> None:
    found = dict(parsers(cli.build_parser()))
    assert "(default greedy;" in help_text(found["moose bots"])
    play = help_text(found["moose play"])
    assert all(bot in play.split("--bots BOT,BOT")[-1] for bot in BOTS)
    for name in ("moose play", "moose bots", "moose serve", "moose simulate"):
        assert MCTS_COST in help_text(found[name]), name
        assert not re.search(
            r"~?0\.\d+ s of CPU a move", help_text(found[name]).replace(MCTS_COST, "")
        ), name


def test_serve_names_the_bundled_valkey_and_arena_shows_its_steps() -> None:
    found = dict(parsers(cli.build_parser()))
    serve = help_text(found["moose serve"])
    assert "Valkey" in serve and "redis-server" not in serve
    assert "moose arena [-h] [--url URL] [list | join ID | watch ID]" in help_text(
        found["moose arena"]
    )
    assert "moose arena list" in dict(parsers(cli.build_parser()))
