"""Follows and presence: whom a player follows, and which of
them are online or playing.

A player follows at most `follows_max` players (`too_many_follows` past that); a
player's followers are kept up to `followers_max` (past that a new follower still
follows, uncounted). Both are hashes (player id -> name) in Redis grown by
lua/bounded_add.lua, so that two instances cannot pass a bound, expiring `KEPT_MS`
after their last change.

Online: what social/presence.py says (the record challenges read too: each
instance's word on its connected players, lapsing when the instance dies).
Playing: the player has unfinished games. `status` reads both, and the
profile's name, of many players with lua/followed.lua: one call for them all on
one node, one per player on a cluster (their keys are in different slots; the
names then come from the profiles, read apart).
"""

from __future__ import annotations

from typing import Protocol

from moose_server.errors import Refusal
from moose_server.limits.limiter import full
from moose_server.settings import Settings
from moose_server.social.calls import BoundedAddCall, FollowedCall
from moose_server.storage.codec import as_int, as_list, as_text
from moose_server.storage.gateway import Gateway
from moose_server.storage.keys import followers_key, follows_key, player_games_key
from moose_server.storage.store import Store

__all__ = ["KEPT_MS", "Follows", "Online", "Status"]

KEPT_MS = 180 * 86_400_000  # follows last half a year after the player's last change


# A followed player's profile name ("": none, or not read), whether online, unfinished games
Status = tuple[str, bool, list[str]]


class Online(Protocol):
    """Who is connected anywhere (social/presence.py's `Presence`)."""

    async def online_many(self, players: list[str]) -> list[bool]:
        """Whether each player has a socket on some live instance."""

    async def online(self, player: str) -> str | None:
        """The name the player plays with when connected anywhere, else None."""


class Follows:
    """Who follows whom, and whether they are online or playing."""

    def __init__(self, redis: Gateway, store: Store, settings: Settings, presence: Online) -> None:
        self.redis = redis
        self.store = store
        self.presence = presence
        self.most = settings.follows_max
        self.most_followers = settings.followers_max

    async def _bounded_add(self, key: str, member: str, name: str, most: int) -> int:
        call = BoundedAddCall(key, member, name, most, KEPT_MS)
        return as_int(await self.redis.run(call, *call.build()))

    async def follow(self, player: str, name: str, whom: str, whom_name: str) -> bool:
        """`player` (called `name`) follows `whom`; False if followed already;
        `too_many_follows` when full."""
        if whom == player:
            raise Refusal("bad_message", "you cannot follow yourself")
        added = await self._bounded_add(follows_key(player), whom, whom_name, self.most)
        if added < 0:
            raise full("follows", f"you follow {self.most} players already; unfollow one first")
        await self._bounded_add(followers_key(whom), player, name, self.most_followers)
        return added == 1

    async def unfollow(self, player: str, whom: str) -> bool:
        """Stop following `whom`; False if not followed."""
        await self.redis.hdel(followers_key(whom), player)
        return bool(await self.redis.hdel(follows_key(player), whom))

    async def of(self, player: str) -> dict[str, str]:
        """Every player `player` follows: id -> name, sorted by id."""
        found = await self.redis.hgetall(follows_key(player))
        return {as_text(k): as_text(v) for k, v in sorted(found.items())}

    async def followers(self, player: str) -> int:
        """How many follow `player` (counted up to followers_max)."""
        return await self.redis.hlen(followers_key(player))

    async def playing(self, players: list[str]) -> list[list[str]]:
        """Each player's unfinished games, sorted, in one round trip."""
        if not players:
            return []
        rows = await self.redis.all([self.redis.smembers(player_games_key(p)) for p in players])
        return [sorted(as_text(g) for g in row) for row in rows]

    @property
    def names_apart(self) -> bool:
        """Whether `status` leaves the names out (a cluster: read them from the profiles)."""
        return self.redis.cluster

    async def status(self, players: list[str]) -> list[Status]:
        """Each player's profile name ("" where `names_apart`), whether online, and their
        unfinished games (sorted): one script call on one node, one per player on a cluster."""
        if not players:
            return []
        if self.redis.cluster:
            calls = [FollowedCall((p,)) for p in players]
        else:
            calls = [FollowedCall(tuple(players), names=True)]
        replies = await self.redis.all([self.redis.run(c, *c.build()) for c in calls])
        rows = [row for reply in replies for row in as_list(reply)]
        return [
            (as_text(name), bool(as_int(on)), sorted(as_text(g) for g in as_list(games)))
            for on, games, name in rows
        ]
