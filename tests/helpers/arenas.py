"""Arena tournaments in tests: `moose serve` processes with short
turns and quick seating, and arenas created straight in the test's Redis."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from moose import ConnectionLost
from moose.client import Client
from moose_server.arenas.runner import new_arena
from moose_server.arenas.store import ArenaStore
from moose_server.storage.connection import open_redis

from helpers.servers import ServeProcess

FLAGS = (
    "--turn-time",
    "0.5",
    "--answer-time",
    "0.5",
    "--poll-interval",
    "0.05",
    "--drain-grace",
    "1",
)
ENV = {
    "MOOSE_LEASE": "1",
    "MOOSE_AUTO_DELAY": "0.3",
    "MOOSE_INSTANCE_TTL": "3",
    "MOOSE_ARENA_INTERVAL": "0.1",
    "MOOSE_RATE_SWEEP_AFTER": "1",
    "MOOSE_LIVE_INTERVAL": "0.2",
    "MOOSE_ARENAS": "people:hourly:20m:2-3",
}


def arena_servers(
    moose_serve: Callable[..., ServeProcess], redis_url: str, count: int
) -> list[ServeProcess]:
    """`count` instances over `redis_url`, with a recurring arena in their settings."""
    procs = [
        moose_serve(
            "--redis",
            redis_url,
            *FLAGS,
            "--instance-id",
            f"i_{n}",
            wait=False,
            env=ENV,
            log=f"serve{n}.log",
        )
        for n in range(count)
    ]
    return [p.wait_ready() for p in procs]


async def create_arena(
    redis_url: str, ident: str, minutes: float, who: str = "bots", start_in: float = 0
) -> None:
    """Create a rated arena of 2-4 seats, starting now or `start_in` seconds later."""
    client = await open_redis(redis_url, 4)
    try:
        seconds, _ = await client.time()
        start = int((seconds + start_in) * 1000) if start_in else 0
        call = new_arena("Test", who, minutes, (2, 4), rated=True, arena_id=ident, start_ms=start)
        assert await ArenaStore(client).create(call)
    finally:
        await client.aclose()


def bots_play(url: str, arena: str, count: int) -> threading.Thread:
    """`count` bots play the arena in a thread of their own until it is over, or until
    the server is gone (a test that failed before the arena ended stops its server:
    the bots then stop too, rather than raise in their thread during a later test)."""

    async def main() -> None:
        clients = [Client(url, name=f"webbot{i}", bot=True) for i in range(count)]
        for client in clients:
            await client.open()
        try:
            await asyncio.gather(
                *(c.run_arena_bot("greedy", arena, max_players=2) for c in clients)
            )
        except ConnectionLost:
            pass
        finally:
            for client in clients:
                await client.close()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    return thread
