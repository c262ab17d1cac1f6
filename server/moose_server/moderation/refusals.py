"""Refusals of limits, recorded for operators (`moose admin refusals`).

Every refusal that is a limit (`accounts.limits.Limited`, a socket's message
flood, an HTTP 429) is noted by the one place that turns it into an answer
(net/ws.py, moderation/gate.py) with `refused`, which only appends to a bounded
buffer: a flood costs no Redis call per refusal. `run` writes the buffer out
once a second in one batch (moderation/store.py: a capped stream of
recent refusals, and per limit and hour a sorted set of the clients refused,
which expires). Should a flood fill the buffer between two writes, the
refusals beyond `BUFFERED` are counted in `dropped` and not kept.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from moose_server.addresses import limit_subject
from moose_server.moderation.store import ModerationStore, Refused
from moose_server.storage.failures import StorageError

__all__ = ["BUFFERED", "Refusals"]

log = logging.getLogger(__name__)

BUFFERED = 2000  # refusals kept between two writes


class Refusals:
    """Notes refusals of limits and writes them to Redis once a `interval`."""

    def __init__(
        self, store: ModerationStore, now_ms: Callable[[], int], interval: float = 1.0
    ) -> None:
        self.store = store
        self.now_ms = now_ms  # Redis' clock, as this instance knows it (bans.Bans.now)
        self.interval = interval
        self.dropped = 0
        self._buffer: list[Refused] = []

    def refused(self, limit: str, address: str, player: str | None = None, name: str = "") -> None:
        """Note one refusal of `limit` (never waits)."""
        if len(self._buffer) >= BUFFERED:
            self.dropped += 1
            return
        at = self.now_ms()
        self._buffer.append(Refused(limit, limit_subject(address), player or "", name, at))

    async def flush(self) -> None:
        """Write what was noted since the last write."""
        batch, self._buffer = self._buffer, []
        try:
            await self.store.record_refusals(batch)
        except (StorageError, OSError) as exc:
            log.warning("cannot record %d refusals: %s", len(batch), exc)

    async def run(self) -> None:
        """Write the noted refusals out every `interval` s, until cancelled (then once more)."""
        try:
            while True:
                await asyncio.sleep(self.interval)
                await self.flush()
        finally:
            if self._buffer:
                await asyncio.shield(self.flush())
