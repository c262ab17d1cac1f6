"""The cyclic garbage collector, run on a clock in small steps so it never holds the loop long.

CPython 3.11 starts a collection when allocations minus deallocations pass a
threshold. A lobby's objects mostly live as long as a turn or a game (a game's
state, each socket's pending read): a move allocates about as many as it frees,
so that count hardly moves while the young generation fills with them. When a
collection came, it walked up to ~170,000 objects at 10,000 players and held the
event loop for up to 420 ms; a full one walks every object alive, ~87 per
connected player at about 1 us each (BENCHMARKS.md).

While `Collector.run` runs, the automatic collector is off and:

- every interval (50 ms to 1 s) the young generation is collected (what was
  allocated since and is still alive) and what survives is frozen at once
  (`gc.freeze`): no later clocked collection walks it again. An earlier version
  kept survivors one more interval in the middle generation and collected that
  too: those collections walked each survivor a second time and freed almost
  nothing (701 objects in a 10,000-player run, against 4,710 by the young ones;
  BENCHMARKS.md);
- the interval adapts: a collection walks what was allocated over it and lived,
  so it is halved when a collection took over `BUDGET` of CPU and grows while
  they take under a third of that. A busy lobby gets short pauses often, a
  quiet one rarer collections (fewer walks: most objects die before one);
- every `reclaim` s (`MOOSE_GC_RECLAIM`) everything is unfrozen and collected
  once, which frees the cycles that died among frozen objects (a closed socket's
  transport is one). That one pause grows with the players connected; the
  metrics and the log give its length and what it freed;
- every `TRIM_EVERY` s it asks glibc how much of its heap is free and hands it
  back to the OS when enough is (`heap.Heap`): what a burst of
  slow clients took comes back instead of staying in the RSS.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time

from moose_server.ops.heap import Heap

__all__ = ["Collector"]

log = logging.getLogger(__name__)

SHORTEST = 0.05  # seconds between young collections, at least...
LONGEST = 1.0  # ...and at most
BUDGET = 0.005  # seconds of CPU a collection should take at most
TRIM_EVERY = 5.0  # seconds between looks at the C heap (mallinfo2: ~0.1-1 ms each)


class Collector:
    """Owns the cyclic collector of this process while `run` runs."""

    def __init__(
        self,
        reclaim: float,
        shortest: float = SHORTEST,
        longest: float = LONGEST,
        heap: Heap | None = None,
        trim_every: float = TRIM_EVERY,
    ) -> None:
        self.reclaim = reclaim  # seconds between full collections of everything; 0: never
        self.heap = heap  # trimmed now and then; None: never
        self.trim_every = trim_every  # seconds between looks at the heap
        self.shortest, self.longest = shortest, longest
        self.interval = shortest  # seconds between young collections now

    async def run(self) -> None:
        """Collect in small steps until cancelled; the automatic collector is back after."""
        was_enabled = gc.isenabled()
        gc.disable()
        gc.collect()
        gc.freeze()  # what lives as long as the process: modules, classes, functions
        next_reclaim = time.monotonic() + self.reclaim
        next_trim = time.monotonic() + self.trim_every
        try:
            while True:
                await asyncio.sleep(self.interval)
                started = time.thread_time()
                gc.collect(0)
                gc.freeze()
                self._adapt(time.thread_time() - started)
                if self.reclaim and time.monotonic() >= next_reclaim:
                    self.full()
                    next_reclaim = time.monotonic() + self.reclaim
                if self.heap is not None and time.monotonic() >= next_trim:
                    self.heap.check()
                    next_trim = time.monotonic() + self.trim_every
        finally:
            gc.unfreeze()
            if was_enabled:
                gc.enable()

    def _adapt(self, took: float) -> None:
        """A new interval from the CPU the last collection took."""
        if took > BUDGET:
            self.interval = max(self.shortest, self.interval / 2)
        elif took < BUDGET / 3:
            self.interval = min(self.longest, self.interval * 1.25)

    def full(self) -> int:
        """Unfreeze everything, collect it all once, freeze what is left; the objects freed."""
        started = time.perf_counter()
        gc.unfreeze()
        freed = gc.collect()
        gc.freeze()
        ms = (time.perf_counter() - started) * 1000
        log.info(
            "full collection: %d objects freed in %.0f ms", freed, ms, extra={"event": "gc_full"}
        )
        return freed
