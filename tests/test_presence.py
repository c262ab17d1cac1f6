"""Who is online (lobby/presence.py), the one record both challenges and follows read
(issue 25): each instance's word per player, taken back when the player leaves it,
worth nothing once it lapses (an instance that died), on a real Redis."""

from __future__ import annotations

from moose_server.lobby.presence import Presence
from moose_server.storage.keys import presence_key

from helpers import open_store


async def test_a_player_is_online_while_some_live_instance_has_their_socket(redis_url):
    async with open_store(redis_url) as store:
        one = Presence(store.redis, "i_one", 60, lambda: [])
        two = Presence(store.redis, "i_two", 60, lambda: [])
        await one.here([("p_ann", "ann"), ("p_bob", "bob")])
        await two.here([("p_bob", "bob")])
        players = ["p_ann", "p_bob", "p_cat"]
        assert await one.online_many(players) == [True, True, False]
        assert [await two.online(p) for p in players] == ["ann", "bob", None]
        await one.left("p_bob")  # bob still has a socket on the other instance
        await one.left("p_ann")
        assert await two.online_many(players) == [False, True, False]
        assert await one.online("p_ann") is None
        assert await one.online_many([]) == []


async def test_the_word_of_an_instance_that_died_lapses(redis_url):
    async with open_store(redis_url) as store:
        live = Presence(store.redis, "i_live", 60, lambda: [])
        now = await store.now_ms()
        # i_dead said so once and stopped renewing: its word lapsed a moment ago.
        await store.redis.hset(presence_key("p_dan"), mapping={"i_dead": now - 1, "name": "dan"})
        assert await live.online_many(["p_dan"]) == [False]
        assert await live.online("p_dan") is None
        await live.here([("p_dan", "dan")])
        assert await live.online_many(["p_dan"]) == [True]
