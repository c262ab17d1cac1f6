"""`moose loadtest --lobby`, the parent's side: grow the lobby step by step, measure each.

For each lobby size: tell the workers (`lobby.py`) to grow to it, wait until
every new player has been seated once (its first game fast-forwarded), let it
settle at human pace, then measure a window: the players' tallies, the
server's CPU and memory (per player, against the server before the first
player), its histograms from /metrics (move stages, loop lag, collections),
Redis' CPU, commands and slow log, and Redis memory per game.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import multiprocessing as mp
import resource
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from moose_loadtest import deployment
from moose_loadtest.crowd import Job
from moose_loadtest.histograms import Buckets, histogram_delta, metrics_url, scrape
from moose_loadtest.lobby import LATE, worker_main
from moose_loadtest.probes.memory import game_memory
from moose_loadtest.probes.window import RedisProbe
from moose_loadtest.processes import ProcessProbe
from moose_loadtest.run import (
    SETUP_TIMEOUT,
    Options,
    Ui,
    in_thread,
    merge,
    percentiles,
    summary,
)

__all__ = ["capacity", "lobby_phase", "lobby_steps"]

DEFAULT_STEPS = "2000,5000,10000,max"
DEFAULT_RATE = 500.0  # moves a second in all, whatever the lobby's size
SEAT_TIMEOUT = 600.0  # seconds for every new player of a step to be seated once
SETTLE = 15.0  # seconds at human pace between the fast-forward and the window
WORKER_FILES = 256  # files a load-generator process keeps for itself
SERVER_SPARE_FILES = 64  # files a server needs besides its sockets and what it has open


class Workers:
    """The lobby's worker processes and their command pipes (a context manager)."""

    def __init__(self, job: Job, procs: int) -> None:
        ctx = mp.get_context("spawn")
        self.procs, self.pipes, self.progress = [], [], []
        for w in range(procs):
            share = job.players // procs + (w < job.players % procs)
            mine = dataclasses.replace(
                job, players=share, worker=w, seed=job.seed + w, rate=job.rate / procs
            )
            parent, child = ctx.Pipe(duplex=True)
            counters = ctx.Array("q", 4, lock=False)
            proc = ctx.Process(target=worker_main, args=(mine, child, counters), daemon=True)
            proc.start()
            child.close()
            self.procs.append(proc)
            self.pipes.append(parent)
            self.progress.append(counters)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        for pipe in self.pipes:
            with contextlib.suppress(OSError):
                pipe.send(("stop",))
        for proc in self.procs:
            proc.join(15)
            if proc.is_alive():
                proc.kill()

    def send(self, make: Callable[[int], tuple[Any, ...]]) -> None:
        """Send each worker the command `make(worker index)`."""
        for w, pipe in enumerate(self.pipes):
            pipe.send(make(w))

    def counter(self, index: int) -> int:
        """One progress counter summed over the workers."""
        return sum(int(c[index]) for c in self.progress)

    async def answers(
        self, kind: str, timeout: float, ui: Ui, info: Callable[[], str]
    ) -> list[Any]:
        """Each worker's next answer, which must be of `kind`."""
        out: list[Any] = [None] * len(self.pipes)
        deadline = time.monotonic() + timeout
        while any(o is None for o in out):
            await asyncio.sleep(0.25)
            ui.update(0, info())
            for i, pipe in enumerate(self.pipes):
                if out[i] is None and pipe.poll():
                    out[i] = pipe.recv()
                    if out[i][0] != kind:
                        raise RuntimeError(f"lobby worker {i}: {out[i][1:]}")
                elif out[i] is None and not self.procs[i].is_alive():
                    raise RuntimeError(f"lobby worker {i} died (exit {self.procs[i].exitcode})")
            if time.monotonic() > deadline:
                raise RuntimeError(f"lobby workers did not answer {kind!r} in {timeout:.0f} s")
        return out


def lobby_steps(spec: str, capacity: int, table: int) -> list[int]:
    """The lobby sizes asked for ("2000,5000,max"), each a whole number of tables."""
    steps = []
    for word in spec.split(","):
        word = word.strip().lower()
        n = capacity if word == "max" else int(word)
        if n < table:
            raise ValueError(f"a lobby step of {n} players is less than one table")
        steps.append(min(n, capacity) // table * table)
    return sorted(set(steps))


def capacity(pid: int | None, procs: int, own_nofile: int) -> dict[str, int]:
    """How many players the server and the load generator can hold, and why."""
    limits = {
        "server_max_sockets": deployment.max_sockets(),
        "load_generator": procs * max(0, own_nofile - WORKER_FILES),
    }
    if pid:
        probe = ProcessProbe(pid)
        nofile = probe.nofile()
        if nofile:
            limits["server_files"] = nofile - probe.proc.num_fds() - SERVER_SPARE_FILES
    limits["players"] = max(0, min(limits.values()))
    return limits


class _Window:
    """Server, load generator and Redis over one step's window."""

    def __init__(self, pid: int | None, redis_url: str | None, url: str) -> None:
        self.server = ProcessProbe(pid) if pid else None
        self.redis = RedisProbe(redis_url) if redis_url else None
        self.metrics = metrics_url(url)
        self.gens: list[ProcessProbe] = []
        self._scrape: Buckets = {}
        self._slow = -1

    async def start(self, workers: list[int]) -> None:
        self.gens = [ProcessProbe(w) for w in workers]
        for probe in (self.server, *self.gens):
            if probe:
                probe.start()
        self._scrape = await in_thread(scrape, self.metrics)
        if self.redis:
            await self.redis.start()
            self._slow = await self.redis.slowlog_mark()

    async def stop(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.server:
            self.server.stop()
            out["server"] = {
                "cpu_percent": round(self.server.cpu_percent, 1),
                "rss_mb": round(self.server.rss() / 2**20, 1),
            }
        out["load_generator"] = {"cpu_percent": round(sum(g.stop() for g in self.gens), 1)}
        after = await in_thread(scrape, self.metrics)
        out["server_histograms"] = histogram_delta(self._scrape, after)
        if self.redis:
            await self.redis.stop()
            out["redis"] = {
                "cpu_percent": round(self.redis.cpu_percent, 1),
                "commands": sum(self.redis.commands.values()),
                "slowlog": await self.redis.slowlog_since(self._slow),
            }
        return out


async def lobby_phase(
    opts: Options,
    url: str,
    pid: int | None,
    redis_url: str | None,
    ui: Ui,
    source_ips: Callable[[int], int],
) -> dict[str, Any]:
    """Grow the lobby step by step; the figures of each step's window."""
    rate = opts.rate or DEFAULT_RATE
    limits = capacity(pid, opts.procs, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    steps = lobby_steps(opts.lobby or DEFAULT_STEPS, limits["players"], opts.table)
    job = Job(
        mode="lobby",
        url=url,
        players=steps[-1],
        table=opts.table,
        bot=opts.bot,
        rate=rate,
        source_ips=source_ips(steps[-1]),
    )
    base = ProcessProbe(pid).rss() if pid else None
    window = _Window(pid, redis_url, url)
    out: dict[str, Any] = {
        "rate": rate,
        "limits": limits,
        "steps": [],
        "server_rss_before_mb": base and round(base / 2**20, 1),
    }
    finished: list[str] = []
    try:
        with Workers(job, opts.procs) as workers:
            for n in steps:
                step, ended = await _step(n, opts, workers, window, ui, base)
                out["steps"].append(step)
                finished += ended
            last = time.monotonic()
        if window.redis is not None and finished:
            # The games that ended in the windows, once their grace is over: compacted.
            grace = deployment.game_grace() + 2.0
            ui.phase("lobby: waiting for finished games' grace", grace)
            await asyncio.sleep(max(0.0, last + grace - time.monotonic()))
            out["redis_memory_finished_after_grace"] = await game_memory(window.redis, finished)
    finally:
        if window.redis is not None:
            await window.redis.aclose()
    return out


async def _step(
    n: int, opts: Options, workers: Workers, window: _Window, ui: Ui, base: int | None
) -> tuple[dict[str, Any], list[str]]:
    """One lobby size: join, seat, spread, settle, measure."""
    procs = len(workers.pipes)
    # Each phase's start, Unix time: to place what a server log or a loop watcher
    # (bench/loopwatch.py) saw at some time in the step.
    times = {"joining": round(time.time(), 3)}
    ui.phase(f"lobby {n:,}: joining", 1)
    workers.send(lambda w: ("grow", n // procs + (w < n % procs)))

    def seated() -> str:
        return f"{workers.counter(2):,} in, {workers.counter(3):,} seated"

    players = sum(a[1] for a in await workers.answers("grown", SETUP_TIMEOUT, ui, seated))
    deadline = time.monotonic() + SEAT_TIMEOUT
    while workers.counter(3) < players and time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        ui.update(0, seated())
    workers.send(lambda w: ("settled",))
    times["settling"] = round(time.time(), 3)
    settle = max(opts.warmup, SETTLE)
    ui.phase(f"lobby {n:,}: settling", settle)
    await asyncio.sleep(settle)
    lead = 0.2  # seconds for the workers to hear of the window before it opens
    start = time.monotonic() + lead
    end = start + opts.duration
    times["window"] = round(time.time() + lead, 3)
    times["window_end"] = round(times["window"] + opts.duration, 3)
    workers.send(lambda w: ("window", start, end))
    ui.phase(f"lobby {n:,}: measuring", opts.duration)
    await asyncio.sleep(max(0.0, start - time.monotonic()))
    await window.start([p.pid or 0 for p in workers.procs])
    while time.monotonic() < end:
        await asyncio.sleep(min(0.5, max(0.0, end - time.monotonic())))
        ui.update(time.monotonic() - start, f"{workers.counter(0):,} moves")
    notes = await window.stop()
    answers = await workers.answers("tally", LATE + 120, ui, seated)
    merged = merge([a[1] for a in answers], opts.table)
    step: dict[str, Any] = {"players": players, **summary(merged, opts.duration), **notes}
    # The progress line ends on the window's figure, the one the table shows.
    ui.update(opts.duration, f"{step['moves_per_second']:,.0f} moves/s, {seated()}")
    step["times"] = times
    step["think_s"] = round(sum(a[2]["think_s"] for a in answers) / len(answers), 2)
    if "load_generator" in step:  # its own delay, part of every latency it measures
        lags = [ms for a in answers for ms in a[2]["lag_ms"]]
        step["load_generator"]["loop_lag_ms"] = percentiles(lags)
    settle_errors: Counter[str] = Counter()
    for a in answers:
        settle_errors.update(a[2]["settle_errors"])
    step["errors_before_window"] = dict(settle_errors)
    if base is not None and "server" in notes:
        grown = notes["server"]["rss_mb"] * 2**20 - base
        step["server_bytes_per_player"] = round(grown / max(1, players))
    ended = sorted({g for a in answers for g in a[1]["games"]})
    if window.redis is not None:
        running = sorted({g for a in answers for g in a[2]["running"]})
        step["redis_memory_running"] = await game_memory(window.redis, running)
        step["redis_memory_finished_in_grace"] = await game_memory(window.redis, ended)
    return step, ended
