"""Arena tournaments in Redis: one script per change, keys of {ar}.

An arena is a hash (its settings, window, status and a version bumped on every
change, which the page and `watch_arena` follow), its members (a hash of JSON),
the waiting members (a sorted set by when each began to wait), the standings (a
sorted set of points), its games and the set of games already scored. Every
change is one of lua/arena_*.lua, atomic over the arena's keys (`ArenaKeys`,
one Cluster slot), with Redis' clock:

- `seat` forms tables from the waiting members, who waited longest first, and
  marks each one busy in that game (one `busy` hash for all arenas: nobody sits
  in two arena games);
- `score` applies a finished game's points once (a marker per game), frees its
  members and puts those still waiting back in line;
- `finish` closes an arena once its window is over and its last game scored.

Errors: `ArenaError` with a PROTOCOL.md code (no_such_arena, arena_over,
not_member, not_allowed, bad_message).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from moose_server.arenas.calls import (
    ArenaCall,
    ArenaCreateCall,
    ArenaFinishCall,
    ArenaMemberCall,
    ArenaScoreCall,
    ArenaSeatCall,
    ArenaStartedCall,
)
from moose_server.errors import Refusal
from moose_server.storage.codec import as_bytes, as_text
from moose_server.storage.gateway import Gateway
from moose_server.storage.keys import ARENAS_KEY, ArenaKeys, arena_won_key

__all__ = ["Arena", "ArenaError", "ArenaStore", "Member"]

WHO = ("bots", "people", "all")


class ArenaError(Refusal):
    """A request about an arena refused; `code` is a PROTOCOL.md error code."""


def _list(raw: Any) -> list[Any]:
    return raw if isinstance(raw, list) else []  # Lua's cjson writes an empty list as {}


@dataclass(frozen=True)
class Arena:
    """An arena as stored."""

    id: str
    name: str
    who: str  # who may join: bots, people, all
    min_players: int
    max_players: int
    start: int  # ms
    end: int  # ms
    rated: bool
    status: str  # open, over
    running: int  # games under way
    version: int
    winners: list[str]

    @classmethod
    def of(cls, data: dict[str, str]) -> Arena:
        """An arena from its hash."""
        return cls(
            data["id"],
            data["name"],
            data["for"],
            int(data["min"]),
            int(data["max"]),
            int(data["start"]),
            int(data["end"]),
            data.get("rated") == "1",
            data["status"],
            int(data.get("running", 0)),
            int(data.get("ver", 0)),
            _list(json.loads(data.get("winners", "[]"))),
        )

    def state(self, now: int) -> str:
        """upcoming, running, closing (window over, games under way) or over."""
        if self.status == "over":
            return "over"
        if now < self.start:
            return "upcoming"
        return "running" if now < self.end else "closing"

    def summary(self, now: int) -> dict[str, Any]:
        """The arena as PROTOCOL.md's `arena` and `arena_list` messages show it."""
        return {
            "id": self.id,
            "name": self.name,
            "for": self.who,
            "min_players": self.min_players,
            "max_players": self.max_players,
            "start": self.start,
            "end": self.end,
            "rated": self.rated,
            "state": self.state(now),
            "winners": self.winners,
        }


@dataclass(frozen=True)
class Member:
    """One line of the standings."""

    player: str
    name: str
    bot: bool
    points: int
    games: int
    state: str  # wait, paused, left; `playing` says whether they are in a game now
    next: int | None = None  # a person resting after a game is seated again from then (ms)

    def as_dict(self, rank: int, playing: str | None) -> dict[str, Any]:
        """The standing as the `arena` message shows it."""
        return {
            "rank": rank,
            "player": self.player,
            "name": self.name,
            "bot": self.bot,
            "points": self.points,
            "games": self.games,
            "state": self.state,
            "game": playing,
            "next": self.next,
        }


class ArenaStore:
    """Every arena of the service, in Redis; shared by all instances."""

    def __init__(self, redis: Gateway) -> None:
        self.redis = redis

    async def _run(self, call: ArenaCall) -> Any:
        """Run an arena script; its JSON reply, or its refusal raised as an ArenaError."""
        data = json.loads(as_bytes(await self.redis.run(call, *call.build())))
        if isinstance(data, dict) and "err" in data:
            raise ArenaError(data["err"], _MESSAGES.get(data["err"], str(data["err"])))
        return data

    async def create(self, call: ArenaCreateCall) -> bool:
        """Create the arena; False when one of that id exists already."""
        return bool((await self._run(call)).get("created"))

    async def get(self, arena: str) -> Arena:
        """The arena, or no_such_arena."""
        data = await self.redis.hgetall(ArenaKeys.of(arena).arena)
        if not data:
            raise ArenaError("no_such_arena", f"no arena {arena[:64]!r}")
        return Arena.of({as_text(k): as_text(v) for k, v in data.items()})

    async def listed(self, most: int = 50) -> list[Arena]:
        """The arenas ending last (the running and upcoming first), `most` at most."""
        ids = [as_text(i) for i in await self.redis.zrevrange(ARENAS_KEY, 0, most - 1)]
        rows = await self.redis.all([self.redis.hgetall(ArenaKeys.of(a).arena) for a in ids])
        return [Arena.of({as_text(k): as_text(v) for k, v in r.items()}) for r in rows if r]

    async def is_member(self, arena: str, player: str) -> bool:
        """Whether the player is in the arena's standings (joined once, whatever since)."""
        return bool(await self.redis.hexists(ArenaKeys.of(arena).members, player))

    async def member(self, call: ArenaMemberCall) -> dict[str, Any]:
        """A member joins, pauses or leaves: {state, playing}."""
        out: dict[str, Any] = await self._run(call)
        return out

    async def seat(self, call: ArenaSeatCall) -> list[dict[str, Any]]:
        """The tables to deal now: {key, game, seats: [{player, name, bot}]} each."""
        return [info for _, info in _list(await self._run(call))]

    async def started(self, arena: str, key: str) -> None:
        """The table `key`'s game is dealt."""
        await self._run(ArenaStartedCall(arena, key))

    async def score(self, call: ArenaScoreCall) -> bool:
        """Apply a finished game's points; False when they were applied before."""
        return bool((await self._run(call)).get("ok"))

    async def finish(self, arena: str, now: bool = False, keep: int = 30 * 86400) -> dict[str, Any]:
        """Close the arena if its time has come (kept `keep` s then): {status, winners, end,
        awarded}."""
        out: dict[str, Any] = await self._run(ArenaFinishCall(arena, now, keep))
        out["winners"] = _list(out.get("winners"))
        return out

    async def award(self, arena: str, winners: list[str], end: int) -> None:
        """Put the arena on its winners' profiles (ZADD: harmless to repeat)."""
        for player in winners:
            await self.redis.zadd(arena_won_key(player), {arena: end})
        await self.redis.hset(ArenaKeys.of(arena).arena, {"awarded": "1"})

    async def won(self, player: str, most: int = 20) -> list[str]:
        """The arenas a player won, the last first."""
        return [as_text(a) for a in await self.redis.zrevrange(arena_won_key(player), 0, most - 1)]

    async def standings(self, arena: str) -> tuple[list[Member], dict[str, str]]:
        """The members, best first, and who of them plays which game now."""
        keys = ArenaKeys.of(arena)
        read = self.redis.zrange_scored(keys.points, 0, -1, reverse=True)
        members, games = await self.redis.all(
            [self.redis.hgetall(keys.members), self.redis.hgetall(keys.games)]
        )
        ranked = await read
        found = {as_text(k): json.loads(v) for k, v in members.items()}
        out = []
        for raw, points in ranked:
            player = as_text(raw)
            m = found.get(player, {})
            out.append(
                Member(
                    player,
                    m.get("name", "?"),
                    bool(m.get("bot")),
                    int(points),
                    int(m.get("games", 0)),
                    m.get("state", "left"),
                    m.get("next"),
                )
            )
        playing = {}
        for game, raw in games.items():
            info = json.loads(raw)
            if "end" not in info:
                for player in info["players"]:
                    playing[player] = as_text(game)
        return out, playing

    async def games(self, arena: str) -> dict[str, dict[str, Any]]:
        """The arena's games: {key, players, names, start; once scored places, points, end}."""
        raw = await self.redis.hgetall(ArenaKeys.of(arena).games)
        return {as_text(k): json.loads(v) for k, v in raw.items()}

    async def version(self, arenas: list[str]) -> list[int]:
        """Each arena's version (bumped on every change of it)."""
        rows = await self.redis.all([self.redis.hget(ArenaKeys.of(a).arena, "ver") for a in arenas])
        return [int(v or 0) for v in rows]


_MESSAGES = {
    "no_such_arena": "no such arena",
    "arena_over": "this arena's time is over",
    "not_member": "you are not a member of this arena",
}
