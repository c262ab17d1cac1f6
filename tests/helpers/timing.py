"""Time in tests: wait for a condition instead of sleeping a fixed time, or step a clock.

A test that sleeps a fixed time and then asserts that something happened fails
on a busy machine, where the something is merely late. `until` waits for it
with a generous timeout instead (so the test still fails when it never
happens), and `Clock` stands in for a clock a class lets the caller inject.
`make_due` moves a running game's deadline into the past, as if its days had gone by;
`make_due_after_lost_writes` does so as Redis coming back without its last writes
would be seen (the deadline moves an outage grace on, and is told, claim.lua).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import redis.asyncio as aioredis

from moose_server.storage.keys import GameKeys, bucket, deadlines_key, polled_key

T = TypeVar("T")
BUCKETS = 16  # the servers' default (Settings.buckets)


async def until(
    check: Callable[[], Awaitable[T]], *, timeout: float = 30.0, every: float = 0.02
) -> T:
    """Await `check()` until it returns a true value; that value (TimeoutError after `timeout`)."""
    # The deadline is checked between calls rather than by cancelling one: a
    # cancellation that lands inside redis-py can be swallowed (see helpers.cleanup).
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := await check()):
        if loop.time() > deadline:
            raise TimeoutError(f"{check} was still false after {timeout} s")
        await asyncio.sleep(every)
    return value


async def stopped(task: asyncio.Task[object]) -> None:
    """Cancel `task` and wait for its end, cancelling again if it swallowed one.

    redis-py now and then swallows a cancellation that lands inside a pipeline's
    execute (see `helpers.cleanup`): a loop cancelled there runs on, and a plain
    ``await gather(task)`` would wait for it until the test's timeout.
    """
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=0.5)
    if not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]


class Clock:
    """A clock that moves only when told: ``clock()`` reads it, ``clock.advance(s)`` steps it."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        """The time now, in seconds."""
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock on by `seconds`."""
        self.now += seconds


async def make_due(redis_url: str, game: str) -> None:
    """Move the game's deadline into the past, in the game and in its bucket's set,
    as if its days had gone by (the server's next poll plays it)."""
    r = aioredis.Redis.from_url(redis_url)
    try:
        now_s, now_us = await r.time()
        past = now_s * 1000 + now_us // 1000 - 1
        await r.hset(GameKeys.of(game, BUCKETS).game, "dl", past)
        await r.zadd(deadlines_key(bucket(game, BUCKETS)), {game: past}, xx=True)
    finally:
        await r.aclose()


async def make_due_after_lost_writes(redis_url: str, game: str) -> None:
    """Make the game's deadline due and its bucket's poll stamp older than the server's
    last claim, in one transaction: as when Redis came back without its last writes,
    the next claim moves the deadline the outage grace on (claim.lua), and no claim
    plays it before."""
    r = aioredis.Redis.from_url(redis_url)
    try:
        polled = polled_key(bucket(game, BUCKETS))
        stamp = int(await r.get(polled) or 0)
        now_s, now_us = await r.time()
        past = now_s * 1000 + now_us // 1000 - 1
        async with r.pipeline(transaction=True) as tx:
            tx.hset(GameKeys.of(game, BUCKETS).game, "dl", past)
            tx.zadd(deadlines_key(bucket(game, BUCKETS)), {game: past}, xx=True)
            tx.set(polled, stamp - 1000)
            await tx.execute()
    finally:
        await r.aclose()
