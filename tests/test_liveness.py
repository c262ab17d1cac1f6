"""Instance liveness: heartbeats, and the queue tickets of dead instances dropped.

Each test runs on one redis-server and on a Redis Cluster (`backend_url`).
Instances are `Liveness` objects with their own instance ids; one that "dies"
simply stops beating. Only an instance a test lets die has a short heartbeat;
the others' last a minute, so that a busy machine cannot make them lapse, and
the tests wait for a death instead of sleeping a fixed time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from moose_server.matchmaking.matchmaker import MatchError, Matchmaker, MatchOptions
from moose_server.ops.liveness import Liveness
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import instance_key
from moose_server.storage.store import Store

from helpers import Clock, until

SHORT = 0.3  # the heartbeat TTL of an instance that dies in the test
LONG = 60.0  # the TTL of every other instance: they stay alive whatever the load


@pytest.fixture
async def redis(backend_url: str) -> AsyncIterator[Any]:
    backend = await open_redis(backend_url, 16)
    yield backend
    await backend.aclose()


def instance(
    redis: Any, name: str, ttl: float = LONG, **kwargs: Any
) -> tuple[Liveness, Matchmaker]:
    """An instance's liveness and matchmaker (tickets taken through it carry its id)."""
    settings = Settings(instance_id=name, instance_ttl=ttl)
    mm = Matchmaker(redis, MatchOptions(match_wait=60, instance=name))
    return Liveness(Store(redis, 16), mm, settings, **kwargs), mm


async def beaten(redis: Any, *names: str, ttl: float = LONG) -> list[tuple[Liveness, Matchmaker]]:
    """`instance` for each name, each having beaten once."""
    made = [instance(redis, name, ttl) for name in names]
    for liveness, _ in made:
        await liveness.beat()
    return made


async def test_tickets_of_an_instance_without_heartbeat_are_dropped(redis):
    (live, mm_live), (_, mm_other) = await beaten(redis, "i_live", "i_other")
    [(_, mm_gone)] = await beaten(redis, "i_gone", ttl=SHORT)  # and then it stops beating
    await mm_live.enqueue("p1", "ann", 2, 3)
    await mm_gone.enqueue("p2", "bob", 4, 5)
    await mm_gone.enqueue("p3", "cid", 6, 6)
    await mm_other.enqueue("p4", "dan", 2, 2)
    assert await mm_live.ticket_instances() == {"i_live": 1, "i_gone": 2, "i_other": 1}
    assert await until(live.reap) == ["i_gone"]  # not i_other, whose heartbeat holds
    assert await mm_live.ticket_instances() == {"i_live": 1, "i_other": 1}
    sizes = await mm_live.queue_sizes()
    assert sizes["3"] == sizes["2"] == 1 and sizes["5"] == sizes["6"] == 0
    assert not await mm_live.leave("p2")  # gone from the queue
    assert await mm_live.leave("p1")


async def test_an_instance_taken_for_dead_asks_its_sockets_to_reconnect(redis):
    told: list[int] = []
    [(live, _)] = await beaten(redis, "i_live")
    zombie, mm_zombie = instance(redis, "i_zombie", SHORT, on_presumed_dead=lambda: told.append(1))
    await zombie.beat()
    await mm_zombie.enqueue("p1", "ann", 2, 2)
    # The zombie is cut off from Redis for longer than its TTL.
    assert await until(live.reap) == ["i_zombie"]
    await zombie.beat()  # back: its players' tickets are gone, so they must queue again
    assert told == [1]
    await zombie.beat()
    assert told == [1]  # told once


async def test_after_its_own_heartbeat_lapsed_an_instance_waits_before_judging(redis):
    clock = Clock()
    one, _ = instance(redis, "i_one", clock=clock)
    [(two, mm_two)] = await beaten(redis, "i_two")
    await one.beat()
    await mm_two.enqueue("p1", "ann", 2, 2)
    # Redis was away for longer than the TTL: every heartbeat lapsed, as a restart
    # of a Redis that keeps its data (the tickets) would leave them.
    for name in ("i_one", "i_two"):  # one at a time: on a cluster they may live apart
        await redis.delete(instance_key(name))
    await one.beat()
    assert await one.reap() == []  # i_two may be coming back too: not judged yet
    await two.beat()
    clock.advance(LONG)  # a TTL later, `one` judges again
    assert await one.reap() == []  # it did come back: its ticket stays
    assert await mm_two.ticket_instances() == {"i_two": 1}


async def test_tickets_that_leave_or_are_seated_are_no_longer_counted(redis):
    _, mm = instance(redis, "i_a")
    for player in ("p1", "p2", "p3"):
        await mm.enqueue(player, player, 2, 2)
    assert await mm.ticket_instances() == {"i_a": 3}
    assert len(await mm.form_tables()) == 1
    await mm.leave("p3")
    assert await mm.ticket_instances() == {}


async def test_a_player_back_on_another_instance_keeps_their_ticket(redis):
    [(live, mm_live)] = await beaten(redis, "i_live")
    [(_, mm_gone)] = await beaten(redis, "i_gone", ttl=SHORT)
    await mm_gone.enqueue("p1", "ann", 2, 3)
    await mm_gone.enqueue("p2", "bob", 4, 4)
    # i_gone dies; ann's client reconnects to i_live and queues again.
    with pytest.raises(MatchError) as refused:
        await mm_live.enqueue("p1", "ann", 2, 3)
    assert refused.value.code == "already_queued"  # the same ticket, same place
    assert await mm_live.ticket_instances() == {"i_live": 1, "i_gone": 1}
    assert await until(live.reap) == ["i_gone"]
    assert await mm_live.leave("p1")  # still queued: i_live holds the ticket now
    assert not await mm_live.leave("p2")  # bob never came back
