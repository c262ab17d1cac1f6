"""`moose record GAME`: fetch a finished game's record and save it as JSON."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from moose import record as records
from moose.commands._common import DEFAULT_URL, url_help

EPILOG = """\
A queue game's record can be fetched by anyone while the server keeps it (30 days
by default); a private table's by its players (with the same --name as in
`moose play`) or with its join code. `moose play` saves the record of every game
it plays to finish, and says where.

exit status: 0 saved, 1 the server has no such record (said why) or is unreachable.
"""


def add_parser(subparsers: Any) -> None:
    """Register `moose record`."""
    p = subparsers.add_parser(
        "record",
        help="fetch a finished game's record (JSON) from a server",
        description="Fetch the record of a finished game (RULES.md section 7) and save it: "
        "check its deal with `moose verify FILE`, replay it with `moose replay FILE`.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("game", metavar="GAME_ID", help="the game's id, such as g_9f8e7d6c5b")
    p.add_argument("--code", help="the join code of a private table's game")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where to save it, - for stdout (default moose-GAME_ID.json)",
    )
    add_who(p)
    p.set_defaults(func=run)


def add_who(p: argparse.ArgumentParser) -> None:
    """--url and --name: the server, and the player whose kept session asks."""
    p.add_argument("--url", default=DEFAULT_URL, help=url_help())
    p.add_argument(
        "--name",
        default=None,
        help="ask as this player, as in `moose play --name` "
        "(a private table's players need no code; default: your login)",
    )


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose record`."""
    from moose import _records

    try:
        rec = asyncio.run(fetch(args.url, args.name, args.game, args.code))
    except (records.RecordError, ConnectionError) as exc:
        print(f"moose record: {exc}", file=sys.stderr)
        return 1
    target = args.output or _records.file_name(args.game)
    if target == "-":
        records.dump(rec, sys.stdout)
        return 0
    records.dump(rec, target)
    print(
        f"saved the record of game {args.game} to {target}: check its deal with "
        f"`moose verify {target}`, replay it with `moose replay {target}`"
    )
    return 0


async def fetch(url: str, name: str | None, game: str, code: str | None) -> records.Record:
    """The checked record of `game` from the server at `url` (a ConnectionError when it
    cannot be reached)."""
    from moose import _records
    from moose.client import ConnectError, ServerError
    from moose.commands._common import login_name, open_kept

    try:
        client = await open_kept(url, name or login_name(), None)
    except (ConnectError, ServerError) as exc:
        raise ConnectionError(str(exc)) from None
    try:
        return await _records.fetch(client, game, code)
    finally:
        await client.close()
