"""Redis memory of a waiting correspondence game: what each of many games costs while
nobody moves for days.

    python bench/bench_waiting_memory.py [--games 200] [--players 2] [--out FILE.json]

For each number of moves M it deals GAMES games of `days` 3 through `Games` on a
private Valkey, plays M moves of each (greedy bots sending the seats' moves, as
clients do), and leaves them waiting for the next move: then MEMORY USAGE of every
key of each game (hash, stream), and Redis' `used_memory` growth per game (which
also counts the deadline entry and the players' game sets).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "client"), str(ROOT / "server")]

from moose import bots, rules  # noqa: E402
from moose_server.play.games import Games  # noqa: E402
from moose_server.play.seats import Seat  # noqa: E402
from moose_server.settings import Settings  # noqa: E402
from moose_server.storage.connection import open_node  # noqa: E402
from moose_server.storage.embedded import EmbeddedRedis  # noqa: E402
from moose_server.storage.store import Store, connect  # noqa: E402

MOVES = (0, 10, 30)


async def waiting(games: Games, players: int, seed: int, moves: int) -> str:
    """A correspondence game after `moves` moves (fewer if it would end), left waiting."""
    ids = [f"p_{seed}_{k}" for k in range(players)]
    seats = [Seat(p, f"n{k}", None) for k, p in enumerate(ids)]
    game = await games.create(seats, seed=seed, days=3)
    bot = bots.make_bot("greedy", seed)
    for _ in range(moves):
        if game.auto_kind() is not None:  # a forced pass: the server plays it
            await asyncio.sleep(0.001)
        else:
            seat = rules.to_act(game.state)
            move = bot.choose(rules.view(game.state, seat), rules.legal_moves(game.state))
            if rules.apply(game.state, move).over:
                break
            await games.move(game.id, ids[seat], move, game.version, f"m{game.version}")
        game = await games.load(game.id)
    return game.id


async def one(url: str, n: int, players: int, moves: int) -> dict[str, Any]:
    client = connect(url, 8)
    store = Store(open_node(url, 8), 16)
    games = Games(store, Settings(redis_url=url))
    try:
        before = (await client.info("memory"))["used_memory"]
        ids = [await waiting(games, players, seed, moves) for seed in range(n)]
        after = (await client.info("memory"))["used_memory"]
        sizes = []
        for g in ids:
            held = [await client.memory_usage(k, samples=0) for k in store.keys_of(g).held()]
            sizes.append(sum(s or 0 for s in held))
        events = statistics.mean([(await store.load(g)).version for g in ids])
    finally:
        await games.close()
        await client.flushall()
        await client.aclose()
    return {
        "moves": moves,
        "events_per_game": round(events, 1),
        "game_keys_bytes": {"mean": round(statistics.mean(sizes)), "max": max(sizes)},
        "used_memory_per_game": round((after - before) / n),
    }


async def main(n: int, players: int) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp) / "redis") as r:
        for moves in MOVES:
            rows.append(await one(r.url, n, players, moves))
            print(rows[-1], file=sys.stderr)
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--out")
    args = parser.parse_args()
    rows = asyncio.run(main(args.games, args.players))
    if args.out:
        Path(args.out).write_text(json.dumps({"games": args.games, "rows": rows}, indent=1))
    print(json.dumps(rows, indent=1))
