"""Moderation in Redis: bans, the audit log, refusals, reports, notices.

Every record is small and bounded: bans are a hash (one field per ban), the
audit log, recent refusals and reports are streams capped at a length (trimmed
approximately, which costs Redis nothing), and the heaviest users of each limit
are one sorted set per limit and hour that expires. The keys (`{mod}`, one
slot) are named in keys.py; `moose admin` and every server instance use this
one class. Notices go out on `MODERATION_CHANNEL`: each instance's hub hears
them (moderation/notices.py applies them), and the records here are what an instance
reads again should it miss one.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from moose_server.storage.codec import as_text, pack
from moose_server.storage.gateway import Gateway, Pending, StreamEntry
from moose_server.storage.keys import MODERATION_CHANNEL, ModerationKeys

__all__ = ["HOUR_MS", "RECENT_WRITTEN", "ModerationStore", "Refused", "hour_of"]

HOUR_MS = 3_600_000
KEYS = ModerationKeys()
HEAVY_KEPT = 1000  # clients kept per limit and hour (the heaviest: the rest are trimmed)
RECENT_WRITTEN = 200  # refusals of one write that join the recent ones (all are counted)
Row = dict[str, str]


def hour_of(ms: int) -> int:
    """Hours since the epoch: the bucket of the heaviest users' sorted sets."""
    return ms // HOUR_MS


@dataclass(frozen=True)
class Refused:
    """One refusal of a limit: which limit, whom (address and player, if known), when."""

    limit: str  # "rate_limited:join_table", "http_429:/api/", ...
    address: str  # the client's address as limits count it (an IPv6 /64)
    player: str = ""
    name: str = ""
    at: int = 0  # ms since the epoch


def _rows(entries: Iterable[StreamEntry]) -> list[Row]:
    """Stream entries as dicts of text, with the entry's id as `id` (newest first)."""
    return [
        {"id": as_text(i), **{as_text(k): as_text(v) for k, v in e.items()}} for i, e in entries
    ]


class ModerationStore:
    """Moderation's records in Redis (see the module docstring)."""

    def __init__(
        self,
        redis: Gateway,
        *,
        audit_kept: int = 10_000,
        refusals_kept: int = 10_000,
        reports_kept: int = 10_000,
        heavy_ttl: int = 48 * 3600,
    ) -> None:
        self.redis = redis
        self.audit_kept = audit_kept
        self.refusals_kept = refusals_kept
        self.reports_kept = reports_kept
        self.heavy_ttl = heavy_ttl  # seconds an hour's heaviest users are kept

    # -- bans -----------------------------------------------------------------------

    async def bans(self) -> dict[str, dict[str, Any]]:
        """Every ban kept, by its field ("account:<player>", "address:<network>")."""
        raw = await self.redis.hgetall(KEYS.bans)
        return {as_text(k): json.loads(v) for k, v in raw.items()}

    async def set_ban(self, field: str, record: Mapping[str, Any]) -> None:
        """Keep a ban (replacing one on the same subject)."""
        await self.redis.hset(KEYS.bans, {field: json.dumps(record, separators=(",", ":"))})

    async def remove_bans(self, fields: list[str]) -> int:
        """Forget bans; how many there were."""
        return await self.redis.hdel(KEYS.bans, *fields) if fields else 0

    # -- the audit log and reports ---------------------------------------------------

    async def audit(self, entry: Mapping[str, Any]) -> str:
        """Append a moderator's action to the audit log; its entry id."""
        return as_text(await self._add(KEYS.audit, entry, self.audit_kept))

    async def audit_log(self, count: int) -> list[Row]:
        """The latest `count` actions, newest first."""
        return _rows(await self.redis.xrevrange(KEYS.audit, count))

    async def add_report(self, entry: Mapping[str, Any]) -> str:
        """Keep a player's report of a player; its entry id."""
        return as_text(await self._add(KEYS.reports, entry, self.reports_kept))

    async def reports(self, count: int) -> list[Row]:
        """The latest `count` reports, newest first."""
        return _rows(await self.redis.xrevrange(KEYS.reports, count))

    async def _add(self, key: str, entry: Mapping[str, Any], kept: int) -> bytes:
        fields = {k: str(v) for k, v in entry.items() if v is not None}
        return await self.redis.xadd(key, fields, maxlen=kept)

    # -- refusals ---------------------------------------------------------------------

    async def record_refusals(self, refused: list[Refused]) -> None:
        """Append refusals to the recent ones (the last `RECENT_WRITTEN` of a flood) and
        count them all per limit, client and hour."""
        if not refused:
            return
        counts: Counter[tuple[int, str, str]] = Counter()
        redis = self.redis
        writes: list[Pending[object]] = []  # one round trip
        for r in refused[-RECENT_WRITTEN:]:
            entry = {
                "limit": r.limit,
                "address": r.address,
                "player": r.player,
                "name": r.name,
                "at": r.at,
            }
            fields = {k: str(v) for k, v in entry.items()}
            writes.append(redis.xadd(KEYS.refusals, fields, maxlen=self.refusals_kept))
        for r in refused:
            hour = hour_of(r.at)
            counts[hour, r.limit, f"address {r.address}"] += 1
            if r.player:
                counts[hour, r.limit, f"player {r.player} {r.name}".rstrip()] += 1
        for (hour, limit, client), n in counts.items():
            key = KEYS.heavy(hour, limit)
            writes += [
                redis.zincrby(key, n, client),
                redis.zremrangebyrank(key, 0, -HEAVY_KEPT - 1),
                redis.expire(key, self.heavy_ttl),
                redis.sadd(KEYS.limits(hour), limit),
                redis.expire(KEYS.limits(hour), self.heavy_ttl),
            ]
        await redis.all(writes)

    async def refusals(self, count: int) -> list[Row]:
        """The latest `count` refusals, newest first."""
        return _rows(await self.redis.xrevrange(KEYS.refusals, count))

    async def heaviest(self, now_ms: int, hours: int, top: int) -> dict[str, list[tuple[str, int]]]:
        """Per limit, the `top` clients refused most in the last `hours` hours (this one too)."""
        totals: dict[str, Counter[str]] = {}
        for hour in range(hour_of(now_ms) - hours + 1, hour_of(now_ms) + 1):
            for limit in sorted(as_text(x) for x in await self.redis.smembers(KEYS.limits(hour))):
                rows = await self.redis.zrange_scored(
                    KEYS.heavy(hour, limit), 0, top * 4, reverse=True
                )
                found = totals.setdefault(limit, Counter())
                for client, score in rows:
                    found[as_text(client)] += int(score)
        return {limit: c.most_common(top) for limit, c in sorted(totals.items())}

    # -- notices -----------------------------------------------------------------------

    async def publish(self, notice: Mapping[str, Any]) -> int:
        """Tell every instance (their hubs listen); how many subscribers heard it."""
        return await self.redis.publish(MODERATION_CHANNEL, pack(dict(notice)))
