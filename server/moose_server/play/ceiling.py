"""The storage ceiling: how many moves a second Redis alone takes, as the server uses it.

A bare redis-py asyncio client does per move exactly what the server does in
Redis: one HMGET of the game hash (and an HGET of its move ids, in the same round
trip) and one EVALSHA of the server's own commit script with a payload of real
size (a state snapshot where the server keeps one), one loop per concurrent game.
Each game's first commit lists its follower, as the instance that deals a game
for its sockets does (CommitCall.follow), so that its moves publish no wake-up,
as the server's do when every seat is on one instance.

It measures the server's storage from inside (its script, its keys, its
payloads), so it lives with the server. `moose loadtest` runs it beside its games
phase when this package is installed, and reports the server's moves a second
over it ("ours / storage ceiling" in BENCHMARKS.md). Alone:

    python -m moose_server.play.ceiling REDIS_URL GAMES WARMUP DURATION [TABLE]

prints one JSON object. Its keys are its own (keys.GameKeys.loadtest,
``moose:{lt}:...``): run it on a Redis the server does not use, or one where
those keys are free.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from collections import Counter
from typing import Any

from moose import bots, rules
from moose_server.play.streams import keeps_snapshot
from moose_server.storage import scripts
from moose_server.storage.codec import pack
from moose_server.storage.connection import open_bare
from moose_server.storage.failures import StorageError
from moose_server.storage.keys import LOADTEST_CHANNEL, GameKeys, move_field
from moose_server.storage.scripts import CommitCall

__all__ = ["GAME_MOVES", "storage_ceiling"]

GAME_MOVES = 52  # moves of an average 4-player game of greedy bots (measured)
POOL = 64  # the server's default redis_connections


def _sample(players: int) -> tuple[rules.State, list[dict[str, Any]]]:
    """A game of greedy bots a third of the way through, and the moves that led there."""
    return bots.play_game(
        [bots.make_bot("greedy", 7)] * players, seed=7, stop_after=GAME_MOVES // 3
    )


def _payload(players: int) -> tuple[bytes, bytes, bytes]:
    """Blobs the size of a real commit: game data, one move event, a state snapshot."""
    state, moves = _sample(players)
    data = {
        "state": state.to_dict(),
        "players": [f"p_{k:010x}" for k in range(players)],
        "names": [f"player {k}" for k in range(players)],
        "bots": [None] * players,
        "away": [False] * players,
        "misses": [0] * players,
        "moves": moves,
    }
    event = {"kind": "move", "seat": 0, "move": moves[-1], "auto": None}
    snapshot = {**state.to_dict(), "auto": False}
    return pack(data), pack(event), pack(snapshot)


async def storage_ceiling(
    url: str, games: int, warmup: float, duration: float, players: int = 4
) -> dict[str, Any]:
    """Moves per second of `games` loops doing HMGET + commit EVALSHA, like the server."""
    # The server's pool holds 64 connections; at least one per loop here, because
    # loops that issue their next command at once starve the pool's other waiters
    # (redis-py's BlockingConnectionPool is not FIFO), which left 136 of 200 loops
    # idle and measured 64 concurrent games instead of 200.
    redis, listener = open_bare(url, max(POOL, games))
    commit = scripts.register(redis, CommitCall)
    data, event, snapshot = _payload(players)
    start = time.monotonic()
    window = (start + warmup, start + warmup + duration)
    counts, lat = [0], []
    errors: Counter[str] = Counter()
    made: list[str] = []

    async def game_loop(i: int) -> None:
        for generation in itertools.count():
            gid = f"lt_{i}_{generation}"
            names = GameKeys.loadtest(gid)
            made.extend([names.game, names.events, names.moves])
            for version in range(GAME_MOVES):
                t0 = time.monotonic()
                if t0 >= window[1]:
                    return
                field = move_field(f"p_{i}", f"{generation}-{version}")
                try:
                    async with redis.pipeline(transaction=False) as pipe:
                        pipe.hmget(names.game, ["v", "data", "dl"])
                        pipe.hget(names.moves, field)
                        await pipe.execute()
                    # A snapshot where the server keeps one (streams.keeps_snapshot).
                    kept = snapshot if keeps_snapshot(version + 1) else None
                    call = CommitCall(
                        game=gid,
                        expected=version,
                        move_field=field,
                        data=data,
                        events=[(event, kept)],
                        deadline_ms=30_000,
                        channel=LOADTEST_CHANNEL,
                        own=LOADTEST_CHANNEL,
                        # As the server deals a game for its sockets: followed from its start.
                        follow=LOADTEST_CHANNEL if version == 0 else b"",
                    )
                    keys, args = call.build(names)
                    await commit(keys=keys, args=args)
                except StorageError as exc:  # the pool's wait timed out: count it, go on
                    errors[type(exc).__name__] += 1
                    continue
                if t0 >= window[0]:
                    counts[0] += 1
                    lat.append((time.monotonic() - t0) * 1000)

    async def drain() -> None:
        async with listener.pubsub() as ps:
            await ps.subscribe(LOADTEST_CHANNEL)
            async for _ in ps.listen():
                pass

    drainer = asyncio.create_task(drain())
    try:
        await asyncio.gather(*(game_loop(i) for i in range(games)))
    finally:
        drainer.cancel()
        await asyncio.gather(drainer, return_exceptions=True)
        for s in range(0, len(made), 500):
            await redis.delete(*made[s : s + 500])
        await redis.delete(GameKeys.loadtest("").deadlines)
        await redis.aclose()
        await listener.aclose()
    lat.sort()
    pct = {
        f"p{q}": lat[min(len(lat) - 1, int(len(lat) * q / 100))] if lat else None
        for q in (50, 95, 99)
    }
    return {
        "moves_per_second": counts[0] / duration,
        "latency_ms": pct,
        "errors": dict(errors),
        "bytes": {"data": len(data), "event": len(event), "state": len(snapshot)},
    }


def main(argv: list[str]) -> int:
    """``URL GAMES WARMUP DURATION [TABLE]``: print the ceiling as JSON."""
    url, games, warmup, duration = argv[0], int(argv[1]), float(argv[2]), float(argv[3])
    table = int(argv[4]) if len(argv) > 4 else 4
    print(json.dumps(asyncio.run(storage_ceiling(url, games, warmup, duration, table))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
