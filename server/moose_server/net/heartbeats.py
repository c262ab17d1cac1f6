"""Heartbeats: each socket pinged after `heartbeat` seconds without a frame from it, and
cut when the ping gets no answer in half that time, with the work spread in time.

aiohttp's own heartbeat keeps a timer per socket and rounds its time up to the
next whole second (for any period over 5 s): with 10,000 sockets and a 20 s
heartbeat, about 500 pings, as many timers rescheduled and, on Python 3.11, as
many tasks ran in one turn of the event loop at every whole second, and every
move that came in then waited behind them (BENCHMARKS.md). Here one
task looks at a slice of the sockets every `TICK`, so that each socket is
looked at once every `heartbeat / 2`, and a socket's pings go out whenever it
has been silent long enough: a steady trickle instead of a burst a second.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Collection
from typing import Protocol

__all__ = ["TICK", "Heartbeats", "Pingable"]

TICK = 0.1  # seconds between two slices (at most)


class Pingable(Protocol):
    """What the heartbeat needs of a socket."""

    def beat(self, now: float, heartbeat: float) -> None:
        """Ping the socket if it has been silent `heartbeat` s; cut it if a ping went unanswered."""


class Heartbeats:
    """Visits every open socket once every `heartbeat / 2` seconds, a slice at a time."""

    def __init__(self, sockets: Collection[Pingable], heartbeat: float) -> None:
        self.sockets = sockets
        self.heartbeat = heartbeat

    async def run(self) -> None:
        """Visit the sockets until cancelled."""
        loop = asyncio.get_running_loop()
        cycle = self.heartbeat / 2
        tick = min(TICK, cycle / 4)
        todo: list[Pingable] = []
        each = 0
        while True:
            await asyncio.sleep(tick)
            if not todo:  # a new cycle: the sockets open now, in slices
                todo = list(self.sockets)
                each = math.ceil(len(todo) * tick / cycle)
            now = loop.time()
            for sock in todo[-each:]:
                sock.beat(now, self.heartbeat)
            del todo[-each:]
