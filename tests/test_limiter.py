"""The one limiter (limits/limiter.py) and its table of limits (limits/rates.py), on a
real Redis: every shared rate refuses past its burst with its code, a refused request
takes nothing, and the refusal says when the next request is allowed, as the table
says. The per-socket rate is in memory: given the loop's times, it is a pure count."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from moose_server.errors import Refusal
from moose_server.limits.limiter import Limited, Limiter, SocketRate
from moose_server.limits.rates import COSTS, RATES, Rate, rate
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.store import Store

from helpers import open_store

SHARED = [r for r in RATES if r.shared]
WHO = {"address": "203.0.113.9", "player": "p_eve", "account": "eve"}


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[Store]:
    async with open_store(redis_url) as opened:
        yield opened


async def redis_ms(store: Store) -> int:
    """Redis' clock, which the limits count by (ms)."""
    seconds, micros = await store.redis.time()
    return int(seconds) * 1000 + int(micros) // 1000


async def counters(limiter: Limiter, limit: Rate, **who: str) -> list[Any]:
    """What Redis holds of the limit's counters of client `who` (None: nothing taken)."""
    calls = limiter.calls((limit.name,), **who)
    return [await limiter.store.redis.get(call.key) for _, call in calls]


@pytest.mark.parametrize("limit", SHARED, ids=lambda r: r.name)
async def test_past_its_burst_a_limit_refuses_takes_nothing_and_says_when(store, limit):
    settings = Settings()  # the defaults: the table PROTOCOL.md writes out
    limiter = Limiter(store, settings)
    every_ms = round(limit.every(settings) * 1000)
    first = await redis_ms(store)
    # The burst in one round trip: one at a time could outlast a fast limit's interval.
    burst = (limiter.take(limit.name, **WHO) for _ in range(limit.burst(settings)))
    await asyncio.gather(*burst)
    spent = await counters(limiter, limit, **WHO)
    for _ in range(3):  # retrying too early pushes nothing later
        with pytest.raises(Limited) as refused:
            await limiter.take(limit.name, **WHO)
        assert refused.value.code == limit.code
    last = await redis_ms(store)
    assert await counters(limiter, limit, **WHO) == spent
    # One more is free `every` after the first was taken: no sooner, no later.
    wait = refused.value.fields["retry_after"]
    assert every_ms - (last - first) <= wait <= every_ms


@pytest.mark.parametrize("limit", [r for r in SHARED if len(r.per) > 1], ids=lambda r: r.name)
async def test_a_request_one_counter_refuses_takes_nothing_from_the_others(store, limit):
    limiter = Limiter(store, Settings())
    for _ in range(limit.burst(limiter.settings)):
        await limiter.take(limit.name, **WHO)
    # The same player from another address: the player's counter refuses...
    elsewhere = {**WHO, "address": "192.0.2.77"}
    with pytest.raises(Limited):
        await limiter.take(limit.name, **elsewhere)
    with pytest.raises(Limited):
        async with limiter.attempt(limit.name, **elsewhere):
            raise AssertionError("a refused request is not run")
    # ...and the other address' counter is as if it had never been asked.
    other = {**elsewhere, "player": "p_other", "account": "other"}
    assert await counters(limiter, limit, **other) == [None] * len(limit.per)


@pytest.mark.parametrize("limit", SHARED, ids=lambda r: r.name)
async def test_what_a_request_costs_is_what_the_table_says(store, limit):
    assert limit.costs in COSTS
    limiter = Limiter(store, Settings())
    clients = iter(f"198.51.100.{n}" for n in range(1, 10))

    async def spent(outcome: BaseException | None) -> bool:
        """Whether a request with this outcome keeps the token it took."""
        who = {**WHO, "address": next(clients), "player": outcome.__class__.__name__}
        try:
            async with limiter.attempt(limit.name, **who):
                if outcome is not None:
                    raise outcome
        except (Refusal, RuntimeError):
            pass
        return await counters(limiter, limit, **who) != [None] * len(limit.per)

    refused = await spent(Refusal("no_such_player", "no player is called that"))
    succeeded = await spent(None)
    assert (refused, succeeded) == {
        "done": (False, True),
        "failed": (True, False),
        "tried": (True, True),
    }[limit.costs]
    assert not await spent(RuntimeError("Redis or a bug: never the client's cost"))


def test_a_socket_sends_its_burst_then_its_rate_and_a_refused_message_takes_nothing():
    settings = Settings(rate=4, burst=4)  # times a float holds exactly
    socket = SocketRate(settings, now=100.0)
    assert [socket.allow(100.0) for _ in range(5)] == [True] * 4 + [False]
    assert [socket.allow(100.0) for _ in range(3)] == [False] * 3
    assert socket.strikes == 4 and socket.retry_after_ms() == 250
    # One more a quarter of a second later, the refusals before it notwithstanding.
    assert socket.allow(100.25) and socket.strikes == 0
    assert not socket.allow(100.25)
    assert rate("messages").burst(settings) == 4 and rate("messages").every(settings) == 0.25


@pytest.mark.parametrize("limit", SHARED, ids=lambda r: r.name)
async def test_two_instances_count_one_client_together(redis_url, limit):
    # Each instance has its own connection and limiter; the counters are Redis'.
    one, two = await open_redis(redis_url, 8), await open_redis(redis_url, 8)
    try:
        limiters = [Limiter(Store(c, 16), Settings()) for c in (one, two)]
        burst = limit.burst(limiters[0].settings)
        # The burst in one round trip each: one at a time could outlast a fast limit's interval.
        await asyncio.gather(*(limiters[n % 2].take(limit.name, **WHO) for n in range(burst)))
        for limiter in limiters:
            with pytest.raises(Limited) as refused:
                await limiter.take(limit.name, **WHO)
            assert refused.value.code == limit.code
    finally:
        await one.aclose()
        await two.aclose()


async def test_a_request_s_counters_on_several_cluster_nodes_take_nothing_when_refused(
    backend_url,
):
    # A chat line's two counters have tags of their own: on a Cluster, other slots.
    async with open_store(backend_url) as store:
        limiter = Limiter(store, Settings(chat_burst=2, chat_interval=60))
        chat = rate("chat")
        await limiter.take("chat", **WHO)
        await limiter.take("chat", player="p_eve", address="192.0.2.1")
        with pytest.raises(Limited):  # eve has none left; 192.0.2.1 had one
            await limiter.take("chat", player="p_eve", address="192.0.2.1")
        async with limiter.attempt("chat", player="p_bob", address="192.0.2.1"):
            pass  # the one 192.0.2.1 had left: the refusal did not take it
        with pytest.raises(Limited):
            await limiter.take("chat", player="p_carl", address="192.0.2.1")
        assert await counters(limiter, chat, player="p_dan", address="192.0.2.2") == [None, None]
