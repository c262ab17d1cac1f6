"""Who is online (social/presence.py), the one record both challenges and follows read:
each instance's word per player, taken back when the player leaves it,
worth nothing once it lapses (an instance that died), on a real Redis."""

from __future__ import annotations

import asyncio

from moose_server.social.presence import Presence
from moose_server.storage.keys import presence_key

from helpers import open_store, stopped


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
        await store.redis.hset(presence_key("p_dan"), {"i_dead": now - 1, "name": "dan"})
        assert await live.online_many(["p_dan"]) == [False]
        assert await live.online("p_dan") is None
        await live.here([("p_dan", "dan")])
        assert await live.online_many(["p_dan"]) == [True]


class _Counted(Presence):
    """A Presence that keeps each renewal it writes (to the real Redis)."""

    sizes: list[int]
    renewed: set[str]

    async def here(self, players: list[tuple[str, str]]) -> None:
        self.sizes.append(len(players))
        self.renewed.update(player for player, _ in players)
        await super().here(players)


async def test_a_lobby_of_one_is_renewed_once_a_cycle_not_every_tick(redis_url):
    async with open_store(redis_url) as store:
        # ttl 1.2 s: a cycle of 0.4 s, a tick of 0.1 s.
        presence = _Counted(store.redis, "i_one", 1.2, lambda: [("p_one", "one")])
        presence.sizes, presence.renewed = [], set()
        started = asyncio.get_running_loop().time()
        task = asyncio.create_task(presence.run())
        try:
            async with asyncio.timeout(20):
                while len(presence.sizes) < 3:
                    await asyncio.sleep(0.05)
        finally:
            await stopped(task)
        took = asyncio.get_running_loop().time() - started
        assert await presence.online("p_one") == "one"
    # Three renewals take three cycles at least (a busy machine only stretches them).
    assert took >= 2 * 0.4, took
    assert presence.sizes == [1, 1, 1]


async def test_renewals_come_a_slice_at_a_time_and_skip_players_who_left(redis_url):
    players = [(f"p_{k:02d}", f"n{k}") for k in range(40)]
    gone = {"p_07", "p_33"}  # their last socket closed after the cycle's list was taken
    async with open_store(redis_url) as store:
        # ttl 1.2 s: every player renewed each 0.4 s, a slice each 0.1 s: 10 a slice.
        presence = _Counted(
            store.redis,
            "i_slices",
            1.2,
            lambda: players,
            still_here=lambda player: player not in gone,
        )
        presence.sizes, presence.renewed = [], set()
        task = asyncio.create_task(presence.run())
        try:
            async with asyncio.timeout(20):
                while len([s for s in presence.sizes if s]) < 4:
                    await asyncio.sleep(0.05)
        finally:
            await stopped(task)
        # Which renewals are still live depends on how busy the machine was; what
        # was written does not: every player here, and none of those who left.
        live = await presence.online_many([p for p, _ in players])
    assert max(presence.sizes) <= 10  # never the whole lobby in one pipeline
    assert presence.renewed == {p for p, _ in players} - gone
    assert not any(alive for (p, _), alive in zip(players, live, strict=True) if p in gone)
