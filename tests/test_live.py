"""The live public games list (`games` -> `game_list`) and its index in Redis."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis

from moose_server.storage import store as store_module
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import LIVE_GAMES_KEY, LIVE_INFO_KEY, ONLINE_COUNTS_KEY
from moose_server.storage.store import Store

Message = dict[str, Any]


async def next_list(client: Any, *, timeout: float = 15.0, until: Any = None) -> Message:
    """The next `game_list` update (no id) that satisfies `until` (if given)."""
    async with asyncio.timeout(timeout):
        while True:
            listing = await client.expect(type="game_list", timeout=timeout)
            if "id" not in listing and (until is None or until(listing)):
                return listing


def listed(game: str) -> Any:
    """A test of a `game_list`: does it hold `game`?"""
    return lambda listing: any(g["game"] == game for g in listing["games"])


async def test_a_queue_game_is_listed_to_followers_until_it_ends(
    moose_server, ws_client, redis_url
):
    # Alone in the queue, alice gets a bot; she never moves, so time runs out
    # twice, her seat goes away and the bot ends the game for her.
    url = await moose_server(queue_bots_after=0.1, turn_time=0.3, live_interval=0.1)
    # The same turn time: whichever instance plays the bot's move sets alice's deadline.
    other = await moose_server(turn_time=0.3, live_interval=0.1)  # the same list everywhere
    fan = await ws_client(other, "fan", binary=False)
    first = await fan.request("games", follow=True)
    assert first["games"] == [] and first["online"] >= 0 and first["waiting"] == 0
    alice = await ws_client(url, "alice")
    await alice.request("queue", min_players=2, max_players=2)
    match = await alice.expect(type="match")
    game, seat = match["game"], match["seat"]
    assert match["bots"][seat] is False and match["bots"][1 - seat] is True
    listing = await next_list(fan, until=listed(game))
    (entry,) = listing["games"]
    assert entry["players"] == 2 and entry["names"] == match["names"]
    assert entry["bots"] == match["bots"] and entry["ratings"] == match["ratings"]
    assert entry["started"] <= listing["server_time"]
    await alice.expect(
        type="event", game=game, timeout=60, **{"event": {"kind": "away", "seat": seat}}
    )
    await next_list(fan, timeout=60, until=lambda listing: not listed(game)(listing))
    async with aioredis.Redis.from_url(redis_url) as r:
        assert await r.zcard(LIVE_GAMES_KEY) == 0 and await r.hlen(LIVE_INFO_KEY) == 0


async def test_private_table_games_are_never_listed(moose_server, ws_client, redis_url):
    url = await moose_server(live_interval=0.1)
    host = await ws_client(url, "hana")
    table = await host.request("create_table", players=2)
    await host.request("add_bot", code=table["code"], bot="greedy")
    await host.request("start_table", code=table["code"])
    match = await host.expect(type="match")
    assert match["bots"] == [False, True]
    # A queue game dealt after it is listed: the private one, dealt first, would be too.
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    for player in (ann, bob):
        await player.request("queue", min_players=2, max_players=2)
    public = (await ann.expect(type="match"))["game"]
    await host.request("games", follow=True)
    listing = await next_list(host, until=listed(public))
    assert [g["game"] for g in listing["games"]] == [public]
    async with aioredis.Redis.from_url(redis_url) as r:
        assert await r.zcard(LIVE_GAMES_KEY) == 1


async def test_online_counts_the_players_of_every_instance(moose_server, ws_client):
    urls = [await moose_server(live_interval=0.1), await moose_server(live_interval=0.1)]
    a, _b, c = (
        await ws_client(urls[0], "a"),
        await ws_client(urls[1], "b"),
        await ws_client(urls[1], "c"),
    )
    await c.request("queue", min_players=4, max_players=4)
    await a.request("games", follow=True)
    listing = await next_list(a, until=lambda m: m["online"] == 3 and m["waiting"] == 1)
    assert listing["games"] == []
    await c.request("leave_queue")
    await next_list(a, until=lambda m: m["waiting"] == 0)  # followers hear of every change


async def test_a_follower_answered_with_an_older_list_hears_the_newer_one(
    moose_server, ws_client, redis_url
):
    # A first follower is sent "1 online" and leaves. A new one follows and is
    # answered from what the last tick counted, before its hello: "0 online". The
    # tick that counts it reads "1 online", what the followers were last sent:
    # it must still reach the new follower.
    url = await moose_server(live_interval=0.3)
    first = await ws_client(url, "first")
    await first.request("games", follow=True)
    await next_list(first, until=lambda m: m["online"] == 1)
    await first.close()
    # A tick counts nobody (in Redis), with no follower to send it to.
    async with aioredis.Redis.from_url(redis_url) as r, asyncio.timeout(10):
        while sum(int(n) for n in (await r.hgetall(ONLINE_COUNTS_KEY)).values()):
            await asyncio.sleep(0.05)
    fan = await ws_client(url, "fan")
    answer = await fan.request("games", follow=True)
    if answer["online"] == 1:
        pytest.skip("a tick counted the new player before its answer was read")
    listing = await next_list(fan, timeout=5, until=lambda m: m["online"] == 1)
    assert listing["online"] == 1


async def test_a_bad_follow_is_refused_and_the_list_still_answers(moose_server, ws_client):
    url = await moose_server(live_interval=0.1)
    client = await ws_client(url, "ann", binary=False)
    answer = await client.request("games", follow="yes")
    assert answer["type"] == "error" and answer["code"] == "bad_message"
    assert (await client.request("games", follow=False))["type"] == "game_list"
    # Not following: no update comes, though a follower hears of a change.
    fan = await ws_client(url, "fan")
    await fan.request("games", follow=True)
    await (await ws_client(url, "cat")).request("queue", min_players=4, max_players=4)
    await next_list(fan, until=lambda m: m["waiting"] == 1)
    assert [m for m in client.received if m["type"] == "game_list" and "id" not in m] == []


@pytest.fixture
async def store(redis_url: str) -> Any:
    """A Store over the test Redis."""
    client = aioredis.Redis.from_url(redis_url)
    gw = await open_redis(redis_url, 8)
    yield Store(gw, 16)
    await client.aclose()
    await gw.aclose()


async def test_the_index_keeps_the_newest_games_only(store, monkeypatch):
    monkeypatch.setattr(store_module, "LIVE_KEPT", 3)
    for i in range(5):
        await store.live_add(f"g_{i}", {"players": 2, "names": ["a", "b"], "bots": [None, None]})
        await store.redis.zadd(store.keys_of(f"g_{i}").deadlines, {f"g_{i}": 1})
    assert (
        await store.redis.zcard(LIVE_GAMES_KEY) == 3 and await store.redis.hlen(LIVE_INFO_KEY) == 3
    )
    assert {g["game"] for g in await store.live_games(10)} == {"g_2", "g_3", "g_4"}


async def test_a_game_listed_at_its_start_commits_time_reads_no_clock(store):
    # Games.create(listed=True) gives the first commit's time: no TIME of its own.
    client = store.redis.client
    summary = {"players": 2, "names": ["a", "b"], "bots": [None, None]}
    before = int((await client.info("commandstats")).get("cmdstat_time", {}).get("calls", 0))
    assert await store.live_add("g_at", summary, 1_700_000_000_123) == 1_700_000_000_123
    after = int((await client.info("commandstats")).get("cmdstat_time", {}).get("calls", 0))
    assert after == before and await client.zscore(LIVE_GAMES_KEY, "g_at") == 1_700_000_000_123
    assert await store.live_add("g_now", summary) > 1_700_000_000_123  # Redis' clock


async def test_a_listed_game_without_a_deadline_has_ended_and_leaves_the_index(store):
    await store.live_add("g_gone", {"players": 2, "names": ["a", "b"], "bots": [None, None]})
    await store.live_add("g_live", {"players": 2, "names": ["c", "d"], "bots": [None, "greedy"]})
    await store.redis.zadd(store.keys_of("g_live").deadlines, {"g_live": 1})
    games = await store.live_games(10)
    assert [g["game"] for g in games] == ["g_live"] and games[0]["bots"] == [None, "greedy"]
    assert await store.redis.client.zrange(LIVE_GAMES_KEY, 0, -1) == [b"g_live"]
    assert await store.redis.client.hkeys(LIVE_INFO_KEY) == [b"g_live"]
