"""The messages of private tables (create, join, add a bot, leave, start) and of
rematches and challenges.

Each checks the message, calls the matchmaker or `Invites` and returns the
answer without `id`. Every request naming a join code pays the guess limit
(limits.CodeGuard) if refused. At `hello` with a token, a player seated at a
table that has not started is told which (`welcome`'s `table`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from moose.messages import (
    AddBot,
    Challenge,
    ChallengeAccept,
    ChallengeCancel,
    ChallengeDecline,
    CreateTable,
    JoinTable,
    LeaveTable,
    Rematch,
    RematchAccept,
    RematchDecline,
    Request,
    StartTable,
)
from moose_server.limits.limits import CodeGuard
from moose_server.limits.quotas import Quotas
from moose_server.matchmaking import Lobby, Matchmaker, TableInfo, game_id_of
from moose_server.net.router import Router
from moose_server.net.session import Session, player_of
from moose_server.play import check_days
from moose_server.tables.invites import Invites

__all__ = ["TableHandlers", "invite_handlers"]

Message = dict[str, Any]
DEFAULT_PLAYERS = 2
DEFAULT_TABLE = 4


class Who(Protocol):
    """What these handlers need of a session."""

    player: str | None
    name: str
    address: str  # the client's address, after the trusted proxies


Handler = Callable[[Any, Any], Awaitable[Message]]


def _me(conn: Who) -> str:
    assert conn.player is not None
    return conn.player


def invite_handlers(invites: Invites) -> dict[type[Request], Handler]:
    """Message class -> handler, for the rematch and challenge messages of PROTOCOL.md."""

    async def rematch(conn: Who, msg: Rematch) -> Message:
        return await invites.offer_rematch(_me(conn), msg.game, bool(msg.bots))

    async def rematch_accept(conn: Who, msg: RematchAccept) -> Message:
        return await invites.answer_rematch(_me(conn), msg.game, "accept")

    async def rematch_decline(conn: Who, msg: RematchDecline) -> Message:
        return await invites.answer_rematch(_me(conn), msg.game, "decline")

    async def challenge(conn: Who, msg: Challenge) -> Message:
        players = DEFAULT_PLAYERS if msg.players is None else msg.players
        rated, days = bool(msg.rated), check_days(msg.days)
        return await invites.challenge(
            _me(conn), conn.name, conn.address, msg.name, players, rated, bool(msg.open), days
        )

    async def challenge_accept(conn: Who, msg: ChallengeAccept) -> Message:
        return await invites.answer_challenge(_me(conn), msg.challenge, "accept")

    async def challenge_decline(conn: Who, msg: ChallengeDecline) -> Message:
        reason = "generic" if msg.reason is None else msg.reason
        return await invites.answer_challenge(_me(conn), msg.challenge, "decline", reason)

    async def challenge_cancel(conn: Who, msg: ChallengeCancel) -> Message:
        return await invites.answer_challenge(_me(conn), msg.challenge, "cancel")

    return {
        Rematch: rematch,
        RematchAccept: rematch_accept,
        RematchDecline: rematch_decline,
        Challenge: challenge,
        ChallengeAccept: challenge_accept,
        ChallengeDecline: challenge_decline,
        ChallengeCancel: challenge_cancel,
    }


class TableHandlers:
    """A private table from its creation to its start; rematches and challenges."""

    def __init__(
        self,
        matchmaker: Matchmaker,
        lobby: Lobby,
        quotas: Quotas,
        guard: CodeGuard,
        invites: Invites,
    ) -> None:
        self.matchmaker = matchmaker
        self.lobby = lobby  # starts a table's game and tells its seats of changes
        self.quotas = quotas
        self.guard = guard
        self.invites = invites

    def register(self, router: Router) -> None:
        """Handle the private tables' messages, and the rematches' and challenges'."""
        router.add(
            {
                CreateTable: self.create_table,
                JoinTable: self.join_table,
                AddBot: self.add_bot,
                LeaveTable: self.leave_table,
                StartTable: self.start_table,
            }
        )
        router.add(invite_handlers(self.invites))

    async def arrived(self, conn: Session, resumed: bool) -> Message:
        """A returning player may sit at a private table that has not started: say which;
        and the correspondence challenges that wait for them (`challenges`, when any)."""
        player = player_of(conn)
        table = await self.matchmaker.seated_table(player) if resumed else None
        waiting = await self.invites.waiting_for(player)
        return {"table": _table_fields(table), **({"challenges": waiting} if waiting else {})}

    async def create_table(self, conn: Session, msg: CreateTable) -> Message:
        """Open a private table with us as host."""
        players = DEFAULT_TABLE if msg.players is None else msg.players
        rated = bool(msg.rated)
        fair, player, days = bool(msg.fair), player_of(conn), check_days(msg.days)
        await self.quotas.may_play(conn.address, player, days)
        async with self.quotas.hosting(conn.address) as held:
            info = await self.matchmaker.create_table(
                player, conn.name, players, rated, conn.bot, fair, days
            )
            held.id = info.code
        return info.as_message()

    async def join_table(self, conn: Session, msg: JoinTable) -> Message:
        """Sit at a private table; everyone there hears of it."""
        days = await self._days_of(conn, msg.code)  # its cap: real-time or correspondence
        await self.quotas.may_play(conn.address, player_of(conn), days)
        async with self.guard.attempt(conn.address, player_of(conn)):
            info = await self.matchmaker.join_table(
                msg.code, player_of(conn), conn.name, conn.bot, bool(msg.fair)
            )
        await self.lobby.tell_table(info, skip=conn.player)
        return info.as_message()

    async def add_bot(self, conn: Session, msg: AddBot) -> Message:
        """The host seats a bot."""
        player, bot = player_of(conn), "greedy" if msg.bot is None else msg.bot
        async with self.guard.attempt(conn.address, player):
            info = await self.matchmaker.add_bot(msg.code, player, bot)
        await self.lobby.tell_table(info, skip=conn.player)
        return info.as_message()

    async def leave_table(self, conn: Session, msg: LeaveTable) -> Message:
        """Leave a private table before it starts."""
        async with self.guard.attempt(conn.address, player_of(conn)):
            info = await self.matchmaker.leave_table(msg.code, player_of(conn))
        await self.lobby.tell_table(info, skip=conn.player)
        if info is None:
            return {"type": "table", "code": msg.code, "host": None, "players": 0, "seats": []}
        return info.as_message()

    async def start_table(self, conn: Session, msg: StartTable) -> Message:
        """The host starts the game; every seated player gets `match`."""
        days = await self._days_of(conn, msg.code)
        async with self.quotas.starting(conn.address, player_of(conn), days) as held:
            async with self.guard.attempt(conn.address, player_of(conn)):
                table = await self.matchmaker.start_table(msg.code, player_of(conn))
            game = await self.lobby.start(table)  # None: a fair deal waits for its seeds
            held.id = game.id if game is not None else game_id_of(table.key)
        return self.lobby.started_message(msg.code, player_of(conn), table)

    async def _days_of(self, conn: Session, code: str) -> int | None:
        """The days per move of the table with that code (a guess if there is none)."""
        async with self.guard.attempt(conn.address, player_of(conn)):
            return (await self.matchmaker.table(code)).days


def _table_fields(table: TableInfo | None) -> Message | None:
    """A `table` message's fields but its type, for `welcome`."""
    if table is None:
        return None
    fields = table.as_message()
    del fields["type"]
    return fields
