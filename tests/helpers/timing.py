"""Time in tests: wait for a condition instead of sleeping a fixed time, or step a clock.

A test that sleeps a fixed time and then asserts that something happened fails
on a busy machine, where the something is merely late. `until` waits for it
with a generous timeout instead (so the test still fails when it never
happens), and `Clock` stands in for a clock a class lets the caller inject.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def until(
    check: Callable[[], Awaitable[T]], *, timeout: float = 30.0, every: float = 0.02
) -> T:
    """Await `check()` until it returns a true value; that value (TimeoutError after `timeout`)."""
    async with asyncio.timeout(timeout):
        while not (value := await check()):
            await asyncio.sleep(every)
    return value


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
