"""The `following` answer: whom a player follows, each online or not, with the
games of theirs the player may watch.

An answer reads three things of each followed player (their name, their
presence, their unfinished games), so 500 follows are 1,500 Redis replies: read
one by one they held the event loop ~230 ms an answer, and eight guests of one
address asking 19 times a second each took another player's ping p99 from 8 to
506 ms. So the work of answers is bounded three ways:

- a socket is answered at most once every `every` seconds (`following_every`);
  asked sooner, `rate_limited` with `retry_after`; and a player's answer is
  computed at most once in that time, the same answer going to each of their
  sockets (a page loaded again) meanwhile. A follow or unfollow lets the next
  ask through at once with a new answer, so that a page shows the change;
- an answer reads its players `CHUNK` at a time, one call of lua/followed.lua
  each on one node (a chunk's 150 commands and replies cost the server's loop
  and Redis' parser far more than one script's short reply; per player on a
  cluster, as Follows.status says), so other sockets are served between
  chunks, and one answer of more than `CHUNK` players is computed at a time on
  an instance (the lobby's short lists never wait behind them);
- whether a game is a private table's, and who sits at it, is read once per
  instance (neither changes), not once per answer.

bench/bench_following_flood.py measures it (BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from typing import Any, Protocol

from moose_server.limits.limiter import Limited
from moose_server.limits.rates import rate
from moose_server.play import GameError, Games
from moose_server.social.follows import Follows

__all__ = ["CHUNK", "Following"]

Message = dict[str, Any]
CHUNK = 50  # followed players read per round trip
KEPT = 10_000  # sockets' last asks, players' answers, games' seats: kept at most


class Profiles(Protocol):
    """Players' profile fields (accounts.PlayerStore)."""

    async def profiles(self, players: list[str]) -> list[dict[str, str]]:
        """Each player's profile fields, in one round trip."""


class Following:
    """Computes and keeps the `following` answers of one instance."""

    def __init__(self, follows: Follows, players: Profiles, games: Games, every: float) -> None:
        self.follows = follows
        self.players = players
        self.games = games
        self.every = every
        self._asked: OrderedDict[int, float] = OrderedDict()  # socket -> last answered
        self._answers: OrderedDict[str, tuple[float, Message]] = OrderedDict()  # per player
        self._long = asyncio.Lock()  # one answer of more than CHUNK players at a time
        # game -> None for a public game, a private table's game's seated players: a
        # game's table and seats never change
        self._seated: OrderedDict[str, frozenset[str] | None] = OrderedDict()

    def forget(self, player: str, socket: int) -> None:
        """The player followed or unfollowed someone on `socket`: their next answer is
        computed anew, and that socket's next ask answered at once."""
        self._answers.pop(player, None)
        self._asked.pop(socket, None)

    async def answer(self, player: str, socket: int) -> Message:
        """The `following` answer of `player` asking on `socket` (no `id`): at most
        `every` seconds old; `rate_limited` when that socket asks again sooner."""
        now = time.monotonic()
        last = self._asked.get(socket)
        if last is not None and now - last < self.every:
            wait = round((last + self.every - now) * 1000)
            limit = rate("following")
            raise Limited(limit.message, wait, limit.code)
        _keep(self._asked, socket, now)
        kept = self._answers.get(player)
        if kept is not None and now - kept[0] < self.every:
            return {**kept[1]}  # another socket's (a page loaded again): as fresh
        answer = await self._compute(player)
        _keep(self._answers, player, (now, answer))
        return {**answer}

    async def _compute(self, player: str) -> Message:
        """The answer as it stands now, read from Redis."""
        followed = await self.follows.of(player)
        ids = list(followed)
        entries: list[Message] = []
        # A list longer than a chunk waits for the other long ones: the short lists of
        # every page's poll never wait behind them.
        async with self._long if len(ids) > CHUNK else contextlib.nullcontext():
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                entries += await self._entries(player, chunk, followed)
        followers = await self.follows.followers(player)
        return {"type": "following", "players": entries, "followers": followers}

    async def _entries(self, player: str, ids: list[str], names: dict[str, str]) -> list[Message]:
        """The entries of some followed players: name, online, watchable games, private."""
        status = await self.follows.status(ids)
        if self.follows.names_apart:
            profiles = await self.players.profiles(ids)
            pairs = zip(profiles, status, strict=True)
            status = [(prof.get("name", ""), on, games) for prof, (_, on, games) in pairs]
        gone: set[str] = set()  # games not found, looked for once in this chunk
        out = []
        for p, (name, on, games) in zip(ids, status, strict=True):
            shown = [g for g in games if not await self._private_to(player, g, gone)]
            out.append(
                {
                    "player": p,
                    "name": name or names[p],
                    "online": on,
                    "games": shown,
                    "private": len(games) - len(shown),
                }
            )
        return out

    async def _private_to(self, player: str, game_id: str, gone: set[str]) -> bool:
        """Whether `watch` would refuse the game to `player`: a private table's game at
        which they do not sit (its code is not theirs to know), or one not found (gone,
        or not written yet: a player's games name a game just before it is stored, so
        that is not remembered past this answer)."""
        if game_id in gone:
            return True
        if game_id in self._seated:
            self._seated.move_to_end(game_id)
        else:
            try:
                game = await self.games.load(game_id)
            except GameError:
                gone.add(game_id)
                return True
            self._seated[game_id] = (
                None if game.code is None else frozenset(p for p in game.players if p)
            )
            while len(self._seated) > KEPT:
                self._seated.popitem(last=False)
        seated = self._seated[game_id]
        return seated is not None and player not in seated


def _keep(kept: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    """Remember `value` under `key`, the newest; the oldest go past KEPT."""
    kept[key] = value
    kept.move_to_end(key)
    while len(kept) > KEPT:
        kept.popitem(last=False)
