"""Vacation: a player pauses the clocks of their correspondence games for some days.

`vacation` with `days` holds every deadline of each of the player's unfinished
correspondence games (theirs and their opponents': the game waits for them) until
they are back and have one full turn more: at least `days` plus the game's own
days per move from now (Store.defer, the hold the commit script keeps). A player
may take `vacation_days` such days a calendar year (Redis' clock, UTC), counted
in one atomic increment that a refusal takes back.
"""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

from moose_server.errors import Refusal
from moose_server.play.correspondence import DAY_MS
from moose_server.play.game import GameError
from moose_server.play.games import Games
from moose_server.settings import Settings
from moose_server.storage.keys import vacation_key
from moose_server.storage.store import Store

__all__ = ["Vacation"]

Message = dict[str, Any]
KEPT_S = 400 * 86_400  # a year's count outlives its year


class Vacation:
    """The `vacation` message: days a year, taken against the player's allowance."""

    def __init__(self, store: Store, games: Games, settings: Settings) -> None:
        self.store = store
        self.games = games
        self.settings = settings

    async def take(self, player: str, days: Any) -> Message:
        """Hold the player's correspondence games `days` (and a turn) from now; the
        `vacation` answer, or bad_message / not_allowed past the year's allowance."""
        most = self.settings.vacation_days
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= most:
            raise Refusal("bad_message", f"days must be 1 to {most}")
        now = await self.store.now_ms()
        year = datetime.datetime.fromtimestamp(now / 1000, datetime.UTC).year
        key, redis = vacation_key(player), self.store.redis
        used, _ = await redis.all([redis.hincrby(key, year, days), redis.expire(key, KEPT_S)])
        if used > most:
            await redis.hincrby(key, year, -days)
            left = most - (used - days)
            raise Refusal("not_allowed", f"you have {left} vacation days left this year")
        held = await self._hold(player, days)
        return {"type": "vacation", "days": days, "games": held, "left": most - used}

    async def _hold(self, player: str, days: int) -> list[str]:
        """Hold each unfinished correspondence game of the player; their ids."""
        ids = await self.store.correspondence_games(player)
        loaded = await asyncio.gather(*(self.games.load(g) for g in ids), return_exceptions=True)
        held = []
        for game in loaded:
            if isinstance(game, GameError):  # expired, or its deal waits for seeds
                continue
            if isinstance(game, BaseException):
                raise game
            if game.finished or game.days is None or game.seat_of(player) is None:
                continue
            await self.store.defer([game.id], (days + game.days) * DAY_MS)
            held.append(game.id)
        return sorted(held)
