"""The message of reports: `report`, a player reported to the moderators (`moose admin reports`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from moose.messages import Report
from moose.protocol import ProtocolError
from moose_server.moderation.reports import Reports, clean_reason
from moose_server.net.router import Router
from moose_server.net.session import Message, Session, player_of
from moose_server.play import NOT_SHOWN, Game, GameError, Games
from moose_server.storage.store import Store

__all__ = ["ReportHandlers"]

log = logging.getLogger(__name__)

Quoted = Callable[[Session, Report], Awaitable[Message | None]]
# find(socket, target, None): (player id, name) of an account's name or a player's id,
# a connected guest's included (social's `whom`); or no_such_player.
Find = Callable[[Session, str, None], Awaitable[tuple[str, str]]]


class ReportHandlers:
    """Take a report: its reporter metered, the player it names found, the report kept."""

    def __init__(
        self, reports: Reports, store: Store, games: Games, quoted: Quoted, find: Find
    ) -> None:
        self.reports = reports
        self.store = store
        self.games = games
        self.quoted = quoted  # the chat line a report names, if any (social)
        self.find = find

    def register(self, router: Router) -> None:
        """Handle `report`."""
        router.add({Report: self.report})

    async def report(self, conn: Session, msg: Report) -> Message:
        """Report a player to the moderators (`moose admin reports`)."""
        reason, game_id, target = clean_reason(msg.reason), msg.game, msg.player
        if target == conn.player:
            raise ProtocolError("bad_message", "you cannot report yourself")
        line = await self.quoted(conn, msg)  # a chat line it names
        if line is not None:
            player, name = line["player"], line["name"]
        elif game_id is not None:
            game = await self.games.load(game_id)
            if not game.shown_to(conn.player, game_id in conn.subs):
                raise GameError("not_in_game", NOT_SHOWN)
            player, name = _seated(game, target)
        else:
            player, name = await self.find(conn, target, None)
        if player == conn.player:
            raise ProtocolError("bad_message", "you cannot report yourself")
        now = await self.store.now_ms()
        await self.reports.keep(
            player_of(conn),
            conn.address,
            reporter_name=conn.name,
            player=player,
            name=name,
            game=game_id,
            reason=reason,
            at=now,
            chat=line["line"] if line else None,
            text=line["text"] if line else None,
        )
        log.info(
            "report of %s (%s) by %s: %s",
            player,
            name,
            conn.player,
            reason,
            extra={"event": "report", "player": conn.player, "game": game_id},
        )
        return {"type": "reported", "player": player, "name": name}


def _seated(game: Game, target: str) -> tuple[str, str]:
    """(player id, name) of the seat of `game` called `target`; or no_such_player."""
    seat = game.seat_named(target)
    player = game.players[seat] if seat is not None else None
    if seat is not None and player is not None:
        return player, game.names[seat]
    raise GameError("no_such_player", f"no player of game {game.id} is called {target[:24]!r}")
