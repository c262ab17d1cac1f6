"""The messages of the public queue and the live games' list: queue, leave_queue,
queue_range and queue_bots (a waiting player's other sizes, or bots now), games.

A player's last socket closing leaves the queue (the hook `closed`), but not
their correspondence tickets (seeks.py), and a closed socket follows the live
games' list no more (`dropped`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from moose.messages import Games, LeaveQueue, Queue, QueueBots, QueueRange
from moose_server.accounts import PlayerStore, ratings
from moose_server.limits.quotas import Quotas
from moose_server.matchmaking.live_games import LiveGames
from moose_server.matchmaking.matchmaker import START_FIELDS, MatchError, Matchmaker, Ticket
from moose_server.matchmaking.seeks import Seeks
from moose_server.matchmaking.waiting import Waiting
from moose_server.net.router import Router
from moose_server.net.session import Message, Session, player_of
from moose_server.play import check_days

__all__ = ["QueueHandlers"]

log = logging.getLogger(__name__)


class QueueHandlers:
    """Queue and leave it; the live games' list, once or followed."""

    def __init__(
        self,
        matchmaker: Matchmaker,
        waiting: Waiting,
        quotas: Quotas,
        players: PlayerStore,
        live: LiveGames,
        here: Callable[[str], bool],
        seeks: Seeks,
    ) -> None:
        self.matchmaker = matchmaker
        self.waiting = waiting  # who queued here: queued again should Redis lose them
        self.quotas = quotas
        self.players = players  # a queued player's rating
        self.live = live
        self.here = here  # whether a player has a socket on this instance still
        self.seeks = seeks  # correspondence tickets: kept when the sockets close

    def register(self, router: Router) -> None:
        """Handle the queue's messages; a closed socket leaves the queue and the list."""
        router.add(
            {
                Queue: self.queue,
                LeaveQueue: self.leave_queue,
                QueueRange: self.queue_range,
                QueueBots: self.queue_bots,
                Games: self.games_list,
            }
        )
        router.on_dropped(self.live.unfollow)
        router.on_closed(self.closed)

    async def queue(self, conn: Session, msg: Queue) -> Message:
        """Join the public queue (with `days`: its correspondence tickets, apart)."""
        days = check_days(msg.days)
        if days is not None:
            return await self._seek(conn, days)
        low, high = _sizes(msg)
        player = player_of(conn)
        playing = await self.quotas.may_play(conn.address, player)
        [profile] = await self.players.profiles([player])
        skill = ratings.skill(float(profile.get("mu", ratings.MU)))
        fair = bool(msg.fair)
        # What the game's start needs of the profile rides in the ticket, so that the
        # deal reads nothing: unless a game of theirs may end meanwhile and change it.
        known = None if playing else {f: profile[f] for f in START_FIELDS if f in profile}
        since = await self.matchmaker.enqueue(
            player, conn.name, low, high, skill, fair, profile=known
        )
        self.waiting.add(player, conn.name, low, high, skill, fair)
        log.info(
            "queue %s for %s-%s seats",
            conn.player,
            low,
            high,
            extra={"event": "queue", "player": conn.player},
        )
        return self._queued(Ticket(since, low, high))

    def _queued(self, ticket: Ticket) -> Message:
        """The `queued` answer of PROTOCOL.md for a ticket."""
        mm = self.matchmaker.options
        return {
            "type": "queued",
            "min_players": ticket.min_players,
            "max_players": ticket.max_players,
            "server_time": ticket.since,
            "match_wait": mm.match_wait,
            "queue_bots_after": mm.queue_bots_after,
            "queue_offer_after": mm.offer_after,
            "bots": ticket.bots,
        }

    async def _seek(self, conn: Session, days: int) -> Message:
        """A correspondence ticket: paired at once (`match` follows), or it waits."""
        player = player_of(conn)
        await self.quotas.may_play(conn.address, player, days)
        since = await self.seeks.seek(player, conn.name, days)
        log.info("queue %s for %d days a move", player, days, extra={"event": "queue"})
        return {"type": "queued", "days": days, "server_time": since, "matched": since is None}

    async def queue_range(self, conn: Session, msg: QueueRange) -> Message:
        """Change the sizes of table the player waits for, keeping their place."""
        player = player_of(conn)
        ticket = await self.matchmaker.change_range(player, *_sizes(msg))
        self.waiting.change(player, ticket.min_players, ticket.max_players)
        log.info(
            "queue_range %s for %s-%s seats",
            player,
            ticket.min_players,
            ticket.max_players,
            extra={"event": "queue_range", "player": player},
        )
        return self._queued(ticket)

    async def queue_bots(self, conn: Session, msg: QueueBots) -> Message:
        """A player who waited long enough asks for a table now, bots in the empty seats."""
        player = player_of(conn)
        ticket = await self.matchmaker.ask_bots(player, msg.players)
        log.info(
            "queue_bots %s for %s seats",
            player,
            ticket.bots,
            extra={"event": "queue_bots", "player": player},
        )
        return self._queued(ticket)

    async def leave_queue(self, conn: Session, msg: LeaveQueue) -> Message:
        """Leave the public queue (with `days`: withdraw that correspondence ticket)."""
        days = check_days(msg.days)
        if days is not None:
            if not await self.seeks.withdraw(player_of(conn), days):
                raise MatchError("not_queued", f"you have no ticket of {days} days a move")
            return {"type": "left", "days": days}
        self.waiting.discard(player_of(conn))
        if not await self.matchmaker.leave(player_of(conn)):
            raise MatchError("not_queued", "you are not in the queue")
        log.info(
            "leave_queue %s", conn.player, extra={"event": "leave_queue", "player": conn.player}
        )
        return {"type": "left"}

    async def games_list(self, conn: Session, msg: Games) -> Message:
        """The live public games; with `follow`, again whenever the list changes."""
        if msg.follow:
            self.live.follow(conn)
        elif msg.follow is False:
            self.live.unfollow(conn)
        return dict(await self.live.answer())

    async def closed(self, conn: Session) -> None:
        """The player's last socket here closed: they leave the queue."""
        if conn.player is not None and not self.here(conn.player):
            with contextlib.suppress(MatchError):
                await self.matchmaker.leave_if_queued(conn.player)


def _sizes(msg: Queue | QueueRange) -> tuple[int, int]:
    """The table sizes a queue message asks for: 2 to 6 players unless it says."""
    low = 2 if msg.min_players is None else msg.min_players
    return low, 6 if msg.max_players is None else msg.max_players
