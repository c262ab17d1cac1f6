"""A turn whose player's instance died is spared once: the deadline loop
(play/timers.py) moves it `outage_grace` on instead of playing it, when presence
(social/presence.py) shows the player live only through instances whose
heartbeat is gone or stale; on a real Redis."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moose import rules
from moose_server.play.games import Games
from moose_server.play.seats import Seat
from moose_server.play.timers import Timers
from moose_server.settings import Settings
from moose_server.social.presence import Presence
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import GameKeys, presence_key
from moose_server.storage.store import Store

SEATS = [Seat("p_a", "ann", None), Seat("p_b", "bob", None)]
GRACE = 0.2  # seconds: the outage grace of these tests


@pytest.fixture
async def parts(redis_url: str) -> Any:
    """(store, games dealing with an instant deadline, two timers that spare, presence)."""
    gw = await open_redis(redis_url, 8)
    store = Store(gw, 16)
    quick = Games(store, Settings(redis_url=redis_url, turn_time=0.001))
    slow = Settings(redis_url=redis_url, turn_time=3600, lease=60, outage_grace=GRACE)
    presence = Presence(store.redis, "i_here", 60, lambda: [], instance_ttl=10)
    timers = [Timers(store, Games(store, slow), slow, stranded=presence) for _ in range(2)]
    yield store, quick, timers, presence
    for part in (quick, *(t.games for t in timers)):
        await part.close()
    await gw.aclose()


async def turn_of(quick: Games) -> tuple[str, str]:
    """A new game whose deadline is due: (its id, the player to act)."""
    game = await quick.create(SEATS)
    player = game.players[rules.to_act(game.state)]
    assert player is not None
    return game.id, player


async def due(store: Store, game: str) -> None:
    """Wait until the game's deadline has passed on Redis' clock."""
    async with asyncio.timeout(5):
        while (await store.load(game)).deadline > await store.now_ms():
            await asyncio.sleep(0.02)


async def polls(timers: list[Timers]) -> None:
    """One poll of each instance at once."""
    await asyncio.gather(*(t.tick() for t in timers))


async def test_the_turn_of_a_player_on_a_dead_instance_is_spared_once(parts):
    store, quick, timers, _ = parts
    game, player = await turn_of(quick)
    # Their only word is that of i_dead, which has no heartbeat (killed, lapsed).
    await Presence(store.redis, "i_dead", 60, lambda: []).here([(player, "x")])
    await due(store, game)
    before = await store.load(game)
    for _ in range(3):  # both instances claim: the turn is spared, not played
        await polls(timers)
    after = await store.load(game)
    assert after.version == before.version == 1
    assert after.deadline > before.deadline
    spared = await store.redis.hget(GameKeys.of(game, 16).game, "spared")
    assert spared == b"1"
    await due(store, game)  # the second deadline of the same turn is played
    async with asyncio.timeout(5):
        while (await store.load(game)).version == 1:
            await polls(timers)
    event = (await store.events(game, 1))[0].event
    assert event["auto"] == "timeout"


async def test_a_stale_heartbeat_counts_as_a_dead_instance(parts):
    store, quick, timers, _ = parts
    game, player = await turn_of(quick)
    await Presence(store.redis, "i_stale", 60, lambda: []).here([(player, "x")])
    await store.heartbeat("i_stale", 3000)  # 3 s left of 10: it missed beats
    await due(store, game)
    await polls(timers)
    assert (await store.load(game)).version == 1


async def test_a_player_on_a_healthy_instance_is_played_at_once(parts):
    store, quick, timers, presence = parts
    game, player = await turn_of(quick)
    await Presence(store.redis, "i_dead", 60, lambda: []).here([(player, "x")])
    await presence.here([(player, "x")])  # reconnected to i_here, which beats
    await store.heartbeat("i_here", 10_000)
    await due(store, game)
    await polls(timers)
    assert (await store.load(game)).version == 2


async def test_a_player_with_no_presence_is_played_at_once(parts):
    store, quick, timers, presence = parts
    game, player = await turn_of(quick)
    assert not await presence.stranded(player)
    await due(store, game)
    await polls(timers)
    assert (await store.load(game)).version == 2


async def test_an_away_seat_is_not_spared_though_its_player_is_stranded(parts):
    store, quick, timers, presence = parts
    game, player = await turn_of(quick)
    await Presence(store.redis, "i_dead", 60, lambda: []).here([(player, "x")])
    assert await presence.stranded(player)
    loaded = await timers[0].games.load(game)
    away = loaded.away.copy()
    away[loaded.seat_of(player)] = True
    assert not await timers[0]._spare(loaded.but(away=away))  # the bot plays an away seat
    assert await timers[0]._spare(loaded)  # a person's seat: spared
    assert not await timers[1]._spare(loaded)  # once a turn, whichever instance


async def test_stranded_means_live_words_only_from_instances_without_a_fresh_heartbeat(parts):
    store, _, _, presence = parts
    await store.heartbeat("i_ok", 10_000)
    await store.mark_dead("i_marked", 3_600_000)  # reaped: "dead", with a long ttl
    for instance, players in {
        "i_gone": ["p_1", "p_2"],
        "i_marked": ["p_1"],
        "i_ok": ["p_2"],
    }.items():
        await Presence(store.redis, instance, 60, lambda: []).here([(p, "x") for p in players])
    now = await store.now_ms()
    await store.redis.hset(presence_key("p_3"), {"i_gone": now + 60_000, "i_ok": now - 1})
    assert await presence.stranded("p_1")  # gone and marked dead
    assert not await presence.stranded("p_2")  # reconnected to a healthy one
    assert await presence.stranded("p_3")  # the healthy one's word lapsed: it left
    assert not await presence.stranded("p_4")  # no word at all: the page was closed
