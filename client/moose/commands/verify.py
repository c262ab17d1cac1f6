"""`moose verify`: check that a game record's deal follows from its seeds (moose.fair)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from moose import fair
from moose import record as records

# Exit codes, as `moose replay`'s: the deal is fair / it differs / the record is unusable.
FAIR, DIFFERS, BAD_RECORD = 0, 1, 2

EPILOG = """\
output: "fair", or one line per part of the record that differs from the deal
recomputed from its server seed and seeds (the commitment, the dealer, each card).

exit status: 0 fair, 1 something differs, 2 the record is malformed, unreadable
or has no deal (a game dealt from a fixed deck for tests).
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
    p.add_argument("record", metavar="RECORD.json", help="the record file, or - for stdin")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Verify the record named on the command line; print `fair` or what differs."""
    try:
        rec = records.load(sys.stdin.buffer if args.record == "-" else args.record)
        differences = fair.verify(rec.to_dict())
    except ValueError as exc:  # RecordError is one
        sys.stdout.write(f"cannot verify: {exc}\n")
        return BAD_RECORD
    if not differences:
        sys.stdout.write("fair\n")
        return FAIR
    sys.stdout.write("".join(f"differs: {d}\n" for d in differences))
    return DIFFERS
