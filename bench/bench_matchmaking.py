"""How long one matchmaking call holds Redis: the old round (1,000 tickets, every table)
against slices (256 tickets and 16 tables at most, or 128 and 8), over a queue of N players.

    python bench/bench_matchmaking.py [--players 10000] [--rounds 3] [--out FILE.json]

Each round queues N players (tables of 4) on a private redis-server and forms
tables until the queue is empty, once per setting, the settings taking turns.
Redis' SLOWLOG (threshold 0: every command) gives each mm_form call's duration
as Redis measured it, and INFO's CPU time the Redis CPU of the whole run. On a
shared machine a call can be long because Redis was not scheduled: the median
and the CPU per table say more than the maximum.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "client"), str(ROOT / "server")]

import redis.asyncio as aioredis  # noqa: E402

from moose_server.matchmaking.matchmaker import Matchmaker, MatchOptions  # noqa: E402
from moose_server.storage import scripts  # noqa: E402
from moose_server.storage.connection import open_node  # noqa: E402
from moose_server.storage.embedded import EmbeddedRedis  # noqa: E402

SETTINGS = {
    "rounds of 1000 tickets, every table": (1000, 10**6),
    "slices of 256 tickets, 16 tables": (256, 16),
    "slices of 128 tickets, 8 tables": (128, 8),
}


def _sha(command: bytes) -> bytes:
    """The script SHA1 of an EVALSHA in the slow log (b"" for any other command)."""
    words = command.split(b" ", 2)
    return words[1] if len(words) > 1 and words[0] == b"EVALSHA" else b""


async def one(url: str, players: int, scan: int, tables: int) -> dict[str, Any]:
    """Queue `players`, form every table; mm_form durations and Redis CPU."""
    redis = aioredis.Redis(
        connection_pool=aioredis.BlockingConnectionPool.from_url(url, max_connections=32)
    )
    await redis.flushall()
    mm = Matchmaker(open_node(url, 32), MatchOptions(match_wait=60, scan=scan, tables=tables))
    for start in range(0, players, 500):
        await asyncio.gather(
            *(mm.enqueue(f"p{i}", f"p{i}", 4, 4) for i in range(start, min(players, start + 500)))
        )
    await redis.config_set("slowlog-log-slower-than", 0)
    await redis.config_set("slowlog-max-len", 100_000)
    await redis.slowlog_reset()
    cpu0 = await redis.info("cpu")
    formed = calls = 0
    while got := await mm.form_tables():
        formed += len(got)
        calls += 1
        for table in got:
            await mm.started(table.key)
    cpu1 = await redis.info("cpu")
    form = {hashlib.sha1(scripts.source("mm_form").encode()).hexdigest().encode()}
    entries = await redis.slowlog_get(100_000)
    durations = [e["duration"] / 1000 for e in entries if _sha(e["command"]) in form]
    await redis.config_set("slowlog-log-slower-than", 10_000)
    await redis.aclose()
    cpu = sum(float(cpu1[k]) - float(cpu0[k]) for k in ("used_cpu_user", "used_cpu_sys"))
    return {
        "tables": formed,
        "calls": calls,
        "call_ms_median": statistics.median(durations),
        "call_ms_max": max(durations),
        "redis_cpu_ms_per_table": round(1000 * cpu / formed, 3),
    }


async def main(players: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp) / "redis") as r:
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in SETTINGS}
        for _ in range(rounds):
            for name, (scan, tables) in SETTINGS.items():
                runs[name].append(await one(r.url, players, scan, tables))
                print(name, runs[name][-1], file=sys.stderr)
    medians = {
        name: {k: statistics.median(run[k] for run in rs) for k in rs[0]}
        for name, rs in runs.items()
    }
    return {"players": players, "rounds": rounds, "runs": runs, "medians": medians}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args()
    report = asyncio.run(main(args.players, args.rounds))
    text = json.dumps(report, indent=1)
    if args.out:
        Path(args.out).write_text(text)
    print(json.dumps(report["medians"], indent=1))
