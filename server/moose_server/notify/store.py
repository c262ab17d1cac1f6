"""The Redis side of notices: the delivery stream and its group, marks, subscriptions.

Every notice is an entry of one capped stream (keys.NOTICES_KEY), read by the
consumer group `GROUP` that every instance joins with a consumer of its own.
An entry is acknowledged only after it was sent (or given up); one that stays
pending longer than the claim idle time (its instance died mid-send) is taken
over by another instance's XAUTOCLAIM. A notice sent is marked (`sent_key`,
kept a day) before its entry is acknowledged, so that an entry taken over after
its send is acknowledged, not sent again.
"""

from __future__ import annotations

import json
from typing import Any

from moose_server.notify.rules import Notice, subscription_id
from moose_server.storage.failures import StorageError
from moose_server.storage.gateway import Gateway, StreamEntry
from moose_server.storage.keys import (
    DUE_NOTICES_KEY,
    NOTICES_KEY,
    notify_key,
    push_key,
    sent_key,
    told_key,
)

__all__ = ["GROUP", "NotifyStore"]

GROUP = "senders"
KEPT = 100_000  # entries kept in the stream (acknowledged ones are history only)
SENT_TTL = 86_400  # seconds a sent mark is kept: far beyond any claim idle time


class NotifyStore:
    """Notices in Redis: queued, taken, marked sent; a player's subscriptions and settings."""

    def __init__(self, redis: Gateway, *, per_player: int) -> None:
        self.redis = redis
        self.per_player = per_player

    # -- the delivery stream --------------------------------------------------

    async def join_group(self) -> None:
        """Create the stream and its consumer group unless they are there."""
        try:
            await self.redis.xgroup_create(NOTICES_KEY, GROUP)
        except StorageError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def queue(self, notices: list[Notice]) -> None:
        """Add the notices to the stream, in one round trip."""
        await Gateway.all(self.redis.xadd(NOTICES_KEY, n.fields(), maxlen=KEPT) for n in notices)

    async def schedule(self, notice: Notice, due_ms: int) -> None:
        """Queue the notice once `due_ms` (Redis time) has come."""
        await self.redis.zadd(DUE_NOTICES_KEY, {json.dumps(notice.fields()): due_ms})

    async def release_due(self, count: int) -> int:
        """Move the notices that are due to the stream: how many.

        Added before they leave the set: two instances may both add one, and the
        sent mark keeps it to one send; an instance dying between the two loses none."""
        sec, usec = await self.redis.time()
        now = sec * 1000 + usec // 1000
        due = await self.redis.zrangebyscore(DUE_NOTICES_KEY, "-inf", now, offset=0, count=count)
        if not due:
            return 0
        notices = [
            Notice.of({k.encode(): v.encode() for k, v in json.loads(m).items()}) for m in due
        ]
        await self.queue(notices)
        await self.redis.zrem(DUE_NOTICES_KEY, *due)
        return len(due)

    async def take(self, consumer: str, idle_ms: int, count: int) -> list[StreamEntry]:
        """Entries pending longer than `idle_ms` (now ours), then entries new to the group."""
        claimed = await self.redis.xautoclaim(NOTICES_KEY, GROUP, consumer, idle_ms, count)
        fresh = await self.redis.xreadgroup(NOTICES_KEY, GROUP, consumer, count)
        return claimed + fresh

    async def done(self, entry_id: bytes) -> None:
        """Acknowledge an entry: sent, or given up."""
        await self.redis.xack(NOTICES_KEY, GROUP, entry_id)

    async def was_sent(self, notice: Notice) -> bool:
        """Whether the notice went out already (its entry was taken over after the send)."""
        return await self.redis.exists(sent_key(notice.id))

    async def mark_sent(self, notice: Notice) -> None:
        """Mark the notice sent, before its entry is acknowledged."""
        await self.redis.set(sent_key(notice.id), "1", px=SENT_TTL * 1000)

    async def quiet(self, notice: Notice, ms: int) -> bool:
        """Take the notice's subject for `ms`: False if another notice holds it (one of the
        same game and kind went out lately); True if it was free or this notice holds it
        (its entry was taken over from an instance that died before its send)."""
        key = told_key(notice.player, notice.subject)
        held = await self.redis.set(key, notice.id, px=ms, nx=True, get=True)
        return held is None or held.decode() == notice.id

    async def unquiet(self, notice: Notice) -> None:
        """Let go of the subject: the notice went out on no channel."""
        await self.redis.delete(told_key(notice.player, notice.subject))

    # -- a player's subscriptions and settings --------------------------------

    async def subscribe(self, player: str, sub: dict[str, Any]) -> bool:
        """Keep a subscription (a new one while under the cap): False when at the cap."""
        key, ident = push_key(player), subscription_id(sub["endpoint"])
        there, count = self.redis.hexists(key, ident), self.redis.hlen(key)
        if not await there and await count >= self.per_player:
            return False
        await self.redis.hset(key, {ident: json.dumps(sub)})
        return True

    async def unsubscribe(self, player: str, endpoint: str) -> bool:
        """Drop a subscription: whether it was there."""
        return bool(await self.redis.hdel(push_key(player), subscription_id(endpoint)))

    async def subscriptions(self, player: str) -> list[dict[str, Any]]:
        """The player's subscriptions."""
        return [json.loads(v) for v in (await self.redis.hgetall(push_key(player))).values()]

    async def prefs(self, player: str) -> dict[str, str]:
        """The player's settings: kind -> "0" when off; email and email_ok."""
        got = await self.redis.hgetall(notify_key(player))
        return {k.decode(): v.decode() for k, v in got.items()}

    async def set_prefs(
        self, player: str, changes: dict[str, str], drop: tuple[str, ...] = ()
    ) -> None:
        """Change some settings (and drop some fields), in one round trip."""
        calls = [self.redis.hset(notify_key(player), changes)] if changes else []
        if drop:
            calls.append(self.redis.hdel(notify_key(player), *drop))
        await Gateway.all(calls)
