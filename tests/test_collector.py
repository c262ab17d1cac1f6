"""The clocked collector: young cycles freed, survivors frozen, a full pass frees the rest."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import weakref
from collections.abc import AsyncIterator

import pytest

from moose_server.ops.collector import BUDGET, LONGEST, SHORTEST, Collector
from moose_server.ops.heap import Heap
from moose_server.settings import Settings


class Node:
    """One half of a reference cycle, which only the cyclic collector can free."""

    other: Node | None = None


def pair() -> tuple[Node, Node]:
    """Two nodes that refer to each other."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a, b


@contextlib.asynccontextmanager
async def running(clocked: Collector) -> AsyncIterator[None]:
    """The collector's loop running as a task, for a tick before and until the end."""
    task = asyncio.create_task(clocked.run())
    try:
        await asyncio.sleep(TICK)
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


TICK = SHORTEST


def collector(reclaim: float = 0) -> Collector:
    """A collector at its shortest interval throughout, so that the tests know when it runs."""
    return Collector(reclaim, longest=SHORTEST)


async def until(check, seconds: float) -> bool:
    """Whether `check()` became true within `seconds` (looked at every tick)."""
    for _ in range(int(seconds / TICK)):
        if check():
            return True
        await asyncio.sleep(TICK)
    return bool(check())


async def test_while_it_runs_automatic_collection_is_off_and_comes_back_after() -> None:
    assert gc.isenabled()
    task = asyncio.create_task(collector().run())
    await asyncio.sleep(TICK)
    assert not gc.isenabled()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0  # nothing of the test process left out of collections


async def test_a_young_cycle_is_freed_within_a_few_ticks() -> None:
    async with running(collector()):
        ref = weakref.ref(pair()[0])
        assert ref() is not None  # automatic collection is off: only the collector frees it
        assert await until(lambda: ref() is None, 2 * TICK + 5)


async def test_a_cycle_that_dies_after_it_was_frozen_waits_for_the_full_collection() -> None:
    clocked = collector()
    async with running(clocked):
        a, b = pair()
        ref = weakref.ref(a)
        # Alive through a collection: frozen by now, so tracked but in no
        # generation a collection walks.
        await asyncio.sleep(3 * TICK)
        assert gc.is_tracked(a)
        assert all(o is not a for o in gc.get_objects())
        del a, b
        await asyncio.sleep(3 * TICK)
        assert ref() is not None  # no clocked collection walks frozen objects
        assert clocked.full() >= 2
        assert ref() is None


async def test_the_full_collection_runs_every_reclaim_seconds() -> None:
    async with running(collector(reclaim=3 * TICK)):
        a, b = pair()
        ref = weakref.ref(a)
        await asyncio.sleep(2 * TICK)  # frozen by now
        del a, b
        assert await until(lambda: ref() is None, 10)


def test_the_interval_halves_after_a_long_collection_and_grows_after_short_ones() -> None:
    c = Collector(reclaim=0)
    assert c.interval == SHORTEST
    for _ in range(40):
        c._adapt(BUDGET / 10)  # cheap collections: collect less often, up to the longest
    assert c.interval == LONGEST
    c._adapt(BUDGET * 2)
    assert c.interval == LONGEST / 2
    for _ in range(40):
        c._adapt(BUDGET * 2)
    assert c.interval == SHORTEST
    c._adapt(BUDGET / 2)  # within the budget: stays
    assert c.interval == SHORTEST


def test_gc_reclaim_comes_from_the_environment_and_must_not_be_negative() -> None:
    assert Settings.from_env({"MOOSE_GC_RECLAIM": "60"}).gc_reclaim == 60.0
    assert Settings().gc_reclaim > 0
    with pytest.raises(ValueError, match="gc_reclaim"):
        Settings(gc_reclaim=-1)


class CountedHeap(Heap):
    """The process' heap, counting what its trims gave back."""

    returned = 0

    def check(self) -> int:
        returned = super().check()
        self.returned += returned
        return returned


async def test_the_collector_hands_freed_heap_memory_back_on_its_clock() -> None:
    heap = CountedHeap.open(threshold=8 << 20)
    if heap is None:
        pytest.skip("no glibc >= 2.33 here")
    async with running(Collector(0, longest=SHORTEST, heap=heap, trim_every=TICK)):
        blocks = [bytes([i % 256]) * 16_000 for i in range(2048)]  # 32 MiB, resident
        kept = blocks[::10]  # pins what lies between, as live objects do in a server
        del blocks
        assert await until(lambda: heap.returned > 16 << 20, 2.0), heap.returned
        assert kept
