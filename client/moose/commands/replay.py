"""`moose replay`: check a game record and print where it ends, as one JSON object."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from moose import record as records
from moose import rules

# Exit codes: the record replays cleanly / a move is illegal (or the written result
# disagrees with the replay) / the record itself cannot be used.
OK, ILLEGAL, BAD_RECORD = 0, 1, 2

EPILOG = """\
output: one JSON object
  {"over": bool, "to_act": seat|null, "scores": [...], "winners": [...],
   "legal": [...] (only with --legal), "error": null | {"move": i, "reason": "..."}}
"scores" are the current scores (rules.scores) while the game is not over, and
"winners" is [] until it is. On an illegal move, everything describes the state
just before move i (0-based). When the record is malformed or unreadable, the
fields are null and error.move is null; so is error.move when every move is legal
but the record's "result" differs from the replay.

exit status: 0 the record replays cleanly, 1 a move is illegal (or the result is
wrong), 2 the record is malformed or unreadable.
"""


def add_parser(subparsers: Any) -> None:
    """Register `moose replay`."""
    p = subparsers.add_parser(
        "replay",
        help="replay a game record (JSON) and check every move",
        description="Replay a game record (RULES.md section 7): apply its moves in order,\n"
        "stop at the first illegal one, and print the outcome as one JSON object.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("record", metavar="RECORD.json", help="the record file, or - for stdin")
    p.add_argument(
        "--legal", action="store_true", help="also list the legal moves of the seat to act"
    )
    p.set_defaults(func=run)


def summary(result: records.ReplayResult, *, legal: bool = False) -> dict[str, Any]:
    """The JSON object `moose replay` prints for a replay."""
    state = result.state
    out: dict[str, Any] = {
        "over": state.over,
        "to_act": rules.to_act(state),
        "scores": rules.scores(state),
        "winners": rules.winners(state),
    }
    if legal:
        out["legal"] = rules.legal_moves(state)
    out["error"] = result.error
    return out


def _failure(reason: str, *, legal: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"over": None, "to_act": None, "scores": None, "winners": None}
    if legal:
        out["legal"] = None
    out["error"] = {"move": None, "reason": reason}
    return out


def run(args: argparse.Namespace) -> int:
    """Replay the record named on the command line; print one JSON object."""
    try:
        rec = records.load(sys.stdin.buffer if args.record == "-" else args.record)
    except records.RecordError as exc:
        _print(_failure(str(exc), legal=args.legal))
        return BAD_RECORD
    result = records.replay(rec)
    _print(summary(result, legal=args.legal))
    return OK if result.ok else ILLEGAL


def _print(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
