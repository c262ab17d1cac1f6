"""The cyclic garbage collector, run on a clock in small steps so it never holds the loop long.

CPython 3.11 starts a collection when allocations minus deallocations pass a
threshold. A lobby's objects mostly live as long as a turn or a game (a game's
state, each socket's pending read): a move allocates about as many as it frees,
so that count hardly moves while the young generation fills with them. When a
collection came, it walked up to ~170,000 objects at 10,000 players and held the
event loop for up to 420 ms; a full one walks every object alive, ~87 per
connected player at about 1 us each (BENCHMARKS.md, issue 14).

While `Collector.run` runs, the automatic collector is off and:

- every `TICK` s the young generation is collected: what was allocated since
  and is still alive, a few thousand objects;
- every `PROMOTE` ticks the middle generation is collected too, and what
  survives it is frozen (`gc.freeze`): no later collection walks it again;
- every `reclaim` s (`MOOSE_GC_RECLAIM`) everything is unfrozen and collected
  once, which frees the cycles that died among frozen objects (a closed socket's
  transport is one). That one pause grows with the players connected; the
  metrics and the log give its length and what it freed.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time

__all__ = ["Collector"]

log = logging.getLogger(__name__)

TICK = 0.05  # seconds between young collections
PROMOTE = 2  # ticks between collections of the middle generation (then a freeze)


class Collector:
    """Owns the cyclic collector of this process while `run` runs."""

    def __init__(self, reclaim: float) -> None:
        self.reclaim = reclaim  # seconds between full collections of everything; 0: never
        self.reclaimed = 0  # objects the last full collection freed

    async def run(self) -> None:
        """Collect in small steps until cancelled; the automatic collector is back after."""
        was_enabled = gc.isenabled()
        gc.disable()
        gc.collect()
        gc.freeze()  # what lives as long as the process: modules, classes, functions
        next_reclaim = time.monotonic() + self.reclaim
        ticks = 0
        try:
            while True:
                await asyncio.sleep(TICK)
                ticks += 1
                if ticks % PROMOTE:
                    gc.collect(0)
                    continue
                gc.collect(1)
                gc.freeze()
                if self.reclaim and time.monotonic() >= next_reclaim:
                    self.full()
                    next_reclaim = time.monotonic() + self.reclaim
        finally:
            gc.unfreeze()
            if was_enabled:
                gc.enable()

    def full(self) -> int:
        """Unfreeze everything, collect it all once, freeze what is left; the objects freed."""
        started = time.perf_counter()
        gc.unfreeze()
        self.reclaimed = gc.collect()
        gc.freeze()
        log.info(
            "full collection: %d objects freed in %.0f ms",
            self.reclaimed, (time.perf_counter() - started) * 1000,
        )  # fmt: skip
        return self.reclaimed
