"""The Redis calls of players: accounts, ratings, leaderboards and history.

Their keys (keys.py) share the hash tag ``{pl}``, so that `lua/rate.lua` applies
a finished game to every seat, both leaderboards and their histories in one
atomic step, in a Redis Cluster too (one slot holds them: deploy/README.md has
the memory arithmetic). Failed logins are metered with the limits of store.py
(`Store.limit`, lua/limit.lua).
"""

from __future__ import annotations

from collections.abc import Callable

from moose_server.accounts.calls import (
    AccountClaimCall,
    HistoryCall,
    PasswordUpgradeCall,
    RateCall,
    RatedSeat,
)
from moose_server.storage.codec import as_int, as_text_or_none
from moose_server.storage.gateway import Arg, Gateway, Pending
from moose_server.storage.keys import (
    NAMES_KEY,
    NAMES_KEYED_KEY,
    history_key,
    profile_key,
    top_key,
)

__all__ = ["PROFILE_FIELDS", "PlayerStore", "RatedSeat"]

PROFILE_FIELDS = (
    "name",
    "mu",
    "sigma",
    "games",
    "rating",
    "cmu",
    "csigma",
    "cgames",
    "crating",
    "bot",
    "pw",
    "gen",
    "revoked",
)
KINDS = ("humans", "bots")


class PlayerStore:
    """The scripts and calls of accounts, ratings, leaderboards and history."""

    def __init__(self, redis: Gateway) -> None:
        # Profiles and the rating update: the latter in the batch of the game's last commit.
        self.redis = redis

    # -- profiles -------------------------------------------------------------

    async def profiles(self, players: list[str]) -> list[dict[str, str]]:
        """Each player's profile fields (strings; missing ones left out), in one round trip."""
        if not players:
            return []
        replies = await self.redis.all(
            [self.redis.hmget(profile_key(p), *PROFILE_FIELDS) for p in players]
        )
        return [
            {
                f: v
                for f, raw in zip(PROFILE_FIELDS, row, strict=True)
                if (v := as_text_or_none(raw))
            }
            for row in replies
        ]

    async def mark_bot(self, player: str, ttl_ms: int) -> None:
        """A guest says they are a bot: remembered with their profile (a guest's expires)."""
        key = profile_key(player)
        await self.redis.all([self.redis.hset(key, {"bot": "1"}), self.redis.pexpire(key, ttl_ms)])

    async def name_owner(self, name_key: str) -> str | None:
        """The player whose account holds a look-alike of the name, if any."""
        return as_text_or_none(await self.redis.hget(NAMES_KEY, name_key))

    async def rekey_names(self, key: Callable[[str], str], version: str) -> list[tuple[str, str]]:
        """Key the names index by `key` (once per `version`): each account under the key of
        its profile's name. The (account, holder) pairs that now clash are returned; such
        an account keeps its old entry (found by id and token, not by its name)."""
        if as_text_or_none(await self.redis.get(NAMES_KEYED_KEY)) == version:
            return []
        held: dict[str, str] = {}
        cursor = -1
        while cursor:
            cursor, found = await self.redis.hscan(NAMES_KEY, max(cursor, 0), 1000)
            held.update((field.decode(), player.decode()) for field, player in found.items())
        owners = sorted(set(held.values()))
        named = {
            p: prof["name"]
            for p, prof in zip(owners, await self.profiles(owners), strict=True)
            if "name" in prof
        }
        keep, clashes = _rekeyed(held, {p: key(name) for p, name in named.items()})
        writes: list[Pending[object]] = []  # one round trip
        if stale := [f for f in held if keep.get(f) != held[f]]:
            writes.append(self.redis.hdel(NAMES_KEY, *stale))
        if keep:
            writes.append(self.redis.hset(NAMES_KEY, keep))
        writes.append(self.redis.set(NAMES_KEYED_KEY, version))
        await self.redis.all(writes)
        return clashes

    async def claim(self, call: AccountClaimCall) -> int | str:
        """Make the player an account (lua/account_claim.lua): its generation, or an error code."""
        got = await self.redis.run(call, *call.build())
        return got if isinstance(got, int) else str(as_text_or_none(got))

    async def set_password(self, player: str, pw: str) -> int:
        """A new password hash; every earlier token is refused from now on. The generation."""
        key = profile_key(player)
        written = self.redis.hset(key, {"pw": pw})
        gen = self.redis.hincrby(key, "gen", 1)
        await written
        return await gen

    async def upgrade_password(self, player: str, old: str, new: str) -> bool:
        """Replace a verified hash of older parameters (the tokens stay valid); False if the
        password changed meanwhile."""
        call = PasswordUpgradeCall(player, old, new)
        return as_int(await self.redis.run(call, *call.build())) == 1

    async def next_generation(self, player: str) -> int:
        """Refuse every token issued so far (log out everywhere); the new generation."""
        return await self.redis.hincrby(profile_key(player), "gen", 1)

    async def revoke_tokens(self, player: str, kept_ms: int) -> None:
        """Refuse every token issued so far: an account's generation goes up; a guest, who
        can never be issued another, is marked `revoked` for `kept_ms` (its tokens' life)."""
        key = profile_key(player)
        if await self.generation(player) is not None:
            await self.next_generation(player)
            return
        await self.redis.hset(key, {"revoked": "1"})
        if await self.redis.pttl(key) < kept_ms:  # -1: made just now, with no expiry
            await self.redis.pexpire(key, kept_ms)

    async def is_account(self, player: str) -> bool:
        """Whether the player has an account (a guest has none)."""
        return await self.generation(player) is not None

    async def generation(self, player: str) -> int | None:
        """The account's token generation; None for a guest."""
        got = await self.redis.hget(profile_key(player), "gen")
        return int(got) if got is not None else None

    # -- ratings --------------------------------------------------------------

    async def rate(self, call: RateCall) -> bool:
        """Apply a finished game's changes once (lua/rate.lua); False if it was rated before."""
        return as_text_or_none(await self.redis.run(call, *call.build())) == "ok"

    async def list_game(self, call: HistoryCall) -> bool:
        """Put a finished game in the histories of the players it did not rate, once
        (lua/history.lua); False if it was listed before."""
        return as_text_or_none(await self.redis.run(call, *call.build())) == "ok"

    async def top(
        self, kind: str, limit: int, offset: int = 0, pool: str = "realtime"
    ) -> list[tuple[str, int]]:
        """`limit` players of a pool's leaderboard from place `offset` + 1: (player, rating),
        best first."""
        key = top_key(kind, pool)
        rows = await self.redis.zrange_scored(key, offset, offset + limit - 1, reverse=True)
        return [(str(as_text_or_none(p)), int(score)) for p, score in rows]

    async def board_size(self, kind: str, pool: str = "realtime") -> int:
        """How many players a pool's leaderboard holds."""
        return await self.redis.zcard(top_key(kind, pool))

    async def rank(self, kind: str, player: str, pool: str = "realtime") -> int | None:
        """The player's place on a pool's leaderboard (1 = best), or None when not on it."""
        got = await self.redis.zrevrank(top_key(kind, pool), player)
        return None if got is None else int(got) + 1

    async def history(self, player: str, limit: int) -> list[str]:
        """The player's last rated games, newest first (JSON strings)."""
        rows = await self.redis.lrange(history_key(player), 0, limit - 1)
        return [str(as_text_or_none(r)) for r in rows]

    async def set_standing(
        self, player: str, name: str, mu: float, sigma: float, games: int, bot: bool, ttl_ms: int
    ) -> None:
        """Give a guest a rating outright (load tests and benchmarks; expires after `ttl_ms`)."""
        key = profile_key(player)
        fields: dict[str, Arg] = {
            "name": name,
            "mu": repr(mu),
            "sigma": repr(sigma),
            "games": games,
            "bot": int(bot),
        }
        written = self.redis.hset(key, fields)
        await self.redis.all([written, self.redis.pexpire(key, ttl_ms)])


def _rekeyed(
    held: dict[str, str], new: dict[str, str]
) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The names index keyed anew: `held` field -> player, `new` player -> new field.

    Of the accounts a new field joins, the one already under it keeps it, else the
    first by old field; the others keep their old fields."""
    keep: dict[str, str] = {}
    for field, player in sorted(held.items(), key=lambda fp: (new.get(fp[1]) != fp[0], fp[0])):
        want = new.get(player, field)
        if keep.get(want, player) == player:
            keep[want] = player
    clashes = [(p, keep[f]) for p, f in new.items() if keep.get(f) != p]
    lost = {p for p, _ in clashes} | (set(held.values()) - set(new))
    for field, player in held.items():
        if player in lost and field not in keep:
            keep[field] = player
    return keep, clashes
