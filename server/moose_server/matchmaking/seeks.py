"""Correspondence tickets of the public queue: a player waits days, if need be, for a
two-seat game of `days` per move.

They are kept apart from the real-time queue (a player may hold one of each, and
one per days value): a player waiting for a correspondence opponent still plays
real-time games meanwhile. A ticket is the player's, not a socket's: it stays
when their sockets close, until they withdraw it (`leave_queue` with `days`) or
it is `correspondence_ticket_ttl` old. Each `queue` with `days` is one atomic
step (lua/seek.lua): paired with the oldest other ticket of the same days, whose
game this instance deals at once, or queued.

Known limit: an instance that dies between the pairing and the deal loses the
other player's ticket (they queue again); the real-time queue's formed tables
are leased, these are not.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from moose_server.deals import Deals
from moose_server.errors import Refusal
from moose_server.matchmaking.calls import SeekCall
from moose_server.play import Results, Seat
from moose_server.settings import Settings
from moose_server.storage.codec import as_list, as_text
from moose_server.storage.gateway import Gateway
from moose_server.storage.keys import SEEK_NAMES_KEY, seeks_key

__all__ = ["Seeks"]

log = logging.getLogger(__name__)

# room(player, days): raise `too_many_games` when the player may not start such a game.
Room = Callable[[str, int | None], Awaitable[None]]
TRIES = 5  # partners at their cap passed over before this player queues instead


class Seeks:
    """The correspondence tickets of every instance, in Redis."""

    def __init__(
        self, redis: Gateway, deals: Deals, results: Results, settings: Settings, room: Room
    ) -> None:
        self.redis = redis
        self.deals = deals
        self.results = results  # the seats' ratings as a game starts
        self.settings = settings
        self.room = room

    async def seek(self, player: str, name: str, days: int) -> int | None:
        """Pair the player with a waiting ticket of `days` (None: the game is dealt, both
        get `match`) or queue them: when the ticket was queued (Redis ms)."""
        ttl_ms = round(self.settings.correspondence_ticket_ttl * 1000)
        for _ in range(TRIES):
            call = SeekCall(player, name, days, ttl_ms)
            got = as_list(await self.redis.run(call, *call.build()))
            if as_text(got[0]) == "queued":
                return int(float(as_text(got[1])))
            other, other_name = as_text(got[1]), as_text(got[2])
            try:
                await self.room(other, days)  # at their cap meanwhile: their ticket goes
            except Refusal:
                continue
            await self._deal(Seat(other, other_name, None), Seat(player, name, None), days)
            return None
        raise Refusal("unavailable", "no correspondence game could be made; try again")

    async def _deal(self, first: Seat, second: Seat, days: int) -> None:
        """Deal the game of two paired tickets: the one who waited takes seat 0."""
        seats = [first, second]
        profiles = await self.results.profiles(seats, days)
        rated = self.settings.rate_queue
        game = await self.deals.start(seats, rated=rated, profiles=profiles, days=days)
        log.info(
            "correspondence match of %s and %s, %d days a move",
            first.player,
            second.player,
            days,
            extra={"event": "match", "game": game.id if game else None},
        )

    async def withdraw(self, player: str, days: int) -> bool:
        """Withdraw the player's ticket of `days`; False when they had none."""
        removed = self.redis.zrem(seeks_key(days), player)
        named = self.redis.hdel(SEEK_NAMES_KEY, f"{days}:{player}")
        gone, _ = await self.redis.all([removed, named])
        return bool(gone)
