"""How an instance watches itself: its parts report commits, fired deadlines and
fan-outs here, and this module turns them into metrics (metrics.py) and log
lines. Game events are logged by the instance that committed them, so each is
logged once in the whole service: game_start, timeout, away, back, game_over.

`observe(services)` wires it once the parts are built; the parts only know a
callback each (`Games.on_commit`, `Games.on_timeout`, `Hub.on_fanout`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from moose_server.net.hub import Hub
from moose_server.net.services import Services
from moose_server.ops.metrics import Metrics
from moose_server.storage.store import Entry

__all__ = ["LAG_PROBE", "collections_timed", "observe", "watch_loop"]

log = logging.getLogger("moose_server.play.games")

LAG_PROBE = 0.05  # seconds between two looks at the event loop's lag


def observe(services: Services) -> None:
    """Report the instance's commits, deadlines and fan-outs to its metrics."""
    games, hub, metrics = services.games, services.hub, services.metrics
    deliver = games.on_commit

    def on_commit(game: str, entries: list[Entry]) -> None:
        started = time.perf_counter()
        if deliver is not None:
            deliver(game, entries)
        metrics.committed(game, entries, started, game in hub.games, _awaited(hub, game, entries))
        _log_events(game, entries)

    games.on_commit = on_commit
    games.on_timeout = metrics.fired
    hub.on_fanout = metrics.fanned_out

    async def read() -> tuple[dict[str, int], int]:
        return await services.matchmaker.queue_sizes(), await services.store.running_games()

    metrics.bind(lambda: len(services.connections), lambda: len(hub.games), read)


def _awaited(hub: Hub, game: str, entries: Sequence[Entry]) -> bool:
    """Whether a local socket still waits for these events (it was reading a gap)."""
    if not entries:
        return False
    last = entries[-1].seq
    for peer in hub.games.get(game, ()):
        sub = peer.subs.get(game)
        if sub is not None and sub.seen < last:
            return True
    return False


def _log_events(game: str, entries: Sequence[Entry]) -> None:
    """One log line for each event worth one: not the plain moves."""
    for entry in entries:
        event = entry.event
        kind = event["kind"]
        if kind == "move" and event["auto"] != "timeout":
            continue
        ids = {"game": game, "seat": event.get("seat"), "seq": entry.seq}
        if kind == "move":
            log.info("timeout: seat %d of %s played %s", event["seat"], game, event["move"],
                     extra={"event": "timeout", **ids})  # fmt: skip
        elif kind in ("away", "back"):
            log.info("%s: seat %d of %s", kind, event["seat"], game, extra={"event": kind, **ids})
        elif kind == "start":
            log.info("game %s dealt for %s", game, ", ".join(event["names"]),
                     extra={"event": "game_start", **ids})  # fmt: skip
        elif kind == "over":
            log.info("game %s over: scores %s, winners %s", game, event["scores"],
                     event["winners"], extra={"event": "game_over", **ids})  # fmt: skip


async def watch_loop(record: Callable[[float], None]) -> None:
    """Time how late a timer runs, forever: `record(seconds)` the event loop's lag
    (the server passes moose_loop_lag_seconds' `observe`)."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + LAG_PROBE
        await asyncio.sleep(LAG_PROBE)
        record(max(0.0, loop.time() - due))


@contextlib.contextmanager
def collections_timed(metrics: Metrics) -> Iterator[None]:
    """Time every garbage collection while inside (moose_gc_pause_seconds)."""
    started = [0.0]
    pauses = metrics.gc_pauses

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses[info["generation"]].observe(time.perf_counter() - started[0])

    gc.callbacks.append(on_gc)
    try:
        yield
    finally:
        gc.callbacks.remove(on_gc)
