"""This instance's one pub/sub connection (`Subscription`), built last.

It is given, when built, the part that hears each channel: the hub (game
wake-ups, player messages), the chat (its lines) and the moderators' notices.
Each message goes to its channel's part in the order it came, and no part may
wait in it (the subscription never falls behind). Built after every part it
tells, it is the only place they meet the subscription: the hub and the chat,
which delivers lines to the hub's sockets, no longer need each other built
first.

Pub/sub may lose messages while it reconnects: after each subscription but the
first, `subscribed(again=True)` tells the hub, which forgets what it holds and
re-reads every game it serves. A subscription silent for `silent` seconds gets
a PING, and one that does not answer as long again is taken for lost (a
half-open TCP connection, or a proxy that stopped forwarding, gives no error of
its own) and made anew.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from moose_server.storage.failures import ConnectionLost, StorageError
from moose_server.storage.gateway import PubSubSource
from moose_server.tasks import cancelling

__all__ = ["SILENT", "Subscription"]

log = logging.getLogger(__name__)

SILENT = 10.0  # seconds without a message before a PING (and as long again for its answer)

Heard = Callable[[bytes], None]


class Subscription:
    """Listens on `channels` until cancelled: each message's data to its channel's part."""

    def __init__(
        self,
        redis: PubSubSource,
        channels: Mapping[bytes, Heard],
        *,
        sharded: Mapping[bytes, Heard] | None = None,
        subscribed: Callable[[bool], None] | None = None,
        silent: float = SILENT,
    ) -> None:
        self.redis = redis
        self.channels = dict(channels)
        self.sharded = dict(sharded or {})  # SSUBSCRIBEd: their messages come as "smessage"
        self.subscribed = subscribed  # told of each subscription: again (True) or first
        self.silent = silent
        self.ready = asyncio.Event()  # set once the first subscription is made

    async def run(self) -> None:
        """Subscribe, and subscribe again after a lost connection, until cancelled."""
        while True:
            try:
                async with self.redis.pubsub() as pubsub:
                    await pubsub.subscribe(*self.channels)
                    if self.sharded:
                        await pubsub.ssubscribe(*self.sharded)
                    if self.subscribed is not None:
                        self.subscribed(self.ready.is_set())
                    self.ready.set()
                    await self._listen(pubsub)
            except (StorageError, OSError) as exc:
                if cancelling():
                    raise asyncio.CancelledError from exc
                log.warning("pub/sub connection lost (%s); resubscribing", exc)
                await asyncio.sleep(0.2)

    async def _listen(self, pubsub: Any) -> None:
        """Hand on every message; PING a silent subscription, and give up on one that
        does not answer (redis-py's blocking read would wait on it forever)."""
        pinged = False
        while True:
            message = await pubsub.get_message(timeout=self.silent)
            if message is not None:
                pinged = False
                self.hand_on(message)
            elif pinged:
                raise ConnectionLost(f"no answer to a PING in {self.silent:.1f} s")
            else:
                await pubsub.ping()
                pinged = True

    def hand_on(self, message: dict[str, Any]) -> None:
        """One pub/sub message to the part that hears its channel; never waits."""
        kind = message.get("type")
        if kind == "message":
            heard = self.channels.get(message["channel"])
        elif kind == "smessage":
            heard = self.sharded.get(message["channel"])
        else:
            return
        if heard is None:
            return
        try:
            heard(message["data"])
        except Exception:
            log.exception("cannot deliver %r", message)
