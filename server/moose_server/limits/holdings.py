"""The Redis calls of what one client holds (limits/quotas.py): games, tables, bot sessions.

A hold is a sorted set per client address (keys.hold_key) whose ids are taken
atomically against a limit by lua/hold.lua; bot sessions are counts per server
process with a lease (lua/sessions.lua). Nothing here decides whether an id
still holds: `ended_games` and `open_tables` read the games' and tables' own
state for the caller to prune with.
"""

from __future__ import annotations

import time

from moose_server.limits.calls import HoldCall, SessionsCall
from moose_server.storage.codec import as_int, as_text
from moose_server.storage.gateway import Gateway
from moose_server.storage.keys import (
    GameKeys,
    correspondence_games_key,
    mm_key,
    player_games_key,
)

__all__ = ["Holdings"]


class Holdings:
    """Holds, bot sessions, and the reads that tell which held ids have ended."""

    def __init__(self, redis: Gateway, buckets: int) -> None:
        self.redis = redis
        self.buckets = buckets

    async def hold(self, call: HoldCall) -> int:
        """Run lua/hold.lua: how many are held after, or -1 (a `take` past the limit)."""
        return as_int(await self.redis.run(call, *call.build()))

    async def sessions(self, call: SessionsCall) -> int:
        """Run lua/sessions.lua: the address' bot sessions after, or -1 (`enter` refused)."""
        return as_int(await self.redis.run(call, *call.build()))

    async def put(self, key: str, ids: list[str], ttl_ms: int) -> None:
        """Add ids whatever the count (a game dealt is held already): in the loop turn's
        batch, scored by this instance's clock (ms), so that a full hold is pruned
        oldest first (a reservation's score is Redis' time, and read)."""
        if ids:
            added = self.redis.zadd(key, dict.fromkeys(ids, int(time.time() * 1000)))
            await self.redis.all([added, self.redis.pexpire(key, ttl_ms)])

    async def count(self, key: str) -> int:
        """How many ids a hold has."""
        return await self.redis.zcard(key)

    async def held(self, key: str) -> list[tuple[str, int]]:
        """Every id a hold has, with when it was taken (ms), oldest first."""
        rows = await self.redis.zrange_scored(key, 0, -1)
        return [(as_text(member), int(score)) for member, score in rows]

    async def drop(self, key: str, ids: list[str]) -> None:
        """Forget ids that no longer hold."""
        if ids:
            await self.redis.zrem(key, *ids)

    async def player_games(self, player: str) -> list[str]:
        """The player's game set (store.add_player_game): unfinished, and a few not pruned."""
        members = await self.redis.smembers(player_games_key(player))
        return [as_text(m) for m in members]

    async def games_of(self, player: str, real_time: bool) -> list[str]:
        """The player's real-time games (their game set less the correspondence games,
        which are in both: one SDIFF, the keys of one slot), or correspondence ones."""
        slow = correspondence_games_key(player)
        if real_time:
            members = await self.redis.sdiff(player_games_key(player), slow)
        else:
            members = await self.redis.smembers(slow)
        return [as_text(m) for m in members]

    async def ended_games(self, games: list[str], missing: bool) -> set[str]:
        """Those of the games that are over: their deadline is cleared (every unfinished
        game has one; lua/commit.lua clears it at the end), or with `missing` their hash
        is gone (expired, or not written yet: the caller says which it can tell apart).
        A game whose fair deal waits for seeds has no hash yet: not over. Only a game
        without a deadline field is looked for among the waiting deals (a second read)."""
        if not games:
            return set()
        keys = {g: GameKeys.of(g, self.buckets) for g in games}
        found = await self.redis.all([self.redis.hget(keys[g].game, "dl") for g in games])
        over = {g for g, dl in zip(games, found, strict=True) if dl is not None and int(dl) == 0}
        gone = [g for g, dl in zip(games, found, strict=True) if dl is None] if missing else []
        if gone:
            dealing = await self.redis.all([self.redis.exists(keys[g].deal) for g in gone])
            over |= {g for g, waits in zip(gone, dealing, strict=True) if not waits}
        return over

    async def open_tables(self, codes: list[str], now_ms: int) -> set[str]:
        """Those of the join codes whose private table is open (not started, not expired)."""
        if not codes:
            return set()
        read = self.redis.hmget(mm_key("tables"), *codes)
        ends = [self.redis.zscore(mm_key("table_expiry"), code) for code in codes]
        tables, expiry = await read, await self.redis.all(ends)
        now_us = now_ms * 1000
        return {
            code
            for code, table, ends in zip(codes, tables, expiry, strict=True)
            if table is not None and ends is not None and float(ends) > now_us
        }
