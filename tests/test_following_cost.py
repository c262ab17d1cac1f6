"""What a `following` answer costs Redis (social/following.py), counted with MONITOR
on the test's own Redis: at most three commands per followed player (their name,
presence and games; a game's seats are read once per instance, not per answer),
and nothing for a `following` asked again too soon (`rate_limited`) or by the
player's other socket meanwhile (the same answer)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as aioredis

from moose_server.storage.keys import (
    followers_key,
    follows_key,
    player_games_key,
    presence_key,
)

FOLLOWED = [f"p_{n:010x}" for n in range(1, 21)]
GAME = "g_0123456789"  # a game every followed player sits in (long gone)


@contextlib.asynccontextmanager
async def monitored(redis_url: str) -> AsyncIterator[list[list[str]]]:
    """Every command Redis runs inside the block, as words, up to a marker sent at its end."""
    seen: list[list[str]] = []
    monitor_client: Any = aioredis.Redis.from_url(redis_url)
    marker_client: Any = aioredis.Redis.from_url(redis_url)
    async with monitor_client.monitor() as monitor:
        await monitor.connection.read_response()  # MONITOR's OK: it watches from here
        ready = asyncio.Event()

        async def read() -> None:
            ready.set()
            async for entry in monitor.listen():
                words = entry["command"].split()
                if words[:2] == ["ECHO", "end-of-block"]:
                    return
                seen.append(words)

        reader = asyncio.create_task(read())
        await ready.wait()
        try:
            yield seen
        finally:
            await marker_client.echo("end-of-block")
            await asyncio.wait_for(reader, 10)
            await marker_client.aclose()
    await monitor_client.aclose()


async def test_a_following_answer_reads_each_followed_player_three_times_at_most(
    moose_server, redis_url, ws_client
):
    url = await moose_server(following_every=3600)
    ann = await ws_client(url, "ann", binary=False)
    redis: Any = aioredis.Redis.from_url(redis_url)
    try:
        seconds, _ = await redis.time()
        far = (int(seconds) + 3600) * 1000
        for player in FOLLOWED:
            await redis.hset(presence_key(player), mapping={"other": far, "name": player})
            await redis.sadd(player_games_key(player), GAME)
        await redis.hset(follows_key(ann.player), mapping={p: p for p in FOLLOWED})
    finally:
        await redis.aclose()
    page = await ws_client(url, None, binary=False)  # ann's second socket
    assert (await page.hello(token=ann.token))["player"] == ann.player
    async with monitored(redis_url) as seen:
        answer = await ann.request("following")
        again = await ann.request("following")
        shared = await page.request("following")  # as fresh: the same answer, not read again
    assert [(p["player"], p["online"], p["games"], p["private"]) for p in answer["players"]] == [
        (p, True, [], 1) for p in FOLLOWED
    ]
    assert (again["type"], again["code"]) == ("error", "rate_limited") and again["retry_after"] > 0
    assert {**shared, "id": answer["id"]} == answer
    # ann's own presence renewals may fall in the block: only her follow lists count.
    named = [*FOLLOWED, GAME, follows_key(ann.player), followers_key(ann.player)]
    naming = [w for w in seen if any(p in " ".join(w) for p in named)]
    # 20 names, presences and games; ann's two lists; the game's seats, once.
    assert len(naming) <= 3 * len(FOLLOWED) + 3, naming
    assert sum(GAME in " ".join(w) and "games" not in " ".join(w) for w in naming) <= 1
