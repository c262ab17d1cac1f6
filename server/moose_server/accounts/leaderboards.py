"""Leaderboards and profiles, as the protocol and the HTTP API answer them.

A player is shown as ``{"player", "name", "rating", "games", "bot"}``; a profile
adds ``provisional``, ``account``, ``rank`` (on the humans' or the bots' board;
None while provisional) and ``history``: the last rated games, newest first,
each with its table (names, bots), scores, the player's seat and place, their
rating after it and its change, and ``record``: where a queue game's record is
while it is kept (None once it has expired, and for a private table's game).

Each rating pool (ratings.POOLS) has its boards: `pool` "realtime" (the default)
or "correspondence". A profile's rating, games, rank and provisional are the
real-time pool's; its ``correspondence`` block holds the same of the other pool
(``rating`` None before any rated correspondence game).
"""

from __future__ import annotations

import json
from typing import Any

from moose_server.accounts import ratings
from moose_server.accounts.identity import name_key
from moose_server.accounts.store import KINDS, PlayerStore
from moose_server.errors import Refusal
from moose_server.settings import Settings

__all__ = ["BoardError", "Boards"]

MAX_LIMIT = 100
DEFAULT_LIMIT = 20
MAX_OFFSET = 1_000_000  # a page further down than any board's end is simply empty


class BoardError(Refusal):
    """A leaderboard or profile request refused (no_such_player, bad_message)."""


def check_kind(kind: object) -> str:
    """'humans' or 'bots', or BoardError bad_message."""
    if kind not in KINDS:
        raise BoardError("bad_message", "kind is 'humans' or 'bots'")
    return str(kind)


def check_pool(pool: object) -> str:
    """'realtime' or 'correspondence', or BoardError bad_message."""
    if pool not in ratings.POOLS:
        raise BoardError("bad_message", "pool is 'realtime' or 'correspondence'")
    return str(pool)


def check_limit(limit: object) -> int:
    """1 to MAX_LIMIT, or BoardError bad_message."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise BoardError("bad_message", f"limit is 1 to {MAX_LIMIT}")
    return limit


def check_offset(offset: object) -> int:
    """0 to MAX_OFFSET, or BoardError bad_message."""
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
        raise BoardError("bad_message", f"offset is 0 to {MAX_OFFSET}")
    return offset


def _summary(player: str, p: dict[str, str], pool: str = "realtime") -> dict[str, Any]:
    mu = float(p.get(ratings.field(pool, "mu"), ratings.MU))
    sigma = float(p.get(ratings.field(pool, "sigma"), ratings.SIGMA))
    return {
        "player": player,
        "name": p.get("name", ""),
        "rating": ratings.display(mu, sigma),
        "games": int(p.get(ratings.field(pool, "games"), 0)),
        "bot": p.get("bot") == "1",
    }


def _unrated(player: str, last: dict[str, Any]) -> dict[str, Any]:
    """The summary of a player with no rating yet, whose games changed none: the name
    and bot flag of their last game, and no rating (`null`)."""
    seat = last["seat"]
    return {
        "player": player,
        "name": last["names"][seat],
        "rating": None,
        "games": 0,
        "bot": bool(last["bots"][seat]),
    }


class Boards:
    """Reads leaderboards and profiles (read-only)."""

    def __init__(self, players: PlayerStore, settings: Settings) -> None:
        self.players = players
        self.settings = settings

    async def top(
        self, kind: str, limit: int, offset: int = 0, pool: str = "realtime"
    ) -> list[dict[str, Any]]:
        """`limit` players of the humans' or the bots' leaderboard of a pool from place
        `offset` + 1, best first."""
        kind, pool = check_kind(kind), check_pool(pool)
        rows = await self.players.top(kind, check_limit(limit), check_offset(offset), pool)
        profiles = await self.players.profiles([p for p, _ in rows])
        return [
            _summary(p, prof, pool) for (p, _), prof in zip(rows, profiles, strict=True) if prof
        ]

    async def page(
        self, kind: str, limit: int, offset: int, pool: str = "realtime"
    ) -> dict[str, Any]:
        """One page of a leaderboard: its `kind`, `pool`, `offset`, `total` players and
        `players`."""
        players = await self.top(kind, limit, offset, pool)
        total = await self.players.board_size(kind, pool)
        return {
            "kind": kind,
            "pool": pool,
            "offset": offset,
            "total": total,
            "players": players,
            "provisional_games": self.settings.provisional_games,
        }

    async def find(self, player: str | None = None, name: str | None = None) -> str:
        """The player id of `player`, or of the account called `name`; or no_such_player."""
        if player is None and name is not None:
            player = await self.players.name_owner(name_key(name))
        if player is None:
            raise BoardError("no_such_player", f"no account is called {str(name)[:24]!r}")
        return player

    async def profile(self, player: str, now_ms: int) -> dict[str, Any]:
        """A player's summary, rank and history; or no_such_player."""
        [p] = await self.players.profiles([player])
        rows = await self.players.history(player, self.settings.history_size)
        if not p and not rows:
            raise BoardError("no_such_player", f"no player {player[:24]!r} has played a game")
        out = _summary(player, p) if p else _unrated(player, json.loads(rows[0]))
        out["provisional"] = out["games"] < self.settings.provisional_games
        out["provisional_games"] = self.settings.provisional_games
        out["account"] = "gen" in p
        kind = "bots" if out["bot"] else "humans"
        out["rank"] = await self.players.rank(kind, player) if p else None
        out["correspondence"] = await self._correspondence(player, p, kind)
        history = []
        for raw in rows:
            entry = json.loads(raw)
            # Kept for queue games only (a private table's is read with its code, while
            # the game itself is kept: `record` with `code` in the protocol).
            private = entry.pop("private", False)
            kept = not private and entry["time"] + self.settings.record_ttl * 1000 > now_ms
            entry["record"] = f"/api/games/{entry['game']}/record" if kept else None
            history.append(entry)
        out["history"] = history
        return out

    async def _correspondence(self, player: str, p: dict[str, str], kind: str) -> dict[str, Any]:
        """A profile's correspondence block: rating (None before any rated correspondence
        game), games, provisional and rank on that pool's board."""
        pool = "correspondence"
        if "cgames" not in p:
            return {"rating": None, "games": 0, "provisional": True, "rank": None}
        s = _summary(player, p, pool)
        return {
            "rating": s["rating"],
            "games": s["games"],
            "provisional": s["games"] < self.settings.provisional_games,
            "rank": await self.players.rank(kind, player, pool),
        }
