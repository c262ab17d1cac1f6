"""The `moose` command: one subcommand per module in `moose.commands`."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Each module has `add_parser(subparsers)` (which sets `func`) and is imported
# only when listed here, so that `moose replay` never pays for aiohttp or redis.
COMMANDS = ("serve", "play", "bots", "watch", "replay", "simulate", "loadtest")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand that is installed."""
    parser = argparse.ArgumentParser(
        prog="moose",
        description="Moose House: play There's a Moose in the House online, with people and bots.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"moose.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"moose.commands.{name}":
                raise
            continue
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `moose` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
