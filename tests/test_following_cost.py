"""What a `following` answer costs Redis (social/following.py), counted with MONITOR
on the test's own Redis: one script call (lua/followed.lua) for up to 50
followed players, which runs at most three commands per player (their name,
presence and games; a game's seats are read once per instance, not per answer),
and nothing for a `following` asked again too soon (`rate_limited`) or by the
player's other socket meanwhile (the same answer)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as aioredis

from moose_server.settings import Settings
from moose_server.social.follows import Follows
from moose_server.social.presence import Presence
from moose_server.storage.keys import (
    followers_key,
    follows_key,
    player_games_key,
    presence_key,
    profile_key,
)

from helpers import open_store

FOLLOWED = [f"p_{n:010x}" for n in range(1, 21)]
GAME = "g_0123456789"  # a game every followed player sits in (long gone)


@contextlib.asynccontextmanager
async def monitored(redis_url: str) -> AsyncIterator[list[tuple[str, list[str]]]]:
    """Every command Redis runs inside the block, as (who sent it: "lua" for a script's
    commands, words), up to a marker sent at its end."""
    seen: list[tuple[str, list[str]]] = []
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
                seen.append((entry.get("client_type", ""), words))

        reader = asyncio.create_task(read())
        await ready.wait()
        try:
            yield seen
        finally:
            await marker_client.echo("end-of-block")
            await asyncio.wait_for(reader, 10)
            await marker_client.aclose()
    await monitor_client.aclose()


async def test_a_following_answer_reads_its_followed_players_in_one_script_call(
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
    sent = [w for who, w in seen if who != "lua" and any(p in " ".join(w) for p in named)]
    scripted = [w for who, w in seen if who == "lua" and any(p in " ".join(w) for p in named)]
    # One script call for the 20 (and EVAL after it where Redis lacked the script);
    # ann's two lists; the game's seats, once.
    assert sum(w[0] == "EVALSHA" for w in sent) == 1, sent
    assert len([w for w in sent if w[0] != "EVAL"]) <= 1 + 3, sent
    assert sum(GAME in " ".join(w) and "games" not in " ".join(w) for w in sent) <= 1
    # In the script: 20 names, presences and games.
    assert len(scripted) <= 3 * len(FOLLOWED), scripted


async def test_followed_players_are_read_alike_on_one_node_and_on_a_cluster(backend_url):
    # One script call for them all on one node; one per player (their keys are in
    # different slots) and the names from the profiles on a cluster.
    async with open_store(backend_url) as store:
        redis = store.redis
        presence = Presence(redis, "i_one", 60, lambda: [])
        follows = Follows(redis, store, Settings(redis_url=backend_url), presence)
        now = await store.now_ms()
        await presence.here([("p_ann", "ann")])
        await redis.hset(presence_key("p_dan"), {"i_dead": now - 1, "name": "dan"})  # lapsed
        await redis.sadd(player_games_key("p_ann"), "g_2", "g_1")
        await redis.hset(profile_key("p_ann"), {"name": "Ann"})
        status = await follows.status(["p_ann", "p_bob", "p_dan"])
        name = "" if follows.names_apart else "Ann"
        assert follows.names_apart == redis.cluster
        assert status == [(name, True, ["g_1", "g_2"]), ("", False, []), ("", False, [])]
        assert await follows.status([]) == []
