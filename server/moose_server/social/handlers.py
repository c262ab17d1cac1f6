"""The message handlers of chat, blocks and follows.

`Social.register` adds them to the router: each handler takes the socket's
session and the typed message (moose.messages) and returns the answer, or raises
an error with a PROTOCOL.md code. A player is named by id ("p_...", as chat lines
and `table` seats give it), by account name, or, with `game`, by the name shown
at that game's table. A guest has no profile: named by id, they keep the name
they were last blocked or followed under, else their id.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from moose.messages import (
    Block,
    ChallengeSetting,
    ChatHistory,
    Follow,
    Following,
    Report,
    Request,
    Say,
    Unblock,
    Unfollow,
)
from moose.messages import (
    Blocks as BlocksList,
)
from moose_server.accounts import PlayerStore
from moose_server.errors import Refusal
from moose_server.limits.limiter import Limiter
from moose_server.limits.limits import CodeGuard
from moose_server.moderation import Reports
from moose_server.net.router import Router
from moose_server.net.session import Peer
from moose_server.play import NOT_SHOWN, GameError, Games
from moose_server.social.blocks import Blocks
from moose_server.social.chat import Chat
from moose_server.social.consent import Consent
from moose_server.social.following import Following as FollowingAnswers
from moose_server.social.follows import Follows

__all__ = ["Social"]

Message = dict[str, Any]
GUEST_ID = re.compile(r"^p_[0-9a-f]{10}$")  # accounts/identity.py's player ids
Handler = Callable[[Any, Any], Awaitable[Message]]


def _player(conn: Peer) -> str:
    assert conn.player is not None
    return conn.player


class Social:
    """Say, read chat back, block, follow."""

    def __init__(
        self,
        chat: Chat,
        blocks: Blocks,
        follows: Follows,
        reports: Reports,
        games: Games,
        players: PlayerStore,
        guard: CodeGuard,
        limiter: Limiter,
        consent: Consent,
        following: FollowingAnswers,
    ) -> None:
        self.chat = chat
        self.blocks = blocks
        self.follows = follows
        self.reports = reports  # finds a player by id or account name
        self.games = games
        self.players = players
        self.guard = guard  # a request naming a join code pays a guess if refused
        self.limiter = limiter  # follows and blocks added per address (rates `social`)
        self.consent = consent
        self.answers = following  # the `following` answers, one per socket every few s
        self.table: dict[type[Request], Handler] = {
            Say: self.say,
            ChatHistory: self.chat_history,
            Block: self.block,
            Unblock: self.unblock,
            BlocksList: self.blocks_list,
            Follow: self.follow,
            Unfollow: self.unfollow,
            Following: self.following,
            ChallengeSetting: self.challenge_setting,
        }

    def register(self, router: Router) -> None:
        """Handle chat, blocks and follows."""
        router.add(self.table)

    async def say(self, conn: Any, msg: Say) -> Message:
        """Say a line at a game or a private table."""
        if msg.code is None:
            return await self.chat.say(conn, conn.name, conn.address, msg)
        async with self.guard.attempt(conn.address, _player(conn)):
            return await self.chat.say(conn, conn.name, conn.address, msg)

    async def chat_history(self, conn: Any, msg: ChatHistory, blocked_too: bool = False) -> Message:
        """The lines kept of a room, after `since`."""
        if msg.code is None:
            return await self.chat.history(conn, msg, blocked_too)
        async with self.guard.attempt(conn.address, _player(conn)):
            return await self.chat.history(conn, msg, blocked_too)

    async def whom(self, conn: Any, target: str, game_id: str | None) -> tuple[str, str]:
        """(player id, name) of the player `target` names (see the module docstring)."""
        if game_id is None and GUEST_ID.match(target):
            found = (await self.players.profiles([target]))[0]
            if "name" not in found:
                return target, await self._guest(conn, target, bool(found))
        if game_id is not None:
            game = await self.games.load(game_id)
            if not game.shown_to(conn.player, game_id in conn.subs):
                raise GameError("not_in_game", NOT_SHOWN)
            seat = game.seat_named(target)
            if seat is None and target in game.players:
                seat = game.players.index(target)
            player = game.players[seat] if seat is not None else None
            if seat is None or player is None:
                raise Refusal(
                    "no_such_player", f"no player of game {game_id} is called {target[:24]!r}"
                )
            return player, game.names[seat]
        return await self.reports.find(target)

    async def _guest(self, conn: Any, player: str, kept: bool) -> str:
        """The name of a guest named by id (`_known`), when the id is a player's: known
        to us, connected, seated in a game, or with a profile `kept`; else
        `no_such_player`, so that no one stores ids that never were."""
        name = await self._known(conn, player)
        if name is not None:
            return name
        live = await self.follows.presence.online(player)  # the name they play with now
        if live is not None:
            return live
        if kept or (await self.follows.playing([player]))[0]:
            return player
        raise Refusal("no_such_player", f"no player is called {player[:24]!r}")

    async def _known(self, conn: Any, player: str) -> str | None:
        """A guest's name: at a game this socket follows, else as we last blocked or
        followed them, else None."""
        for game_id in list(conn.subs):
            try:
                game = await self.games.load(game_id)
            except Refusal:
                continue
            if player in game.players:
                return str(game.names[game.players.index(player)])
        for names in (await self.follows.of(_player(conn)), await self.blocks.of(_player(conn))):
            if player in names:
                return names[player]
        return None

    async def block(self, conn: Any, msg: Block) -> Message:
        """Block a player: their chat no longer reaches us, nor their challenges."""
        player, name = await self.whom(conn, msg.player, msg.game)
        async with self.limiter.attempt("social", address=conn.address):
            await self.blocks.block(_player(conn), player, name)
        return {"type": "blocked", "player": player, "name": name}

    async def challenge_setting(self, conn: Any, msg: ChallengeSetting) -> Message:
        """Who may challenge us: changed when `challenges` is given, and said."""
        wanted = msg.challenges
        if wanted is None:
            setting = await self.consent.setting(_player(conn))
        else:
            setting = await self.consent.change(_player(conn), wanted)
        return {"type": "challenge_setting", "challenges": setting}

    async def unblock(self, conn: Any, msg: Unblock) -> Message:
        """Unblock a player."""
        player, name = await self.whom(conn, msg.player, msg.game)
        await self.blocks.unblock(_player(conn), player)
        return {"type": "unblocked", "player": player, "name": name}

    async def blocks_list(self, conn: Any, msg: BlocksList) -> Message:
        """The players we blocked."""
        blocked = await self.blocks.of(_player(conn))
        return {"type": "blocks", "players": await self._named(blocked)}

    async def follow(self, conn: Any, msg: Follow) -> Message:
        """Follow a player."""
        player, name = await self.whom(conn, msg.player, msg.game)
        async with self.limiter.attempt("social", address=conn.address):
            await self.follows.follow(_player(conn), conn.name, player, name)
        self.answers.forget(_player(conn), id(conn))
        return {"type": "followed", "player": player, "name": name}

    async def unfollow(self, conn: Any, msg: Unfollow) -> Message:
        """Stop following a player."""
        player, name = await self.whom(conn, msg.player, msg.game)
        await self.follows.unfollow(_player(conn), player)
        self.answers.forget(_player(conn), id(conn))
        return {"type": "unfollowed", "player": player, "name": name}

    async def following(self, conn: Any, msg: Following) -> Message:
        """The players we follow, each online or not, with the unfinished games of theirs
        we may watch (and how many others they sit in: private tables' games)."""
        return await self.answers.answer(_player(conn), id(conn))

    async def _named(self, names: dict[str, str]) -> list[Message]:
        """Players with their names: an account's as it is now, a guest's as kept."""
        profiles = await self.players.profiles(list(names))
        return [
            {"player": p, "name": prof.get("name", name)}
            for (p, name), prof in zip(names.items(), profiles, strict=True)
        ]

    async def quoted(self, conn: Any, msg: Report) -> Message | None:
        """The chat line a `report` names (`chat`: its id, in the room of `game` or
        `code` this socket reads), to keep with the report; None when it names none."""
        if msg.chat is None:
            return None
        # A blocked speaker's lines too: blocking someone is no reason not to report them.
        room = ChatHistory(game=msg.game, code=msg.code, room=msg.room)
        found = await self.chat_history(conn, room, blocked_too=True)
        lines: list[Message] = found["lines"]
        for line in lines:
            if line["line"] == msg.chat:
                return line
        raise Refusal("no_such_message", f"no chat line {msg.chat[:24]!r} is kept there")
