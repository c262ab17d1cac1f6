"""A client frame read as the socket reads it: typed (moose.messages) against plain maps.

    python bench/bench_messages.py [--rounds 7] [--calls 100000]
    python bench/bench_messages.py --old OLD_PROTOCOL.py   # and the hand-written check

For PROTOCOL.md's `move` and `hello` examples, in msgpack and JSON: the median
over `--rounds` of the time per call (µs) of `moose.messages.decode` (msgspec's
typed decoder: the map read and every field checked) and of
`moose.protocol.decode` (a plain map, nothing checked). With `--old` (a
protocol.py from before the Structs, e.g. `git show REV:client/moose/protocol.py`)
also its `decode`, `request_id` and `check`, what the socket ran before. Rounds
alternate the readers, so that a slower moment of the machine falls on all.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import msgpack

from moose import messages, protocol

FRAMES: dict[str, dict[str, Any]] = {
    "move": {
        "type": "move",
        "id": 10,
        "game": "g_9f8e7d6c5b",
        "seq": 7,
        "move_id": "c0ffee-17",
        "move": {"action": "play", "card": "door", "room": 0},
    },
    "hello": {"type": "hello", "id": 1, "protocol": 1, "name": "alice", "bot": True},
}


def per_call(read: Callable[[Any], object], frame: bytes | str, calls: int) -> float:
    """µs per call of `read(frame)`."""
    start = time.perf_counter()
    for _ in range(calls):
        read(frame)
    return (time.perf_counter() - start) / calls * 1e6


def readers(old: str | None) -> dict[str, Callable[[Any], object]]:
    """The readers compared, by name."""
    found: dict[str, Callable[[Any], object]] = {
        "typed": messages.decode,
        "plain map": protocol.decode,
    }
    if old is not None:
        spec = importlib.util.spec_from_file_location("old_protocol", old)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)

        def before(frame: bytes | str) -> object:
            msg = module.decode(frame)
            module.request_id(msg)
            return module.check(msg)

        found["old check"] = before
    return found


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--old", help="a protocol.py with the hand-written check()")
    args = parser.parse_args()
    found = readers(args.old)
    print(f"{'frame':<16}" + "".join(f"{name:>12}" for name in found) + "  (µs a call)")
    for kind, msg in FRAMES.items():
        for encoding, frame in (("msgpack", msgpack.packb(msg)), ("JSON", json.dumps(msg))):
            times: dict[str, list[float]] = {name: [] for name in found}
            for _ in range(args.rounds):
                for name, read in found.items():
                    times[name].append(per_call(read, frame, args.calls))
            cells = "".join(f"{statistics.median(t):>12.2f}" for t in times.values())
            print(f"{kind + ' ' + encoding:<16}{cells}")


if __name__ == "__main__":
    main()
