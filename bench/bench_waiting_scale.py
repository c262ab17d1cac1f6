"""Correspondence games waiting for a move, by the 100,000: what Redis holds for each,
and what they cost the deadline loop, the lobby and a real-time move.

    python bench/bench_waiting_scale.py [--sizes 1000,100000,1000] [--moves 10]
        [--rounds 40] [--out FILE.json]

Runs a real `moose serve` on its own valkey-server (unix socket, no AOF). Two
guests play `--moves` moves of a 3-days-a-move table and leave it waiting for a
person's move; for each size N that game's keys are cloned N times
(bench/waiting_clones.py: each clone its own id, bucket, players and deadline, a
day ahead at most), measured, and deleted again. A third guest (the probe) takes
seat 0 of 20 of them (the cap of a player's correspondence games) and plays
real-time games against a server bot. Per size, `--rounds` rounds of: 5 deadline
claims of every bucket (bench/waiting_probes.py `tick`), the probe's `my_games` and
`games`, 3 of its real-time moves (`move` to `moved`). Printed: Redis `used_memory`
growth per game and `MEMORY USAGE` of each kind of key of one clone (bench/
bench_waiting_memory.py gives the same per number of moves, without a server),
then the probes' medians and p99s, and the p99 ratios of each run of the largest
size to each of the smallest (a repeat of the first size at the end is the same
run's baseline; `1000,100000,1000,100000,1000` interleaves them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import redis.asyncio as aioredis
from bench_following_flood import connect, p99, serve
from waiting_clones import clone, drop, key_sizes, read_template
from waiting_probes import Mover, lobby, template_game, tick

from moose_server.settings import Settings
from moose_server.storage.connection import open_node
from moose_server.storage.embedded import EmbeddedRedis, free_port
from moose_server.storage.store import Store

SEATED = 20  # clones the probe guest sits in: a player's cap of correspondence games
PROBES = ("tick", "my_games", "games", "move")
SETS = ("player's game set", "player's corr. set")  # waiting_clones.key_sizes' names


async def used_memory(redis: Any) -> int:
    return int((await redis.info("memory"))["used_memory"])


async def probe_round(store: Store, mover: Mover, sock: Any, out: dict[str, list[float]]) -> int:
    """One round of every probe; how many games `my_games` listed."""
    lease = int(Settings().lease * 1000)
    for _ in range(5):
        out["tick"].append(await tick(store, store.redis, lease))
    mine, listed, count = await lobby(sock)
    out["my_games"].append(mine)
    out["games"].append(listed)
    for _ in range(3):
        out["move"].append(await mover.move())
    return count


async def one_size(
    redis: Any, store: Store, t: Any, n: int, rounds: int, mover: Mover, seated: dict[int, str]
) -> dict[str, Any]:
    """Clone `n` games, measure, delete them: one row of the table."""
    buckets = store.buckets
    numbers = range(n)
    before = await used_memory(redis)
    start = time.perf_counter()
    now_s, now_us = await redis.time()
    await clone(redis, t, numbers, buckets, now_s * 1000 + now_us // 1000, seated)
    cloned = time.perf_counter() - start
    after = await used_memory(redis)
    sizes = await key_sizes(redis, n - 1, len(t.players), buckets)
    samples: dict[str, list[float]] = {p: [] for p in PROBES}
    await probe_round(store, mover, mover.sock, {p: [] for p in PROBES})  # warm-up
    listed = 0
    for _ in range(rounds):
        listed = await probe_round(store, mover, mover.sock, samples)
    await drop(redis, len(t.players), numbers, buckets, seated)
    row: dict[str, Any] = {
        "waiting": n,
        "clone_s": round(cloned, 1),
        "used_memory_per_game": round((after - before) / n),
        "key_bytes": sizes,
        "my_games_listed": listed,
    }
    for p in PROBES:
        row[p] = {"p50": round(statistics.median(samples[p]), 3), "p99": round(p99(samples[p]), 3)}
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


async def main(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mwait") as tmp:
        data = Path(tmp)
        with EmbeddedRedis(data / "r", appendonly=False) as server:
            port = free_port()
            # The probe sends faster than a player may (MOOSE_RATE, 20/s) and starts
            # more tables than an address may in an hour: its server lets it.
            os.environ.update(
                MOOSE_RATE="1000", MOOSE_BURST="1000", MOOSE_TABLE_STARTS_PER_HOUR="100000"
            )
            proc = serve(server.url, data, port)
            url = f"ws://127.0.0.1:{port}/ws"
            redis = aioredis.Redis.from_url(server.url)
            store = Store(open_node(server.url, 8), Settings().buckets)
            try:
                async with aiohttp.ClientSession() as session:
                    game, _ = await template_game(session, url, args.moves, days=3)
                    await asyncio.sleep(0.5)  # a forced pass after the last move: played
                    keys = store.keys_of(game)
                    t = await read_template(redis, keys)
                    real = {
                        "game hash": await redis.memory_usage(keys.game, samples=0),
                        "events stream": await redis.memory_usage(keys.events, samples=0),
                    }
                    sock = await connect(session, url, "probe", "192.0.2.12")
                    seated = {n: sock.player for n in range(SEATED)}
                    mover = Mover(sock)
                    rows = [
                        await one_size(redis, store, t, n, args.rounds, mover, seated)
                        for n in args.sizes
                    ]
            finally:
                await store.redis.aclose()
                await redis.aclose()
                proc.terminate()
                proc.wait(20)
    return {"moves": args.moves, "template": real, "rows": rows, "real_games": mover.games}


def report(result: dict[str, Any]) -> None:
    """Print the table, and the p99 ratios of the largest size to the smallest."""
    rows = result["rows"]
    print(f"template: {result['moves']} moves, its keys {result['template']} B")
    head = "| waiting games | used_memory/game | hash | stream | sets (one player) |"
    print(head + " tick p50/p99 | my_games p50/p99 | games p50/p99 | move p50/p99 (ms) |")
    print("|" + " ---: |" * 9)
    for r in rows:
        k = r["key_bytes"]
        cells = [f"{r['waiting']:,}", f"{r['used_memory_per_game']:,} B"]
        cells += [f"{k['game hash']:,}", f"{k['events stream']:,}"]
        cells += [f"{k[SETS[0]]} + {k[SETS[1]]}"]
        cells += [f"{r[p]['p50']:.2f} / {r[p]['p99']:.2f}" for p in PROBES]
        print("| " + " | ".join(cells) + " |")
    most, least = max(r["waiting"] for r in rows), min(r["waiting"] for r in rows)
    big = [r for r in rows if r["waiting"] == most]
    small = [r for r in rows if r["waiting"] == least]
    for p in PROBES:
        ratios = ", ".join(f"{b[p]['p99'] / s[p]['p99']:.2f}" for b in big for s in small)
        p50 = statistics.median(b[p]["p50"] for b in big) / statistics.median(
            s[p]["p50"] for s in small
        )
        print(f"{p}: p99 at {most:,} / p99 at {least:,}: {ratios}; p50 medians: {p50:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,100000,1000")
    parser.add_argument("--moves", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--out")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    result = asyncio.run(main(args))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    report(result)
