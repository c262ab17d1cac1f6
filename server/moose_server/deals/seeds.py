"""The Redis calls of provably fair deals waiting for the seats' seeds.

A waiting deal is one hash in its game's bucket (keys.GameKeys.deal) plus a
member "deal:<id>" in the bucket's deadline set, so that the deadline loop of
any instance deals it once its seed time is over (deals/deals.py). Each step is
one script over keys of one slot: opening (lua/deal_open.lua), a seed
(lua/deal_seed.lua: the last one awaited closes the deal) and closing
(lua/deal_close.lua). A closed deal takes no seed, so whoever deals it, any
number of times, deals the same cards; the game's commit keeps one.
"""

from __future__ import annotations

import secrets
from typing import Any

from moose_server.deals.calls import DealCloseCall, DealOpenCall, DealSeedCall
from moose_server.storage.codec import as_list, as_text, unpack
from moose_server.storage.gateway import Gateway
from moose_server.storage.keys import GameKeys

__all__ = ["SeedStore", "Waiting"]

Waiting = dict[str, Any]  # a closed deal: its data (unpacked) and "seeds" {seat: seed}


class SeedStore:
    """Waiting deals in Redis: open, take a seed, close, forget."""

    def __init__(self, redis: Gateway, buckets: int) -> None:
        self.redis = redis
        self.buckets = buckets

    def keys_of(self, game: str) -> GameKeys:
        """The keys of a game (keys.py)."""
        return GameKeys.of(game, self.buckets)

    async def open(
        self, game: str, data: bytes, seed_time_ms: int, ttl: int, fair_seats: tuple[int, ...]
    ) -> dict[str, Any] | None:
        """Make a deal wait; its data as stored (another instance's, if it opened it
        first), or None when the game is dealt already."""
        call = DealOpenCall(self.keys_of(game), data, seed_time_ms, ttl, fair_seats)
        got = as_list(await self.redis.run(call, *call.build()))
        return unpack(got[1]) if len(got) > 1 else None

    async def data(self, game: str) -> dict[str, Any] | None:
        """The data of a waiting deal, or None."""
        raw = await self.redis.hget(self.keys_of(game).deal, "data")
        return unpack(raw) if raw is not None else None

    async def seed(self, game: str, seat: int, seed: str) -> str:
        """Take a seat's seed: ok, all (closed: deal it), dealt, none, not_fair or dup."""
        call = DealSeedCall(self.keys_of(game), seat, seed, secrets.token_hex(8))
        got = as_list(await self.redis.run(call, *call.build()))
        return as_text(got[0])

    async def close(self, game: str) -> Waiting | None:
        """Close a waiting deal to seeds; its data and seeds, or None if none waits."""
        call = DealCloseCall(self.keys_of(game))
        got = as_list(await self.redis.run(call, *call.build()))
        if not got:
            return None
        fields = {got[i].decode(): got[i + 1] for i in range(0, len(got), 2)}
        seeds = {int(k[1:]): v.decode() for k, v in fields.items() if k.startswith("s")}
        return {**unpack(fields["data"]), "seeds": seeds}

    async def forget(self, game: str) -> None:
        """The game is dealt: its waiting deal and deadline member go."""
        keys = self.keys_of(game)
        gone = self.redis.delete(keys.deal)
        await self.redis.all([gone, self.redis.zrem(keys.deadlines, keys.deal_member)])
