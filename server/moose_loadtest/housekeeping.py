"""The load generator's own event loop: collected in small steps, and its lag timed.

A lobby worker holds thousands of players; CPython's automatic collector would
now and then walk all of them and hold the loop for hundreds of milliseconds,
which would show up as the server's latency. So, as the server does (its
docs/SERVER.md), the automatic collector is off while `collect_in_steps` runs:
every interval the young generation is collected and what survives is frozen,
and the interval adapts to keep each step under `BUDGET` of CPU. `watch_loop`
times how late a timer fires: the worker's own delay, part of every latency it
measures.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable

__all__ = ["collect_in_steps", "watch_loop"]

SHORTEST = 0.05  # seconds between young collections, at least...
LONGEST = 1.0  # ...and at most
BUDGET = 0.005  # seconds of CPU a collection should take at most
LAG_PROBE = 0.05  # seconds between two looks at the loop's lag


async def collect_in_steps() -> None:
    """Collect the young generation on a clock until cancelled; then the automatic
    collector is back."""
    was_enabled = gc.isenabled()
    gc.disable()
    gc.collect()
    gc.freeze()  # what lives as long as the process: modules, classes, functions
    interval = SHORTEST
    try:
        while True:
            await asyncio.sleep(interval)
            started = time.thread_time()
            gc.collect(0)
            gc.freeze()
            took = time.thread_time() - started
            if took > BUDGET:
                interval = max(SHORTEST, interval / 2)
            elif took < BUDGET / 3:
                interval = min(LONGEST, interval * 1.25)
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()


async def watch_loop(record: Callable[[float], None]) -> None:
    """Time how late a timer runs, forever: `record(seconds)` of lag each time."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + LAG_PROBE
        await asyncio.sleep(LAG_PROBE)
        record(max(0.0, loop.time() - due))
