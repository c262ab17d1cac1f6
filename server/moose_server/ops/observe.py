"""How an instance watches itself: its parts report commits, fired deadlines and
fan-outs, and these become metrics (metrics.py) and log lines. Game events are
logged by the instance that committed them, so each is logged once in the
whole service: game_start, timeout, away, back, game_over.

`Observer` is one of the listeners `Games` is built with: it counts the moves
of each commit and logs its events. The hub and the deadlines report to the
metrics themselves (`Metrics.delivered`, `fanned_out`, `fired`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from moose_server.ops.metrics import Metrics
from moose_server.storage.store import Entry

__all__ = ["LAG_PROBE", "Observer", "collections_timed", "watch_loop"]

log = logging.getLogger("moose_server.play.games")

LAG_PROBE = 0.05  # seconds between two looks at the event loop's lag


class Observer:
    """Counts the moves of this instance's commits and logs their events."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def committed(self, game: str, entries: list[Entry]) -> None:
        """A commit of this instance (Games tells, after the hub)."""
        self.metrics.committed(entries)
        _log_events(game, entries)


def _log_events(game: str, entries: Sequence[Entry]) -> None:
    """One log line for each event worth one: not the plain moves."""
    for entry in entries:
        event = entry.event
        kind = event["kind"]
        if kind == "move" and event["auto"] != "timeout":
            continue
        ids = {"game": game, "seat": event.get("seat"), "seq": entry.seq}
        if kind == "move":
            log.info(
                "timeout: seat %d of %s played %s",
                event["seat"],
                game,
                event["move"],
                extra={"event": "timeout", **ids},
            )
        elif kind in ("away", "back"):
            log.info("%s: seat %d of %s", kind, event["seat"], game, extra={"event": kind, **ids})
        elif kind == "start":
            log.info(
                "game %s dealt for %s",
                game,
                ", ".join(event["names"]),
                extra={"event": "game_start", **ids},
            )
        elif kind == "over":
            log.info(
                "game %s over: scores %s, winners %s",
                game,
                event["scores"],
                event["winners"],
                extra={"event": "game_over", **ids},
            )


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
