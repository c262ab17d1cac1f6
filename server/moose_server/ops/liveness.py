"""Instance liveness: a heartbeat per instance, and the queue tickets of dead ones dropped.

Every instance renews ``moose:instance:<id>`` (a key with a TTL of
`instance_ttl`) a few times per TTL. A ticket remembers the instance its player
queued through; any instance that finds tickets of an instance without a
heartbeat drops them (`Matchmaker.forget_instance`) and marks that instance
"dead", so their players are never seated at a table they will not play.

An instance that was only cut off from Redis for longer than the TTL finds the
mark on its next heartbeat: its players' tickets are gone, so it asks its
sockets to reconnect (close 1012); the client library queues again on its own.
After its own heartbeat lapsed without such a mark (Redis itself was down or
restarted), an instance waits one more TTL before it judges others, so that
instances coming back together do not take each other for dead.

Presence reads these heartbeats too (social/presence.py `stranded`): a turn whose
player was connected only through instances without a fresh one is spared once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Protocol

from moose_server.settings import Settings
from moose_server.storage.failures import one_round
from moose_server.storage.store import Store

__all__ = ["Liveness"]

log = logging.getLogger(__name__)

BEATS_PER_TTL = 3
DEAD_MARK_TTL = 3600.0  # how long a dead instance can still learn it was taken for dead
DEAD = b"dead"


class Tickets(Protocol):
    """The queue's tickets by the instance they came through (matchmaking's)."""

    async def ticket_instances(self) -> dict[str, int]:
        """The instances that took the tickets waiting now, with how many each."""

    async def forget_instance(self, instance: str) -> int:
        """Drop the tickets of a dead instance; how many went."""


class Liveness:
    """This instance's heartbeat and the reaping of dead instances' tickets."""

    def __init__(
        self,
        store: Store,
        matchmaker: Tickets,
        settings: Settings,
        on_presumed_dead: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.matchmaker = matchmaker
        self.settings = settings
        self.on_presumed_dead = on_presumed_dead
        self.clock = clock  # seconds; tests pass their own to step past the wait at will
        self._beats = 0
        self._judge_after = 0.0  # clock time before which nobody is reaped

    @property
    def _ttl_ms(self) -> int:
        return max(1, int(self.settings.instance_ttl * 1000))

    async def beat(self) -> None:
        """Renew the heartbeat; notice whether others took us for dead meanwhile."""
        old = await self.store.heartbeat(self.settings.instance_id, self._ttl_ms)
        if old == DEAD:
            log.warning("this instance was taken for dead: its queue tickets were dropped")
            if self.on_presumed_dead is not None:
                self.on_presumed_dead()
        elif old is None and self._beats:
            log.warning("the heartbeat lapsed (Redis unreachable); judging nobody for a while")
            self._judge_after = self.clock() + self.settings.instance_ttl
        self._beats += 1

    async def reap(self) -> list[str]:
        """Drop the tickets of instances without a heartbeat; the instances reaped."""
        if self.clock() < self._judge_after:
            return []
        me = self.settings.instance_id
        others = [i for i in await self.matchmaker.ticket_instances() if i != me]
        if not others:
            return []
        dead = [i for i, ok in zip(others, await self.store.alive(others), strict=True) if not ok]
        for instance in dead:
            dropped = await self.matchmaker.forget_instance(instance)
            await self.store.mark_dead(instance, int(DEAD_MARK_TTL * 1000))
            log.warning("instance %s has no heartbeat: dropped its %d tickets", instance, dropped)
        return dead

    async def run(self) -> None:
        """Beat and reap until cancelled."""
        while True:
            await one_round(self._beat_and_reap, "heartbeat", log)
            await asyncio.sleep(self.settings.instance_ttl / BEATS_PER_TTL)

    async def _beat_and_reap(self) -> None:
        await self.beat()
        await self.reap()
