"""Client CPU per commit-script call: redis-py's asyncio client against the server's Pipe.

    python bench/bench_redis_clients.py [--callers 200] [--calls 100] [--rounds 3]

Starts a private redis-server (the bundled binary, unix socket, no persistence),
then, in turn and `--rounds` times, lets `--callers` concurrent loops each make
`--calls` EVALSHA calls of a small script with a move's real payload sizes
(3 keys, a 2 KB game blob, a 1.3 KB state snapshot): once through
`redis.asyncio.Redis` with a `BlockingConnectionPool` (as the server used for
every call before round 3), once through `moose_server.pipe.Pipe`. Prints the
calls/s and the client process's CPU per call of each, their medians and the
ratio. Both clients talk to the same redis-server in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "client"), str(ROOT / "server")]

import redis.asyncio as aioredis  # noqa: E402

from moose_server.embedded import EmbeddedRedis  # noqa: E402
from moose_server.pipe import Pipe  # noqa: E402

SCRIPT = "return {'ok', 1, 2, 3}"
KEYS = ["{b1}:game:g", "{b1}:events:g", "{b1}:deadlines"]
ARGS = [1, "m:p:mid", b"d" * 2048, 30000, "g", b"moose:games", 0, 1, b"e" * 64, b"s" * 1315]


async def one_round(url: str, client: str, callers: int, calls: int) -> tuple[float, float]:
    """(calls/s, client CPU us per call) of one client."""
    if client == "redis-py":
        pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=64, timeout=10)
        redis = aioredis.Redis(connection_pool=pool)
        script = redis.register_script(SCRIPT)

        async def call() -> object:
            return await script(keys=KEYS, args=ARGS)

        close = redis.aclose
    else:
        pipe = Pipe(url)

        async def call() -> object:
            return await pipe.evalsha(SCRIPT, KEYS, ARGS)

        close = pipe.aclose
    await call()  # connect, load the script

    async def loop() -> None:
        for _ in range(calls):
            await call()

    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(loop() for _ in range(callers)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await close()
    n = callers * calls
    return n / wall, cpu / n * 1e6


async def main(args: argparse.Namespace) -> None:
    results: dict[str, list[tuple[float, float]]] = {"redis-py": [], "pipe": []}
    with (
        tempfile.TemporaryDirectory() as folder,
        EmbeddedRedis(Path(folder), appendonly=False) as server,
    ):
        for r in range(args.rounds):
            for client in results:  # alternating, so that noise lands on both
                rate, us = await one_round(server.url, client, args.callers, args.calls)
                results[client].append((rate, us))
                print(f"round {r + 1} {client:8s} {rate:9,.0f} calls/s  {us:6.1f} us CPU/call")
    med = {c: statistics.median(us for _, us in runs) for c, runs in results.items()}
    print(f"median client CPU per call: redis-py {med['redis-py']:.1f} us, "
          f"pipe {med['pipe']:.1f} us (ratio {med['redis-py'] / med['pipe']:.1f})")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--callers", type=int, default=200)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(parser.parse_args()))
