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
re-reads every game it serves. Each connection's replies are read as redis-py's
connection parsed them (`Connection.read_response`), with none of
`PubSub.get_message`'s work per message (a timeout armed, a retry wrapper, a
health check, a dict): its errors end the subscription, which is made anew and
the hub told. Every `silent` seconds a subscription that heard nothing since the
last look gets a PING, and one that has not answered by the next look is taken
for lost (a half-open TCP connection, or a proxy that stopped forwarding, gives
no error of its own) and made anew.

On a Redis Cluster a sharded channel lives on the nodes of its slot's shard
only: the sharded channels are SSUBSCRIBEd on one connection per primary, each
channel on the primary that holds its slot (`ShardSource.owners`), each
connection read on its own, so that a dead primary holds up no other one's
messages. A connection that fails, goes silent, or is told by the server that
its channels went (a `sunsubscribe`: the slot moved, or the node is a replica
now) is lost: the slot table is read again and the channels that were on it
are subscribed where they are now, the others' connections untouched. Its
messages meanwhile may be lost, so once every channel is subscribed again,
`subscribed(again=True)` tells the hub, as for the main connection.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from moose_server.storage.failures import ConnectionLost, StorageError
from moose_server.storage.gateway import PubSubSource
from moose_server.tasks import cancel_and_wait, cancelling

__all__ = ["SILENT", "ShardSource", "Subscription"]

log = logging.getLogger(__name__)

SILENT = 10.0  # seconds without a message before a PING (and as long again for its answer)

AGAIN = (0.1, 0.2, 0.5, 1.0)  # seconds before a lost sharded channel is subscribed again

Heard = Callable[[bytes], None]


@runtime_checkable
class ShardSource(Protocol):
    """Where the sharded channels live on a cluster (storage/connection.NodePubSub)."""

    def owners(self, channels: Iterable[bytes]) -> dict[str, tuple[bytes, ...]]:
        """The channels by the primary that holds each one's slot ("" if none known)."""
        ...

    async def refresh(self) -> None:
        """Read the cluster's slot table again."""
        ...

    def shard(self, name: str) -> Any:
        """A PubSub on the primary `name` whose lost connection is an error."""
        ...


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
        # A cluster's sharded channels: one connection per primary (see above).
        self.shards = self.sharded and isinstance(redis, ShardSource)
        self._main = asyncio.Event()  # the main connection subscribed once
        self._sharded = asyncio.Event()  # ...and every sharded channel

    async def run(self) -> None:
        """Subscribe, and subscribe again after a lost connection, until cancelled."""
        if not self.shards:
            self._sharded.set()
            await self._run_main()
            return
        shards = asyncio.ensure_future(self._run_shards())
        try:
            await self._run_main()
        finally:
            await cancel_and_wait([shards])

    def _made(self) -> None:
        if self._main.is_set() and self._sharded.is_set():
            self.ready.set()

    async def _run_main(self) -> None:
        while True:
            try:
                async with self.redis.pubsub() as pubsub:
                    await pubsub.subscribe(*self.channels)
                    if self.sharded and not self.shards:
                        await pubsub.ssubscribe(*self.sharded)
                    if self.subscribed is not None:
                        self.subscribed(self._main.is_set())
                    self._main.set()
                    self._made()
                    await self._listen(pubsub)
            except (StorageError, OSError) as exc:
                if cancelling():
                    raise asyncio.CancelledError from exc
                log.warning("pub/sub connection lost (%s); resubscribing", exc)
                await asyncio.sleep(0.2)

    async def _run_shards(self) -> None:
        """The sharded channels on a cluster, each on its slot's primary; a lost
        connection's channels subscribed again where the slot table says they are
        now, and the hub told once they all are (see the module docstring)."""
        assert isinstance(self.redis, ShardSource)
        source: ShardSource = self.redis
        live: dict[str, tuple[tuple[bytes, ...], asyncio.Task[None]]] = {}
        lost, failures = False, 0
        try:
            while True:
                if lost:
                    try:
                        await source.refresh()
                    except (StorageError, OSError) as exc:
                        log.info("cannot read the cluster's slot table yet: %s", exc)
                plan = source.owners(self.sharded)
                gone = [
                    task
                    for name, (channels, task) in list(live.items())
                    if task.done() or plan.get(name) != channels
                ]
                for name in [n for n, (_, t) in live.items() if t in gone]:
                    del live[name]
                await cancel_and_wait(gone)
                made: list[asyncio.Future[None]] = []
                for name, channels in plan.items():
                    if name not in live:
                        up = asyncio.get_running_loop().create_future()
                        task = asyncio.ensure_future(self._shard(source, name, channels, up))
                        live[name] = (channels, task)
                        made.append(up)
                tasks = [task for _, task in live.values()]
                # Until each new connection confirms its channels, or a connection ends.
                waiting = {*made, *tasks}
                while any(not up.done() for up in made):
                    done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                    if any(t in done for t in tasks):
                        break
                    waiting -= done
                if all(up.done() and not up.cancelled() for up in made) and not any(
                    t.done() for t in tasks
                ):
                    failures = 0
                    if lost and self.subscribed is not None:
                        self.subscribed(True)  # messages may have been lost meanwhile
                    lost = False
                    self._sharded.set()
                    self._made()
                    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for name, (_, task) in live.items():
                    if task.done() and not task.cancelled():
                        # The first loss is a warning; the tries until it is back, info.
                        say = log.info if failures else log.warning
                        why = task.exception()
                        say("sharded pub/sub on %s lost (%s); resubscribing", name, why)
                lost = True
                await asyncio.sleep(AGAIN[min(failures, len(AGAIN) - 1)])
                failures += 1
        finally:
            await cancel_and_wait([task for _, task in live.values()])

    async def _shard(
        self, source: ShardSource, name: str, channels: tuple[bytes, ...], up: asyncio.Future[None]
    ) -> None:
        """SSUBSCRIBE `channels` on the primary `name`; once the server confirmed them
        all, `up` is set and the messages handed on until the connection is lost."""
        try:
            if not name:
                raise ConnectionLost("no primary holds the slot of a sharded channel")
            async with source.shard(name) as pubsub:
                for channel in channels:  # one slot each: no CROSSSLOT
                    await pubsub.ssubscribe(channel)
                pending = set(channels)
                while pending:
                    reply = await pubsub.connection.read_response(
                        timeout=self.silent, disconnect_on_error=False, push_request=True
                    )
                    if reply is None:
                        raise ConnectionLost(f"no SSUBSCRIBE answer in {self.silent:.1f} s")
                    if reply[0] == b"ssubscribe":
                        pending.discard(reply[1])
                    else:
                        self._hand_on_shard(reply)
                up.set_result(None)
                await self._listen(pubsub, self._hand_on_shard)
        finally:
            if not up.done():
                up.cancel()

    def _hand_on_shard(self, reply: Any) -> None:
        """A reply on a primary's sharded connection; a `sunsubscribe` the server
        pushed (the slot is no longer the node's) loses the connection."""
        if reply[0] == b"sunsubscribe":
            raise ConnectionLost(f"the server unsubscribed {reply[1]!r}")
        self.hand_on(reply)

    async def _listen(self, pubsub: Any, hand_on: Callable[[Any], None] | None = None) -> None:
        """Hand on every reply of the connection, read as redis-py's connection parsed
        it (`read_response`: no per-message timeout, retry, health check or dict, as
        `PubSub.get_message` has), in a task of its own; meanwhile, every `silent`
        seconds, PING a subscription that heard nothing since the last look, and give
        up on one that did not answer by the next (redis-py's read would wait on it
        forever). A lost connection ends the read, and this, with its error."""
        hand_on = hand_on or self.hand_on
        read = pubsub.connection.read_response
        heard = 0

        async def reader() -> None:
            nonlocal heard
            while True:
                reply = await read(timeout=math.inf, disconnect_on_error=False, push_request=True)
                heard += 1
                hand_on(reply)

        reading = asyncio.ensure_future(reader())
        try:
            seen, pinged = heard, False
            while True:
                await asyncio.wait([reading], timeout=self.silent)
                if reading.done():
                    reading.result()  # its error: the connection is lost
                    raise ConnectionLost("the pub/sub read ended")
                if heard != seen:
                    seen, pinged = heard, False
                elif pinged:
                    raise ConnectionLost(f"no answer to a PING in {self.silent:.1f} s")
                else:
                    await pubsub.ping()
                    pinged = True
        finally:
            await cancel_and_wait([reading])
            if not reading.cancelled():
                reading.exception()  # seen, if this ended before it was looked at

    def hand_on(self, reply: Any) -> None:
        """One pub/sub reply, as read (``[b"message", channel, data]``; sharded:
        ``b"smessage"``), to the part that hears its channel; never waits."""
        kind = reply[0]
        if kind == b"message":
            heard = self.channels.get(reply[1])
        elif kind == b"smessage":
            heard = self.sharded.get(reply[1])
        else:
            return
        if heard is None:
            return
        try:
            heard(reply[2])
        except Exception:
            log.exception("cannot deliver %r", reply)
