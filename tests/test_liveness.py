"""Instance liveness: heartbeats, and the queue tickets of dead instances dropped.

Each test runs on one redis-server and on a Redis Cluster (`backend_url`).
Instances are `Liveness` objects with their own instance ids; one that "dies"
simply stops beating.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from moose_server.connections import open_redis
from moose_server.liveness import Liveness
from moose_server.matchmaking import MatchError, Matchmaker
from moose_server.settings import Settings
from moose_server.store import Store

TTL = 0.3


@pytest.fixture
async def redis(backend_url: str) -> AsyncIterator[Any]:
    backend = await open_redis(backend_url, 16)
    yield backend.redis
    await backend.aclose()


async def beating(liveness: Liveness, seconds: float) -> None:
    """Let `seconds` pass while `liveness` beats as its loop would."""
    for _ in range(round(seconds / (TTL / 3))):
        await liveness.beat()
        await asyncio.sleep(TTL / 3)
    await liveness.beat()


def instance(redis: Any, name: str, **kwargs: Any) -> tuple[Liveness, Matchmaker]:
    """An instance's liveness and matchmaker (tickets taken through it carry its id)."""
    settings = Settings(instance_id=name, instance_ttl=TTL)
    mm = Matchmaker(redis, match_wait=60, instance=name)
    return Liveness(Store(redis, 16), mm, settings, **kwargs), mm


async def beaten(redis: Any, *names: str) -> list[tuple[Liveness, Matchmaker]]:
    """`instance` for each name, each having beaten once."""
    made = [instance(redis, name) for name in names]
    for liveness, _ in made:
        await liveness.beat()
    return made


async def test_tickets_of_an_instance_without_heartbeat_are_dropped(redis):
    (live, mm_live), (_, mm_gone) = await beaten(redis, "i_live", "i_gone")
    await mm_live.enqueue("p1", "ann", 2, 3)
    await mm_gone.enqueue("p2", "bob", 4, 5)
    await mm_gone.enqueue("p3", "cid", 6, 6)
    assert await mm_live.ticket_instances() == {"i_live": 1, "i_gone": 2}
    assert await live.reap() == []  # both beat: nobody is dead
    await beating(live, TTL * 1.5)  # i_gone stops beating
    assert await live.reap() == ["i_gone"]
    assert await mm_live.ticket_instances() == {"i_live": 1}
    sizes = await mm_live.queue_sizes()
    assert sizes["3"] == 1 and sizes["5"] == sizes["6"] == 0
    assert not await mm_live.leave("p2")  # gone from the queue
    assert await mm_live.leave("p1")


async def test_an_instance_taken_for_dead_asks_its_sockets_to_reconnect(redis):
    told: list[str] = []
    live, _ = instance(redis, "i_live")
    zombie, mm_zombie = instance(redis, "i_zombie", on_presumed_dead=lambda: told.append("x"))
    await zombie.beat()
    await mm_zombie.enqueue("p1", "ann", 2, 2)
    await beating(live, TTL * 1.5)  # the zombie is cut off from Redis for longer than the TTL
    assert await live.reap() == ["i_zombie"]
    await zombie.beat()  # back: its players' tickets are gone, so they must queue again
    assert told == ["x"]
    await zombie.beat()
    assert told == ["x"]  # told once


async def test_after_its_own_heartbeat_lapsed_an_instance_waits_before_judging(redis):
    (one, _), (two, mm_two) = await beaten(redis, "i_one", "i_two")
    await mm_two.enqueue("p1", "ann", 2, 2)
    await asyncio.sleep(TTL * 1.5)  # Redis was away: every heartbeat lapsed
    await one.beat()
    assert await one.reap() == []  # i_two may be coming back too: not judged yet
    await asyncio.gather(beating(one, TTL * 1.2), beating(two, TTL * 1.2))
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
    live, mm_live = instance(redis, "i_live")
    gone, mm_gone = instance(redis, "i_gone")
    await gone.beat()
    await mm_gone.enqueue("p1", "ann", 2, 3)
    await mm_gone.enqueue("p2", "bob", 4, 4)
    # i_gone dies; ann's client reconnects to i_live and queues again.
    with pytest.raises(MatchError) as refused:
        await mm_live.enqueue("p1", "ann", 2, 3)
    assert refused.value.code == "already_queued"  # the same ticket, same place
    assert await mm_live.ticket_instances() == {"i_live": 1, "i_gone": 1}
    await beating(live, TTL * 1.5)
    assert await live.reap() == ["i_gone"]
    assert await mm_live.leave("p1")  # still queued: i_live holds the ticket now
    assert not await mm_live.leave("p2")  # bob never came back
