"""The deadline loop: a due deadline fires once, whoever claims it; a dead claimer only delays."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moose import rules
from moose_server.games import Games
from moose_server.settings import Settings
from moose_server.store import Store, connect
from moose_server.timers import Timers

SEATS = [("p_a", "ann", None), ("p_b", "bob", None)]


@pytest.fixture
async def parts(redis_url: str) -> Any:
    """(store, games that deal with an instant deadline, two timers with hour-long turns)."""
    client = connect(redis_url, 8)
    store = Store(client, 16)
    quick = Games(store, Settings(redis_url=redis_url, turn_time=0.001))
    slow = Settings(redis_url=redis_url, turn_time=3600, lease=60)
    timers = [Timers(store, Games(store, slow), slow) for _ in range(2)]
    yield store, quick, timers
    for part in (quick, *(t.games for t in timers)):
        await part.close()
    await client.aclose()


async def wait_version(store: Store, game: str, above: int, poll: Any) -> int:
    """Run `poll()` until the game's version is above `above`; the new version."""
    async with asyncio.timeout(20):
        while (version := (await store.load(game)).version) <= above:
            await poll()
    return version


async def test_a_due_deadline_fires_once_with_two_instances_polling(parts):
    store, quick, (t1, t2) = parts
    game = await quick.create(SEATS)

    async def both() -> None:
        await asyncio.gather(t1.tick(), t2.tick())

    assert await wait_version(store, game.id, 1, both) == 2
    for _ in range(5):
        await both()
    loaded = await store.load(game.id)
    assert loaded.version == 2 and len(loaded.data["moves"]) == 1
    event = (await store.events(game.id, 1))[0].event
    assert event["auto"] == "timeout" and event["seat"] == game.state.turn


async def test_a_claimer_that_dies_only_delays_the_timeout(parts):
    store, quick, (t1, _) = parts
    game = await quick.create(SEATS)
    async with asyncio.timeout(20):
        while not await store.claim(50):  # claimed by an instance that then dies
            pass
    assert await wait_version(store, game.id, 1, t1.tick) == 2


async def test_a_deadline_claimed_before_a_move_does_not_fire(parts):
    store, quick, (t1, _) = parts
    game = await quick.create(SEATS)
    async with asyncio.timeout(20):
        while not (claimed := await store.claim(60_000)):
            pass
    owner = SEATS[game.state.turn][0]
    await t1.games.move(game.id, owner, rules.legal_moves(game.state)[0])
    await t1.games.timeout(game.id, claimed[0][1])  # the stale claim is applied late
    loaded = await store.load(game.id)
    assert loaded.version == 2 and loaded.data["misses"] == [0, 0]
