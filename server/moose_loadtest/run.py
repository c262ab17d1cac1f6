"""`moose loadtest` plumbing: options, worker processes, merging their tallies.

`run_workers` splits a `players.Job` over worker processes, holds them at a
barrier until every socket is open, starts them together and, while they run,
lets the caller measure the window (server CPU, Redis counters). `merge` joins
their tallies; the latency until every seat has an event is found here, since
the seats of one game may sit in different workers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import multiprocessing as mp
import os
import random
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from moose_loadtest.crowd import Job, Tally, run_job

__all__ = ["Options", "Ui", "merge", "percentiles", "run_workers", "summary"]

SETUP_TIMEOUT = 300.0  # connecting 10,000 sockets takes a while


@dataclass(frozen=True)
class Options:
    """Everything `moose loadtest` was asked to do."""

    url: tuple[str, ...] = ()  # running servers: instances of one deployment
    spawn: bool = False
    instances: int = 1  # with `spawn`: `moose serve` processes over the one Redis
    rounds: int = 2  # several instances: interleaved rounds of one instance and spread
    cluster: bool = False  # with `spawn`: also instances over a Redis Cluster of our own
    redis: str | None = None  # the Redis a spawned server uses (default: its own)
    redis_url: str | None = None  # the Redis to read command counts from
    server_pid: tuple[int, ...] = ()  # of the `url` servers, in the same order
    games: int = 200  # concurrent games (players = games * table)
    table: int = 4
    procs: int = 1
    bot: str = "greedy"
    rate: float = 0.0  # moves per second in all (0: as fast as the bots go)
    warmup: float = 3.0
    duration: float = 20.0
    drain: float = 60.0
    max_games: int = 0
    ceilings: bool = True
    matchmaking: int = 0
    connections: int = 0
    source_ips: int = 0  # 0: one per 20,000 connections
    hold: float = 3.0
    monitor: float = 2.0  # seconds of MONITOR in the warm-up (0: off)
    lobby: str | None = None  # lobby sizes ("2000,5000,max"): the lobby mode instead of games
    storm: int = 0  # players of the storm mode (an instance killed under them) instead of games


class Ui(Protocol):
    """Where progress goes (a rich progress bar, or nothing)."""

    def phase(self, name: str, total: float) -> None:
        """A new phase of `total` units begins."""

    def update(self, done: float, info: str = "") -> None:
        """Progress within the phase."""


def percentiles(values: list[float]) -> dict[str, float | None]:
    """p50, p95, p99 and max of `values` (None when empty), rounded to 0.01."""
    if not values:
        return {"p50": None, "p95": None, "p99": None, "max": None}
    v = sorted(values)

    def at(q: float) -> float:
        return round(v[min(len(v) - 1, math.ceil(q * len(v)) - 1)], 2)

    return {"p50": at(0.50), "p95": at(0.95), "p99": at(0.99), "max": round(v[-1], 2)}


def merge(tallies: list[dict[str, Any]], table: int) -> dict[str, Any]:
    """One tally from the workers' tallies; the all-seats latency is found here."""
    out: dict[str, Any] = {
        "moves": 0,
        "moves_total": 0,
        "move_ms": [],
        "event_ms": [],
        "match_ms": [],
        "connect_ms": [],
        "connected": 0,
    }
    tables: dict[str, list[int]] = {}  # game -> its seats' ratings (matchmaking)
    instances: dict[str, set[int]] = {}  # game -> the instances its seats are on
    games: set[str] = set()
    errors: Counter[str] = Counter()
    storm: dict[str, list[Any]] = {}
    sent: dict[str, float] = {}
    seen: dict[str, list[float]] = {}
    for t in tallies:
        for key in out:  # counts add up, latency lists join
            out[key] += t[key]
        games.update(t["games"])
        for game, ratings in t.get("tables", {}).items():
            tables.setdefault(game, ratings)
        for game, where in t.get("instances", {}).items():
            instances.setdefault(game, set()).update(where)
        errors.update(t["errors"])
        for key, values in t.get("storm", {}).items():
            storm.setdefault(key, []).extend(values)
        sent.update(t["sent"])
        for key, (last, count) in t["seen"].items():
            s = seen.setdefault(key, [0.0, 0])
            s[0], s[1] = max(s[0], last), s[1] + count
    out["all_seats_ms"] = [
        (seen[k][0] - t0) * 1000 for k, t0 in sent.items() if k in seen and seen[k][1] >= table
    ]
    out["games"], out["errors"], out["tables"] = len(games), dict(errors), tables
    out["game_ids"] = sorted(games)
    out["storm"] = storm
    out["spread_games"] = sum(1 for where in instances.values() if len(where) > 1)
    out["seated_games"] = len(instances)
    return out


def summary(merged: dict[str, Any], duration: float) -> dict[str, Any]:
    """The report's figures of a merged tally over a window of `duration` seconds."""
    return {
        "moves_per_second": round(merged["moves"] / duration, 1),
        "moves": merged["moves"],
        "move_latency_ms": percentiles(merged["move_ms"]),
        "event_latency_ms": percentiles(merged["event_ms"]),
        "all_seats_latency_ms": percentiles(merged["all_seats_ms"]),
        "matchmaking_wait_ms": percentiles(merged["match_ms"]),
        "games": merged["games"],
        "errors": merged["errors"],
    }


async def in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


async def run_workers(
    job: Job,
    procs: int,
    ui: Ui,
    label: str,
    window: Callable[[float, list[int]], Coroutine[Any, Any, None]],
) -> dict[str, Any]:
    """Run `job` split over `procs` processes; `window(start, pids)` measures meanwhile."""
    ctx = mp.get_context("spawn")
    ready, go, start = ctx.Semaphore(0), ctx.Event(), ctx.Value("d", 0.0)
    workers, pipes, progress = [], [], []
    for w in range(procs):
        share = job.players // procs + (w < job.players % procs)
        mine = dataclasses.replace(
            job,
            players=share,
            worker=w,
            seed=job.seed + w,
            rate=job.rate / procs,
            max_games=math.ceil(job.max_games / procs) if job.max_games else 0,
        )
        parent, child = ctx.Pipe(duplex=False)
        counters = ctx.Array("q", 4, lock=False)
        proc = ctx.Process(
            target=worker_main, args=(mine, child, ready, go, start, counters), daemon=True
        )
        proc.start()
        child.close()
        workers.append(proc)
        pipes.append(parent)
        progress.append(counters)
    try:
        await _until_ready(ready, workers, progress, ui, f"{label}: connecting", job.players)
        start.value = time.monotonic() + 0.05
        go.set()
        measuring = asyncio.create_task(window(start.value, [p.pid or 0 for p in workers]))
        results = await _collect(pipes, workers, progress, ui, label, job, start.value)
        await measuring
    finally:
        for proc in workers:
            proc.join(5)
            if proc.is_alive():
                proc.kill()
    failed = [r[1] for r in results if r[0] != "ok"]
    if failed:
        raise RuntimeError(f"a load-test worker failed: {failed[0]}")
    return merge([r[1] for r in results], job.table)


async def _until_ready(
    ready: Any, workers: list[Any], progress: list[Any], ui: Ui, label: str, total: int
) -> None:
    ui.phase(label, total)
    got, deadline = 0, time.monotonic() + SETUP_TIMEOUT
    while got < len(workers):
        if await in_thread(ready.acquire, True, 0.25):
            got += 1
        sockets = sum(c[2] for c in progress)
        ui.update(sockets, f"{sockets} sockets")
        if any(not p.is_alive() for p in workers) or time.monotonic() > deadline:
            raise RuntimeError("load-test workers did not get ready (see errors above)")


async def _collect(
    pipes: list[Any],
    workers: list[Any],
    progress: list[Any],
    ui: Ui,
    label: str,
    job: Job,
    start: float,
) -> list[Any]:
    total = job.warmup + job.duration
    ui.phase(label, total)
    limit = start + total + job.drain + 60
    results: list[Any] = [None] * len(pipes)
    last = (start, 0)
    while any(r is None for r in results) and time.monotonic() < limit:
        await asyncio.sleep(0.25)
        now, moves = time.monotonic(), sum(c[0] for c in progress)
        rate = (moves - last[1]) / max(1e-9, now - last[0])
        last = (now, moves)
        info = (
            f"{rate:,.0f} moves/s, {sum(c[1] for c in progress)} games"
            if job.mode in ("games", "storm")
            else f"{sum(c[3] for c in progress)} seated"
        )
        ui.update(min(total, now - start), info)
        for i, pipe in enumerate(pipes):
            if results[i] is None and pipe.poll():
                results[i] = pipe.recv()
            elif results[i] is None and not workers[i].is_alive() and not pipe.poll():
                results[i] = ("error", f"worker {i} died (exit {workers[i].exitcode})", 0)
    return [r or ("error", "no answer in time", 0) for r in results]


def worker_main(job: Job, conn: Any, ready: Any, go: Any, start: Any, progress: Any) -> None:
    """Entry point of a worker process: run `job`, send the tally through `conn`."""
    random.seed(job.seed)

    async def wait_go() -> float:
        await asyncio.get_running_loop().run_in_executor(None, go.wait)
        return float(start.value)

    async def main() -> Tally:
        return await run_job(job, ready.release, wait_go, progress)

    try:
        tally = asyncio.run(main())
        conn.send(("ok", tally.as_dict(), os.getpid()))
    except BaseException as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}", os.getpid()))
    finally:
        conn.close()
