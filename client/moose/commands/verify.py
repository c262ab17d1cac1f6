"""`moose verify`: check that a game record's deal follows from its seeds (moose.fair)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from moose import fair
from moose import record as records
from moose.commands.record import add_who

# Exit codes, as `moose replay`'s: the deal is fair / it differs / the record is unusable.
FAIR, DIFFERS, BAD_RECORD = 0, 1, 2

EPILOG = """\
output: "fair", or one line per part of the record that differs from the deal
recomputed from its server seed and seeds (the commitment, the dealer, each card).

Given a game id (g_...) rather than a file, the record is fetched from the server
first, as `moose record GAME_ID` does.

exit status: 0 fair, 1 something differs, 2 the record is malformed, unreadable,
not on the server, or has no deal (a game dealt from a fixed deck for tests).
"""


def add_parser(subparsers: Any) -> None:
    """Register `moose verify`."""
    p = subparsers.add_parser(
        "verify",
        help="check that a game record's deal was fair (provably fair deals)",
        description="Recompute a game's commitment, dealer and deck from its record's\n"
        "server seed and seeds (PROTOCOL.md, 'Provably fair deals') and compare.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "record",
        metavar="RECORD.json|GAME_ID",
        help="the record file, - for stdin, or a finished game's id",
    )
    p.add_argument("--code", help="with a GAME_ID: the join code of a private table's game")
    add_who(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Verify the record named on the command line; print `fair` or what differs."""
    try:
        rec = _load(args)
        differences = fair.verify(rec.to_dict())
    except (ValueError, ConnectionError) as exc:  # RecordError is a ValueError
        sys.stdout.write(f"cannot verify: {exc}\n")
        return BAD_RECORD
    if not differences:
        sys.stdout.write("fair\n")
        return FAIR
    sys.stdout.write("".join(f"differs: {d}\n" for d in differences))
    return DIFFERS


def _load(args: argparse.Namespace) -> records.Record:
    """The record a file names, or stdin's, or the server's for a game id."""
    import asyncio
    import os

    from moose import _records
    from moose.commands.record import fetch

    if args.record == "-":
        return records.load(sys.stdin.buffer)
    if _records.GAME_ID.fullmatch(args.record) and not os.path.exists(args.record):
        return asyncio.run(fetch(args.url, args.name, args.record, args.code))
    return records.load(args.record)
