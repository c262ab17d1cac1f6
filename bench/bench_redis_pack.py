"""CPU of packing the server's Redis commands: redis-py's asyncio packer against hiredis'.

    python bench/bench_redis_pack.py

Packs a move's commit (EVALSHA of lua/commit.lua with its ~20 arguments and a
2 KB game blob) and a pipeline of five of them with redis-py's asyncio
`Connection` and with storage/packing.py's, checks that the bytes are equal,
and prints the best of 7 timeit repeats, in us per command, and the ratio.
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path
from typing import Any

from redis.asyncio.connection import Connection

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_packing import _commit_command

from moose_server.storage.packing import packing


def best(fn: Any, number: int) -> float:
    """Best of 7 repeats, in us per call."""
    return min(timeit.repeat(fn, number=number, repeat=7)) / number * 1e6


def main() -> int:
    """Print the two packers' times for one commit and a pipeline of five."""
    command = _commit_command()
    five = [command] * 5
    theirs, ours = Connection(), packing(Connection)()
    assert b"".join(theirs.pack_command(*command)) == b"".join(ours.pack_command(*command))
    rows = [
        ("one commit", lambda c: c.pack_command(*command), 1),
        ("pipeline of 5", lambda c: c.pack_commands(five), 5),
    ]
    for name, fn, n in rows:
        a = best(lambda fn=fn: fn(theirs), 4000) / n
        b = best(lambda fn=fn: fn(ours), 4000) / n
        print(f"{name:14s} redis-py {a:6.2f} us  hiredis {b:6.2f} us  ratio {a / b:4.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
