"""Run `moose serve` with instruments on its event loop, to find where a latency tail comes from.

    python bench/loopwatch.py OUT.json [serve flags...]

A diagnostic, not part of the server: it wraps asyncio's `Handle._run` (every
callback and task step the loop runs) and `BaseEventLoop._run_once` (one loop
turn), and hooks `gc.callbacks`, then runs `moose serve` with the given flags.
On exit (SIGTERM, SIGINT) it writes OUT.json:

- `turns`: a histogram of the busy time of each loop turn (the callbacks it ran,
  in wall time), and the slowest 200 turns, each with its loop time, the
  fraction of a second it started at, the callbacks it ran grouped by name
  (count, ms) and the collections that ran inside it;
- `callbacks`: every callback name with its count, total and max ms;
- `gc`: per generation: collections, total and max ms (wall and the thread's
  CPU), objects collected;
- `timeline`: every turn of `SLOW_TURN_MS` or more, in order: [Unix time, busy ms,
  CPU ms, [[callback, count, ms] of its 3 heaviest callbacks], [[generation, ms]
  of its collections]] (at most `TIMELINE_MAX`): with the times of a load
  test's steps (`moose loadtest --lobby` reports them) it tells what the loop did
  in a measured window, not only over the whole run;
- `tracked_objects`: every 30 s, how many objects the collector tracks (what a
  full collection walks);
- `cpu`: the process's CPU seconds (user + system) over the same span.

Every time is wall time: on a machine shared with other work a turn can also
be long because the process was not scheduled. `turns.slowest[].cpu_ms` is the
thread's CPU time over that turn, which tells those apart.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import gc
import json
import os
import sys
import time
import types
from asyncio import base_events, events
from typing import Any

TURN_BUCKETS_MS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
KEEP_SLOWEST = 200
TIMELINE_MAX = 200_000
SLOW_TURN_MS = 5.0
SLOW_GC_MS = 10.0
YOUNG_CENSUS_EVERY = 20  # young/middle collections between two censuses of what they walk
# LOOPWATCH_GC_SIZES=1: objects in each generation at a slow collection's start, a census
GC_SIZES = os.environ.get("LOOPWATCH_GC_SIZES") == "1"
TRACK_EVERY = 30.0  # seconds between two counts of the objects the collector tracks


def _name(handle: events.Handle) -> str:
    cb = getattr(handle, "_callback", None)
    owner = getattr(cb, "__self__", None)
    if isinstance(owner, asyncio.Task):
        coro = owner.get_coro()
        return f"task:{getattr(coro, '__qualname__', type(coro).__name__)}"
    if isinstance(owner, asyncio.Future):
        return f"future-cb:{type(owner).__name__}"
    return getattr(cb, "__qualname__", None) or type(cb).__name__


def _kind(o: Any) -> str:
    """A census name: the type, and for coroutines, frames and functions their code."""
    code = getattr(o, "cr_code", None) or getattr(o, "f_code", None) or getattr(o, "__code__", None)
    if isinstance(code, types.CodeType):  # (a class's `__code__` may be a descriptor)
        return f"{type(o).__name__} {code.co_qualname}"
    if isinstance(o, dict) and len(o) <= 12:
        return "dict " + ",".join(sorted(map(str, o))[:6])
    return type(o).__qualname__


def _bucket(ms: float) -> int:
    return next((k for k, b in enumerate(TURN_BUCKETS_MS) if ms <= b), len(TURN_BUCKETS_MS))


class Watch:
    """Counters filled by the wrapped loop methods and the gc callback."""

    def __init__(self) -> None:
        self.turn: dict[str, list[float]] = {}  # name -> [count, ms] in this turn
        self.turn_gc: list[tuple[int, float, int]] = []
        self.busy = 0.0
        self.turn_cpu0 = 0.0
        self.hist = [0] * (len(TURN_BUCKETS_MS) + 1)
        self.cpu_hist = [0] * (len(TURN_BUCKETS_MS) + 1)
        self.slowest: list[dict[str, Any]] = []
        self.timeline: list[list[Any]] = []
        self.names: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
        # per generation: count, wall ms, max wall ms, collected, CPU ms, max CPU ms
        self.gc: dict[int, list[float]] = {g: [0, 0.0, 0.0, 0, 0.0, 0.0] for g in range(3)}
        self._gc_t0 = self._gc_cpu0 = 0.0
        self.t0 = time.perf_counter()
        self.cpu0 = sum(os.times()[:2])
        self._gc_sizes: list[int] = []
        self.slow_gc: list[dict[str, Any]] = []
        self.census: list[Any] = []
        self.young_census: dict[str, list[int]] = {}  # kind -> [objects, referents], summed
        self.young_census_runs = 0
        self._young_seen = 0
        self.leak: dict[str, Any] = {}
        self.tracked: list[list[float]] = []  # [loop time, objects the collector tracks]
        self._tracked_at = 0.0

    def handle(self, name: str, ms: float) -> None:
        entry = self.turn.get(name)
        if entry is None:
            self.turn[name] = [1, ms]
        else:
            entry[0] += 1
            entry[1] += ms
        self.busy += ms
        n = self.names[name]
        n[0] += 1
        n[1] += ms
        n[2] = max(n[2], ms)

    def end_turn(self, loop_time: float) -> None:
        busy = self.busy
        cpu = (time.thread_time() - self.turn_cpu0) * 1000
        if busy > 0:
            self.hist[_bucket(busy)] += 1
            self.cpu_hist[_bucket(cpu)] += 1
        if busy >= SLOW_TURN_MS:
            top = sorted(self.turn.items(), key=lambda kv: -kv[1][1])[:12]
            self.slowest.append(
                {
                    "loop_time": round(loop_time, 4),
                    "second_fraction": round(loop_time % 1, 4),
                    "busy_ms": round(busy, 2),
                    "cpu_ms": round(cpu, 2),
                    "handles": int(sum(v[0] for v in self.turn.values())),
                    "top": [[k, int(v[0]), round(v[1], 2)] for k, v in top],
                    "gc": [[g, round(ms, 2), c] for g, ms, c in self.turn_gc],
                }
            )
            if len(self.slowest) > 8 * KEEP_SLOWEST:
                self._trim()
            if len(self.timeline) < TIMELINE_MAX:
                self.timeline.append(
                    [
                        round(time.time(), 3),
                        round(busy, 1),
                        round(cpu, 1),
                        [[k, int(v[0]), round(v[1], 1)] for k, v in top[:3]],
                        [[g, round(ms, 1)] for g, ms, _ in self.turn_gc],
                    ]
                )
        self.turn = {}
        self.turn_gc = []
        self.busy = 0.0
        self.turn_cpu0 = time.thread_time()

    def count_objects(self, loop_time: float) -> None:
        """Every TRACK_EVERY s: how many objects the collector tracks (a full pass walks them)."""
        if loop_time - self._tracked_at >= TRACK_EVERY:
            self._tracked_at = loop_time
            objects = gc.get_objects()
            self.tracked.append([round(loop_time, 1), len(objects)])
            if GC_SIZES:
                kinds = collections.Counter(type(o).__qualname__ for o in objects)
                self.census.append([round(loop_time, 1), kinds.most_common(30)])
            del objects

    def _trim(self) -> None:
        """Keep the slowest turns by wall time and the heaviest by CPU time."""
        by_wall = sorted(self.slowest, key=lambda t: -t["busy_ms"])[:KEEP_SLOWEST]
        by_cpu = sorted(self.slowest, key=lambda t: -t["cpu_ms"])[:KEEP_SLOWEST]
        kept = {id(t): t for t in by_wall + by_cpu}
        self.slowest = list(kept.values())

    def on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            if GC_SIZES:  # counted before the clock starts, so not in the pause
                self._gc_sizes = [len(gc.get_objects(g)) for g in range(3)]
                if info["generation"] < 2:
                    self._census_young()
            self._gc_t0, self._gc_cpu0 = time.perf_counter(), time.thread_time()
            return
        ms = (time.perf_counter() - self._gc_t0) * 1000
        cpu = (time.thread_time() - self._gc_cpu0) * 1000
        g = self.gc[info["generation"]]
        g[0] += 1
        g[1] += ms
        g[2] = max(g[2], ms)
        g[3] += info.get("collected", 0)
        g[4] += cpu
        g[5] = max(g[5], cpu)
        self.turn_gc.append((info["generation"], ms, info.get("collected", 0)))
        if GC_SIZES and ms >= SLOW_GC_MS:
            self.slow_gc.append(
                {
                    "generation": info["generation"],
                    "ms": round(ms, 2),
                    "cpu_ms": round(cpu, 2),
                    "collected": info.get("collected", 0),
                    "sizes": self._gc_sizes,
                }
            )

    def _census_young(self) -> None:
        """Every YOUNG_CENSUS_EVERY-th young or middle collection: what it will walk, by kind.

        Counts, per kind, the objects and their referents (what the walk visits:
        each referent visited is a likely cache miss in a large heap).
        """
        self._young_seen += 1
        if self._young_seen % YOUNG_CENSUS_EVERY:
            return
        self.young_census_runs += 1
        for o in gc.get_objects(0) + gc.get_objects(1):
            kind = _kind(o)
            entry = self.young_census.get(kind)
            if entry is None:
                entry = self.young_census[kind] = [0, 0]
            entry[0] += 1
            entry[1] += len(gc.get_referents(o))

    def report(self) -> dict[str, Any]:
        wall = time.perf_counter() - self.t0
        self._trim()
        names = sorted(self.names.items(), key=lambda kv: -kv[1][1])
        labels = [f"<={b}" for b in TURN_BUCKETS_MS] + [f">{TURN_BUCKETS_MS[-1]}"]
        return {
            "wall_s": round(wall, 1),
            "cpu_s": round(sum(os.times()[:2]) - self.cpu0, 1),
            "turns": {
                "busy_ms_histogram": dict(zip(labels, self.hist, strict=True)),
                "cpu_ms_histogram": dict(zip(labels, self.cpu_hist, strict=True)),
                "slowest": sorted(self.slowest, key=lambda t: -t["busy_ms"])[:KEEP_SLOWEST],
                "heaviest": sorted(self.slowest, key=lambda t: -t["cpu_ms"])[:KEEP_SLOWEST],
            },
            "timeline": self.timeline,
            "tracked_objects": self.tracked,
            "slow_collections": self.slow_gc,
            "census": self.census,
            "young_census": {
                "runs": self.young_census_runs,
                "kinds": sorted(
                    ([k, *v] for k, v in self.young_census.items()), key=lambda r: -r[2]
                )[:60],
            },
            "garbage_at_exit": self.leak,
            "callbacks": [[k, int(v[0]), round(v[1], 1), round(v[2], 2)] for k, v in names[:80]],
            "gc": {
                str(g): {
                    "count": int(v[0]),
                    "total_ms": round(v[1], 1),
                    "max_ms": round(v[2], 2),
                    "collected": int(v[3]),
                    "cpu_total_ms": round(v[4], 1),
                    "cpu_max_ms": round(v[5], 2),
                }
                for g, v in self.gc.items()
            },
        }


def install(out: str) -> Watch:
    """Wrap the loop's methods and hook the collector; write `out` at exit."""
    watch = Watch()
    run = events.Handle._run
    perf = time.perf_counter

    def _run(self: events.Handle) -> None:
        t0 = perf()
        run(self)
        watch.handle(_name(self), (perf() - t0) * 1000)

    run_once = base_events.BaseEventLoop._run_once

    def _run_once(self: base_events.BaseEventLoop) -> None:
        run_once(self)
        now = self.time()
        watch.end_turn(now)
        watch.count_objects(now)

    events.Handle._run = _run  # type: ignore[method-assign]
    base_events.BaseEventLoop._run_once = _run_once  # type: ignore[attr-defined]
    gc.callbacks.append(watch.on_gc)

    def write() -> None:
        # No census may run (from a collection) while the report is made.
        gc.callbacks.remove(watch.on_gc)
        if GC_SIZES:  # what a full collection of everything, frozen too, finds at exit
            gc.unfreeze()
            gc.set_debug(gc.DEBUG_SAVEALL)
            found = gc.collect()
            kinds = collections.Counter(type(o).__qualname__ for o in gc.garbage)
            watch.leak = {"objects": found, "kinds": kinds.most_common(40)}
            gc.set_debug(0)
            gc.garbage.clear()
        with open(out, "w") as f:
            json.dump(watch.report(), f, indent=1)

    atexit.register(write)
    return watch


def main() -> None:
    out, flags = sys.argv[1], sys.argv[2:]
    install(out)
    from moose import cli

    sys.exit(cli.main(["serve", *flags]))


if __name__ == "__main__":
    main()
