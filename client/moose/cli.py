"""The `moose` command: one subcommand per module in `moose.commands`, plus plug-ins.

Other installed packages add subcommands through the ``moose.commands``
entry-point group (the server adds `serve`, the load test `loadtest`): each
entry point names an `add_parser(subparsers)` function, which sets `func`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points

from moose import __version__

# Each module has `add_parser(subparsers)` (which sets `func`) and is imported
# only when listed here, so that `moose replay` never pays for aiohttp.
COMMANDS = (
    "play",
    "bots",
    "watch",
    "ratings",
    "account",
    "report",
    "replay",
    "simulate",
    "verify",
    "record",
    "arena",
    "following",
    "challenges",
)
ENTRY_POINTS = "moose.commands"
# How the server's dependencies are installed, as `moose serve` and `moose loadtest`
# say it on a client-only install: moose-house is not on PyPI.
SERVER_EXTRA = "from a clone of Moose House: pip install '.[server]' (it is not on PyPI)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand that is installed."""
    parser = argparse.ArgumentParser(
        prog="moose",
        description="Moose House: play There's a Moose in the House online, with people and bots.",
        epilog="The commands that talk to a server take --url (default ws://127.0.0.1:8080/ws, "
        "what `moose serve` listens on); set MOOSE_URL to change that default. "
        "`moose COMMAND --help` tells more.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"moose.commands.{name}").add_parser(sub)
    for plugin in sorted(entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
        if plugin.name not in COMMANDS:
            plugin.load()(sub)
    return parser


# The exit status of a command whose reader went away (`moose arena watch ID | head`),
# as a shell reports one killed by SIGPIPE.
PIPE_CLOSED = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `moose` console script."""
    try:
        return _run(argv)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Whoever read our output stopped: end quietly. Python would flush stdout
        # again at exit and print a second error, so stdout goes to /dev/null.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return PIPE_CLOSED


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
