"""Every Redis key and script of players: accounts, ratings, leaderboards and history.

The keys that one rating update touches share the hash tag ``{pl}``, so that
`lua/rate.lua` applies a finished game to every seat, both leaderboards and
their histories in one atomic step, in a Redis Cluster too (one slot holds
them: deploy/README.md has the memory arithmetic)::

    moose:{pl}:p:<player>     hash: name, mu, sigma, games, rating, bot ("1"/"0");
                              an account also pw (scrypt hash), gen (token
                              generation), since (ms). A guest's expires guest_ttl
                              after their last rated game.
    moose:{pl}:h:<player>     list: the player's last rated games, newest first (JSON)
    moose:{pl}:names          hash: an account name's look-alike key -> player
    moose:{pl}:top:humans     sorted set: player -> rating (not provisional)
    moose:{pl}:top:bots       the same for bots
    moose:{pl}:guests         sorted set: guest -> when their rating expires (ms)
    moose:{pl}:rated:<game>   "1" once the game is rated (kept 2 x game_ttl)

Failed logins are metered with the limits of store.py (`limit_key`, lua/limit.lua).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

from moose_server.storage.batch import Batcher

__all__ = ["PROFILE_FIELDS", "PlayerStore", "RatedSeat"]

TAG = "moose:{pl}"
PROFILE_FIELDS = ("name", "mu", "sigma", "games", "rating", "bot", "pw", "gen")
KINDS = ("humans", "bots")


def _script(name: str) -> str:
    return resources.files("moose_server.storage").joinpath("lua", name).read_text()


def _text(value: Any) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


@dataclass(frozen=True)
class RatedSeat:
    """One seat's part of a rating update (see lua/rate.lua)."""

    player: str
    name: str
    bot: bool
    mu_delta: float
    sigma_ratio: float
    entry: str  # the history entry, JSON


class PlayerStore:
    """Key names, scripts and calls of accounts, ratings, leaderboards and history."""

    def __init__(self, redis: Any, batch: Batcher | None = None) -> None:
        self.redis = redis
        # Profiles and the rating update: the latter in the batch of the game's last commit.
        self.batch = batch or Batcher(redis)
        self._rate = redis.register_script(_script("rate.lua"))
        self._claim = redis.register_script(_script("account_claim.lua"))

    # -- key names ------------------------------------------------------------

    @staticmethod
    def profile_key(player: str) -> str:
        """A player's profile hash."""
        return f"{TAG}:p:{player}"

    @staticmethod
    def history_key(player: str) -> str:
        """A player's history list."""
        return f"{TAG}:h:{player}"

    @staticmethod
    def top_key(kind: str) -> str:
        """The leaderboard of 'humans' or 'bots'."""
        return f"{TAG}:top:{kind}"

    @staticmethod
    def rated_key(game: str) -> str:
        """The marker of a rated game."""
        return f"{TAG}:rated:{game}"

    NAMES_KEY = f"{TAG}:names"
    GUESTS_KEY = f"{TAG}:guests"

    # -- profiles -------------------------------------------------------------

    async def profiles(self, players: list[str]) -> list[dict[str, str]]:
        """Each player's profile fields (strings; missing ones left out), in one round trip."""
        if not players:
            return []
        cmds = [("HMGET", self.profile_key(p), *PROFILE_FIELDS) for p in players]
        replies = await self.batch.call_many(cmds)
        return [
            {f: v for f, raw in zip(PROFILE_FIELDS, row, strict=True) if (v := _text(raw))}
            for row in replies
        ]

    async def mark_bot(self, player: str, ttl_ms: int) -> None:
        """A guest says they are a bot: remembered with their profile (a guest's expires)."""
        key = self.profile_key(player)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, "bot", "1")
            pipe.pexpire(key, ttl_ms)
            await pipe.execute()

    async def name_owner(self, name_key: str) -> str | None:
        """The player whose account holds a look-alike of the name, if any."""
        return _text(await self.redis.hget(self.NAMES_KEY, name_key))

    async def claim(
        self, player: str, name_key: str, name: str, pw: str, bot: bool, now: int
    ) -> int | str:
        """Make the player an account (lua/account_claim.lua): its generation, or an error code."""
        keys = [self.NAMES_KEY, self.profile_key(player), self.history_key(player),
                self.GUESTS_KEY]  # fmt: skip
        got = await self._claim(keys=keys, args=[name_key, player, name, pw, int(bot), now])
        return int(got) if isinstance(got, int) else str(_text(got))

    async def set_password(self, player: str, pw: str) -> int:
        """A new password hash; every earlier token is refused from now on. The generation."""
        key = self.profile_key(player)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, "pw", pw)
            pipe.hincrby(key, "gen", 1)
            _, gen = await pipe.execute()
        return int(gen)

    async def next_generation(self, player: str) -> int:
        """Refuse every token issued so far (log out everywhere); the new generation."""
        return int(await self.redis.hincrby(self.profile_key(player), "gen", 1))

    async def generation(self, player: str) -> int | None:
        """The account's token generation; None for a guest."""
        got = await self.redis.hget(self.profile_key(player), "gen")
        return int(got) if got is not None else None

    # -- ratings --------------------------------------------------------------

    async def rate(self, game: str, seats: list[RatedSeat], args: list[Any]) -> bool:
        """Apply a finished game's changes once (lua/rate.lua); False if it was rated before.

        `args` are the script's ARGV 1-10 (ttls, sizes and the rating scale).
        """
        keys = [self.rated_key(game), self.top_key("humans"), self.top_key("bots"),
                self.GUESTS_KEY]  # fmt: skip
        argv = [*args, len(seats)]
        for s in seats:
            keys += [self.profile_key(s.player), self.history_key(s.player)]
            argv += [s.player, s.name, int(s.bot), repr(s.mu_delta), repr(s.sigma_ratio), s.entry]
        got = await self.batch.run_script(self._rate, keys, argv)
        return _text(got) == "ok"

    async def top(self, kind: str, limit: int) -> list[tuple[str, int]]:
        """The best `limit` players of a leaderboard: (player, rating), best first."""
        rows = await self.redis.zrevrange(self.top_key(kind), 0, limit - 1, withscores=True)
        return [(str(_text(p)), int(score)) for p, score in rows]

    async def rank(self, kind: str, player: str) -> int | None:
        """The player's place on a leaderboard (1 = best), or None when not on it."""
        got = await self.redis.zrevrank(self.top_key(kind), player)
        return None if got is None else int(got) + 1

    async def history(self, player: str, limit: int) -> list[str]:
        """The player's last rated games, newest first (JSON strings)."""
        rows = await self.redis.lrange(self.history_key(player), 0, limit - 1)
        return [str(_text(r)) for r in rows]

    async def set_standing(
        self, player: str, name: str, mu: float, sigma: float, games: int, bot: bool, ttl_ms: int
    ) -> None:
        """Give a guest a rating outright (load tests and benchmarks; expires after `ttl_ms`)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            self.queue_standing(pipe, player, name, mu, sigma, games, bot, ttl_ms)
            await pipe.execute()

    @classmethod
    def queue_standing(
        cls, pipe: Any, player: str, name: str, mu: float, sigma: float, games: int, bot: bool,
        ttl_ms: int,
    ) -> None:  # fmt: skip
        """`set_standing`'s commands, added to a pipeline of the caller's."""
        key = cls.profile_key(player)
        pipe.hset(key, mapping={"name": name, "mu": repr(mu), "sigma": repr(sigma),
                                "games": games, "bot": int(bot)})  # fmt: skip
        pipe.pexpire(key, ttl_ms)
