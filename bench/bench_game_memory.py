"""Redis memory per game, and what reading a game's events back costs, by snapshot spacing.

    python bench/bench_game_memory.py [--games 20] [--players 4] [--out FILE.json]

For each spacing K (a full state snapshot in every K-th stream entry; 1 is how
games were stored before snapshots were spaced) it plays GAMES games on a private
redis-server through `Games` (every seat a greedy bot sending its moves with a
move id, as a client does), then measures with MEMORY USAGE every key of each
game: at its end (a running game at its largest) and after its grace (what a
finished game keeps for `game_ttl`). It then times `stream.read_events` for
one new event (a wake-up from another instance) and for the whole game (a late
`sync` from the start), in CPU time of this process, best of 5 passes over the
games. The "before" row also stores the game's data uncompressed and keeps its
stream and move ids: the server before it spaced snapshots, rebuilt here for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "client"), str(ROOT / "server")]

from moose import bots, rules  # noqa: E402
from moose_server.play import steps as steps_module  # noqa: E402
from moose_server.play import streams as stream  # noqa: E402
from moose_server.play.games import Games  # noqa: E402
from moose_server.play.seats import Seat  # noqa: E402
from moose_server.settings import Settings  # noqa: E402
from moose_server.storage.connection import open_node  # noqa: E402
from moose_server.storage.embedded import EmbeddedRedis  # noqa: E402
from moose_server.storage.store import Store, connect  # noqa: E402

SPACINGS = (1, 4, 8, 16)
GRACE = 20.0  # seconds: longer than playing and measuring one game here


async def play(games: Games, players: int, seed: int) -> str:
    """One game, every seat a greedy bot moving with a move id; its id once over."""
    ids = [f"p_{seed}_{k}" for k in range(players)]
    game = await games.create([Seat(p, f"n{k}", None) for k, p in enumerate(ids)], seed=seed)
    bot = bots.make_bot("greedy", seed)
    while not game.state.over:
        if game.auto_kind() is not None:  # a forced pass: the server plays it
            await asyncio.sleep(0.001)
        else:
            seat = rules.to_act(game.state)
            move = bot.choose(rules.view(game.state, seat), rules.legal_moves(game.state))
            await games.move(game.id, ids[seat], move, game.version, f"m{game.version}")
        game = await games.load(game.id)
    return game.id


async def memory(store: Store, game: str) -> int:
    sizes = [
        await store.redis.client.memory_usage(k, samples=0) for k in store.keys_of(game).held()
    ]
    return sum(s or 0 for s in sizes)


async def read_cost(store: Store, game: str) -> tuple[int, float, float]:
    """Events of the game, and CPU seconds of read_events: one new event, the whole game."""
    version = len(await stream.read_events(store, game))
    best_one = best_all = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        for since in range(version - 8, version):  # the last 8 events, one read each
            await stream.read_events(store, game, since)
        best_one = min(best_one, (time.process_time() - t0) / 8)
        t0 = time.process_time()
        await stream.read_events(store, game)
        best_all = min(best_all, time.process_time() - t0)
    return version, best_one, best_all


async def one(url: str, spacing: int, n: int, players: int, before: bool) -> dict[str, Any]:
    stream.SNAPSHOT_EVERY = 1 if before else spacing
    client = connect(url, 8)
    store = Store(open_node(url, 8), 16)
    grace = 3600 if before else GRACE
    games = Games(store, Settings(redis_url=url, turn_time=3600, game_grace=grace))
    original = steps_module.pack_compressed
    if before:  # the data as it was stored: plain msgpack
        steps_module.pack_compressed = steps_module.pack  # type: ignore[assignment]
    at_end, reads, ids = [], [], []
    try:
        for seed in range(n):  # each measured at once, well inside its grace
            ids.append(await play(games, players, seed))
            at_end.append(await memory(store, ids[-1]))
            reads.append(await read_cost(store, ids[-1]))
        if not before:
            await asyncio.sleep(grace + 0.5)
        after = [await memory(store, g) for g in ids]
    finally:
        steps_module.pack_compressed = original
        await games.close()
        await client.flushall()
        await client.aclose()
    return {
        "snapshot_every": "1, stored as before snapshots were spaced" if before else spacing,
        "events_per_game": round(statistics.mean(r[0] for r in reads), 1),
        "bytes_at_end": {"mean": round(statistics.mean(at_end)), "max": max(at_end)},
        "bytes_after_grace": {"mean": round(statistics.mean(after)), "max": max(after)},
        "read_one_event_us": round(1e6 * statistics.median(r[1] for r in reads)),
        "read_whole_game_us": round(1e6 * statistics.median(r[2] for r in reads)),
    }


async def main(n: int, players: int) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp) / "redis") as r:
        rows.append(await one(r.url, 1, n, players, before=True))
        for spacing in SPACINGS:
            rows.append(await one(r.url, spacing, n, players, before=False))
            print(rows[-1], file=sys.stderr)
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--out")
    args = parser.parse_args()
    rows = asyncio.run(main(args.games, args.players))
    report = {"games": args.games, "players": args.players, "rows": rows}
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    print(json.dumps(rows, indent=1))
