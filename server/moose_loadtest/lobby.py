"""`moose loadtest --lobby`: a public lobby at human pace, measured as it grows.

Players join in steps (e.g. 2,000, 5,000, 10,000 and as many as the file
limits allow). Each plays at a human pace: after an event that offers it moves
it thinks for a random time around `games / rate` seconds (answering a moose
quicker), so that the whole lobby makes about `rate` moves a second whatever
its size; a small feedback loop per worker keeps that rate (within a factor of 2
of that pace: a server that cannot take the rate is not driven harder). Games end all the
time and their players queue again, so matchmaking never stops.

A step: the new players connect and queue; the games they are dealt are
fast-forwarded (their seats move at once up to a point set by the game id, at
most a game's length) so that the lobby holds games of every age, and games
end at a steady rate from then on, as in a lobby that has run for hours; then
a settling time at human pace; then the measured window. The players of
earlier steps play on throughout.

This module is the players' side: each worker process (`worker_main`) answers
the parent's commands on a pipe: ``("grow", players here)`` (it answers
``("grown", n)``), ``("settled",)``, ``("window", start, end)`` (it answers
with the window's tally), ``("stop",)``. The parent is `lobby_phase.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import zlib
from typing import Any

from moose_loadtest.crowd import (
    CONNECT_AT_ONCE,
    Job,
    Player,
    Run,
    Tally,
    client_sessions,
    raise_nofile,
)
from moose_loadtest.deployment import TURN_TIME
from moose_loadtest.housekeeping import collect_in_steps, watch_loop

__all__ = ["GAME_MOVES", "LATE", "LobbyRun", "spread_of", "worker_main"]

GAME_MOVES = 48  # fast-forward at most this far: a 4-player game of greedy bots has ~52 moves
LATE = 5.0  # seconds after a window to wait for the answers to moves sent in it
ANSWER_THINK = 1.0  # seconds at most to answer a moose (the answer deadline is 8 s)
_TURN = 0.6 * TURN_TIME  # think at most this long: well inside a turn's time
ADJUST_EVERY = 2.0  # seconds between adjustments of the think time
_NOTHING = (float("inf"), float("-inf"))  # a window no time is in


def spread_of(game: str) -> int:
    """How many moves a game dealt while the lobby grows is fast-forwarded."""
    return zlib.crc32(game.encode()) % GAME_MOVES


class LobbyRun(Run):
    """The players of one worker in a lobby: think times, fast-forward, a window per step."""

    def __init__(self, job: Job, start: float) -> None:
        super().__init__(job, start)
        self.window = self.tally.window = _NOTHING  # nothing counts until a window opens
        self.joined = 0  # players made so far (each gets the next index)
        self.spreading = False  # fast-forward new games (while the lobby grows)
        self.think_mean = self.nominal = 1.0  # seconds; from the lobby's size, then adjusted
        self.seated_once: set[int] = set()  # players that had a match since they joined
        self._paced_moves = 0  # moves sent after a think time, for the rate feedback
        self.lags: list[float] = []  # this worker's event loop lag in the window, ms

    def matched(self, player: Player, queued_at: float, now: float) -> None:
        """Count queue -> match waits of players who queued in the window."""
        self.seated_once.add(player.index)
        if self.in_window(queued_at):
            super().matched(player, queued_at, now)

    def think(self, game: str, seq: int, view: dict[str, Any]) -> float:
        """Fast-forward a new game's first moves; else a human's time to think."""
        if self.spreading and seq < spread_of(game):
            return 0.0
        self._paced_moves += 1
        mean = self.think_mean
        if view.get("pending") is not None:
            return random.uniform(0.2, 1.0) * min(mean, ANSWER_THINK)
        return min(_TURN, random.uniform(0.5, 1.5) * mean)

    def size(self, players: int) -> None:
        """This worker has `players`: each game should move every games / rate seconds."""
        self.nominal = min(_TURN, max(0.05, players / self.job.table / max(1e-9, self.job.rate)))
        self.think_mean = self.nominal

    async def keep_rate(self, rate: float) -> None:
        """Adjust the think time so that this worker's players send `rate` moves a second."""
        last, sent = time.monotonic(), self._paced_moves
        while True:
            await asyncio.sleep(ADJUST_EVERY)
            now = time.monotonic()
            got = (self._paced_moves - sent) / (now - last)
            last, sent = now, self._paced_moves
            if got > 0 and not self.spreading:
                # Within a factor of 2 of a human's pace: a server that cannot take the
                # rate is reported at the rate it took, never driven by faster players.
                factor = min(1.25, max(0.8, got / rate))
                low, high = self.nominal / 2, min(_TURN, self.nominal * 2)
                self.think_mean = min(high, max(low, self.think_mean * factor))

    def lagged(self, seconds: float) -> None:
        """One look at this worker's loop lag (housekeeping.watch_loop): kept in the window."""
        if self.in_window(time.monotonic()):
            self.lags.append(seconds * 1000)

    def open_window(self, start: float, end: float) -> dict[str, int]:
        """Count from `start` to `end` in a fresh tally; the errors seen since the last one."""
        before = dict(self.tally.errors)
        self.lags = []
        self.tally = Tally()
        self.window = self.tally.window = (start, end)
        return before


async def _grow(
    run: LobbyRun,
    players: list[Player],
    want: int,
    sessions: list[Any],
    tasks: list[asyncio.Task[None]],
) -> int:
    """Connect players until this worker has `want`; each plays as soon as it is in."""
    gate = asyncio.Semaphore(CONNECT_AT_ONCE)

    async def one(p: Player) -> None:
        async with gate:
            try:
                await p.connect()
            except Exception as exc:  # counted, not fatal: the report shows how many
                run.tally.errors[f"connect: {type(exc).__name__}"] += 1
                await p.close()
                return
        run.tally.connected += 1
        players.append(p)
        tasks.append(asyncio.create_task(p.play()))

    new = [Player(run, i, sessions[i % len(sessions)]) for i in range(run.joined, want)]
    run.joined = max(run.joined, want)
    await asyncio.gather(*(one(p) for p in new))
    return len(players)


async def _worker(job: Job, conn: Any, progress: Any) -> None:
    raise_nofile(job.players + 256)
    loop = asyncio.get_running_loop()
    sessions = client_sessions(job)
    run = LobbyRun(job, time.monotonic())
    players: list[Player] = []
    tasks: list[asyncio.Task[None]] = []
    reporter = asyncio.create_task(_progress(run, players, progress))
    rate = asyncio.create_task(run.keep_rate(job.rate))
    lag = asyncio.create_task(watch_loop(run.lagged))  # its own delay in every latency
    # The load generator's own collections would otherwise show up as the server's latency.
    collector = asyncio.create_task(collect_in_steps())
    try:
        while True:
            cmd = await loop.run_in_executor(None, conn.recv)
            if cmd[0] == "grow":
                run.spreading = True
                run.size(cmd[1])
                conn.send(("grown", await _grow(run, players, cmd[1], sessions, tasks)))
            elif cmd[0] == "settled":
                run.spreading = False
            elif cmd[0] == "window":
                before = run.open_window(cmd[1], cmd[2])
                await asyncio.sleep(max(0.0, cmd[2] + LATE - time.monotonic()))
                tally = run.tally
                tally.errors.update(_crashed(tasks))
                running = sorted({g for p in players for g in p.seats})
                extra = {
                    "running": running,
                    "think_s": run.think_mean,
                    "settle_errors": before,
                    "lag_ms": run.lags,
                }
                conn.send(("tally", tally.as_dict(), extra))
            else:
                break
    finally:
        for task in (reporter, rate, lag, collector, *tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(p.close() for p in players))
        for s in sessions:
            await s.close()


async def _progress(run: LobbyRun, players: list[Player], progress: Any) -> None:
    """Keep [moves, games, players in, players seated once] in the shared array."""
    while True:
        progress[0], progress[1] = run.tally.moves_total, len(run.tally.games)
        progress[2], progress[3] = len(players), len(run.seated_once)
        await asyncio.sleep(0.2)


def _crashed(tasks: list[asyncio.Task[None]]) -> dict[str, int]:
    """Players whose loop ended with an exception (each counted once, then forgotten)."""
    out: dict[str, int] = {}
    for task in [t for t in tasks if t.done()]:
        tasks.remove(task)
        exc = None if task.cancelled() else task.exception()
        name = f"client: {type(exc).__name__}" if exc is not None else "closed"
        out[name] = out.get(name, 0) + 1
    return out


def worker_main(job: Job, conn: Any, progress: Any) -> None:
    """Entry point of a lobby worker process: answer the parent's commands until `stop`."""
    random.seed(job.seed)
    try:
        asyncio.run(_worker(job, conn, progress))
    except BaseException as exc:
        with contextlib.suppress(OSError):
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()
