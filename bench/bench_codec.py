"""msgpack's Packer against msgspec, on what the server packs for every move.

    python bench/bench_codec.py [--rounds 7] [--calls 20000]

The values are real: a 4-player game of greedy bots a third of the way through
(moose_server.play.ceiling's sample), packed as the server packs them for one
move: the game's data (the game hash's `data`), a move event, a state snapshot
(kept in the stream now and then), and one seat's `event` frame (view and legal
moves). For each value: whether both give the same bytes, then the median over
`--rounds` of the time per call (µs) of msgpack (`Packer(use_bin_type=True)`,
one for the process, as storage/codec.py had it) and msgspec (`msgpack.Encoder`), and
msgspec's over msgpack's; then the same for unpacking (`unpackb(raw=False)`
against `msgpack.Decoder`). Rounds alternate the two, so that a slower moment of
the machine falls on both.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import msgpack
import msgspec

from moose import rules
from moose_server.play.ceiling import _payload, _sample


def values() -> dict[str, Any]:
    """What a move packs: game data, event, snapshot, one seat's frame."""
    unpack = msgspec.msgpack.decode
    data, event, snapshot = (unpack(b) for b in _payload(4))
    state, _ = _sample(4)
    frame = {
        "type": "event",
        "game": "g_0123456789",
        "seq": 17,
        "event": event,
        "view": rules.view(state, 1),
        "legal": rules.legal_moves(state),
        "deadline": 1796199619812,
        "server_time": 1796199619000,
    }
    return {"game data": data, "event": event, "snapshot": snapshot, "frame": frame}


def per_call(fn: Callable[[Any], Any], value: Any, calls: int) -> float:
    """µs per call of fn(value), over `calls` calls."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn(value)
    return (time.perf_counter() - t0) / calls * 1e6


def compare(
    name: str, a: Callable[[Any], Any], b: Callable[[Any], Any], value: Any, rounds: int, calls: int
) -> None:
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(per_call(a, value, calls))
        tb.append(per_call(b, value, calls))
    ma, mb = statistics.median(ta), statistics.median(tb)
    print(f"  {name:10s} msgpack {ma:6.2f} µs   msgspec {mb:6.2f} µs   ratio {mb / ma:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20000)
    opts = ap.parse_args()
    packer = msgpack.Packer(use_bin_type=True)
    encoder, decoder = msgspec.msgpack.Encoder(), msgspec.msgpack.Decoder()
    cases = values()
    print(
        "same bytes:",
        ", ".join(f"{k} {packer.pack(v) == encoder.encode(v)}" for k, v in cases.items()),
    )
    print(f"pack (median of {opts.rounds} rounds of {opts.calls} calls):")
    for name, value in cases.items():
        compare(name, packer.pack, encoder.encode, value, opts.rounds, opts.calls)
    print("unpack:")
    for name, value in cases.items():
        blob = packer.pack(value)
        compare(
            name,
            lambda b: msgpack.unpackb(b, raw=False),
            decoder.decode,
            blob,
            opts.rounds,
            opts.calls,
        )


if __name__ == "__main__":
    main()
