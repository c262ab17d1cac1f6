"""The messages of games in play: move, sync, watch, unwatch, record, my_games; and a
socket's games.

`PlayHandlers` registers them with the router, with the hooks of a socket's life
that concern its games: a `match` makes it follow the game, a message after its
seat went away brings the seat back, a closed socket follows nothing more. At
`hello` (accounts/handlers.py) it follows the player's unfinished games again.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from moose import messages
from moose.messages import Move, Moved, MyGames, Record, Sync, Unwatch, Watch
from moose.protocol import ProtocolError
from moose_server.limits.limiter import full
from moose_server.limits.limits import CodeGuard
from moose_server.net.router import Router
from moose_server.net.session import Message, Session, player_of
from moose_server.ops.metrics import Metrics
from moose_server.play.codes import clean_code
from moose_server.play.frames import seat_deadline
from moose_server.play.game import Game, GameError, finished_record
from moose_server.play.games import Games
from moose_server.play.hub import Hub
from moose_server.play.listing import my_games
from moose_server.play.vacation import Vacation
from moose_server.settings import Settings
from moose_server.storage.failures import UNAVAILABLE
from moose_server.storage.store import Store

__all__ = ["PlayHandlers", "WaitingDeals"]

# A move refused with one of these codes sends the seat the events it missed first.
BEHIND = frozenset({"stale_seq", "not_your_turn"})

# seated(address, games, correspondence): where the games count for the address.
Seated = Callable[[str, list[str], list[str]], Awaitable[None]]


class WaitingDeals(Protocol):
    """The games whose fair deal waits for seeds (deals/deals.py)."""

    async def waiting_match(self, game: str, player: str) -> Message | None:
        """The `match` of `player` in `game` while its deal waits; None otherwise."""


class PlayHandlers:
    """Moves, syncs, spectators and records; a socket's games as it comes and goes."""

    def __init__(
        self,
        store: Store,
        games: Games,
        hub: Hub,
        deals: WaitingDeals,
        guard: CodeGuard,
        metrics: Metrics,
        settings: Settings,
        seated: Seated,
    ) -> None:
        self.store = store
        self.games = games
        self.hub = hub
        self.deals = deals
        self.guard = guard  # a wrong join code pays the guess limit
        self.metrics = metrics
        self.settings = settings
        self.watched = settings.watched_per_socket
        self.seated = seated  # where a socket's games count for its address (limits)

    def register(self, router: Router) -> None:
        """Handle the game messages and follow a socket's games through its life."""
        router.add(
            {
                Move: self.move,
                Sync: self.sync,
                Watch: self.watch,
                Unwatch: self.unwatch,
                Record: self.record,
                MyGames: self.my_games,
                messages.Vacation: self.vacation,
            }
        )
        router.on_back(self.back)
        router.on_told(self.told)
        router.on_dropped(self.hub.drop)

    async def arrived(self, conn: Session, resumed: bool) -> Message:
        """A socket said hello: it hears its player's messages and follows their games."""
        self.hub.add_player(conn)
        games, slow = await self.resume(conn)
        await self.seated(conn.address, games, slow)
        return {"games": games}

    async def back(self, conn: Session) -> None:
        """The player sent something: every seat of theirs that was away is back."""
        player = player_of(conn)
        for game in list(conn.away):
            conn.away.discard(game)
            await self.games.back(game, player)

    async def told(self, conn: Session, message: Message) -> None:
        """After a `match`, the socket follows the game and gets its first events."""
        if message.get("type") != "match":
            return
        game = message["game"]
        self.hub.join(conn, game, message.get("seat"), 0, slow=bool(message.get("days")))
        await self.hub.deliver(conn, game)
        with contextlib.suppress(*UNAVAILABLE):
            # It counts for the address (a correspondence game apart).
            await self.seated(conn.address, [game], [game] if message.get("days") else [])

    async def resume(self, conn: Session) -> tuple[list[str], list[str]]:
        """Follow the player's unfinished games again; an away seat comes back. The games,
        and those of them played days a move."""
        player = player_of(conn)
        found, slow = [], []
        for game_id in await self.store.player_games(player):
            try:
                game = await self._found(conn, game_id, tell=False)
            except GameError:
                game = None
            else:
                if game is None:  # its fair deal waits for seeds
                    found.append(game_id)
                    continue
            seat = game.seat_of(player) if game is not None else None
            if game is None or seat is None or game.finished:
                await self.store.remove_player_game([player], game_id)
                continue
            self.hub.join(conn, game_id, seat, game.version, slow=game.days is not None)
            if game.away[seat]:
                await self.games.back(game_id, player)
            found.append(game_id)
            if game.days is not None:
                slow.append(game_id)
        return found, slow

    async def my_games(self, conn: Session, msg: MyGames) -> Message:
        """Our unfinished games, those where it is our move first (play/listing.py)."""
        return await my_games(self.games, self.store, player_of(conn))

    async def vacation(self, conn: Session, msg: messages.Vacation) -> Message:
        """Hold our correspondence games for some days (play/vacation.py)."""
        return await Vacation(self.store, self.games, self.settings).take(player_of(conn), msg.days)

    async def move(self, conn: Session, msg: Move) -> Moved:
        """Play a move in one of our games."""
        game, received = msg.game, time.perf_counter()
        try:
            seq = await self.games.move(game, player_of(conn), msg.move, msg.seq, msg.move_id)
        except GameError as exc:
            if exc.code in BEHIND:
                # The seat may be behind the game (an event it was never told, as
                # while Redis failed over): what it missed comes before the refusal.
                with contextlib.suppress(*UNAVAILABLE):
                    await self.hub.catch_up(conn, game)
            raise
        self.metrics.commit_latency.observe(time.perf_counter() - received)
        return Moved(game=game, seq=seq, id=msg.id)

    async def sync(self, conn: Session, msg: Sync) -> Message:
        """Resend the events after `since`, or the current state."""
        game_id = msg.game
        try:
            game = await self._found(conn, game_id, tell=True)
        except GameError:
            self.hub.leave(conn, game_id)  # gone (Redis lost it, or it expired)
            raise
        if game is None:  # dealt soon: `start` comes as seq 1 (PROTOCOL.md, `sync`)
            return {"type": "synced", "game": game_id, "seq": 0}
        sub = conn.subs.get(game_id)
        if sub is None:
            seat = game.seat_of(player_of(conn))
            if seat is None:
                raise GameError("not_in_game", f"you have no seat in game {game_id}; watch it")
            sub = self.hub.join(conn, game_id, seat, game.version, slow=game.days is not None)
        since = msg.since
        if since is None or not 0 <= since <= game.version:
            await self.hub.send_state(conn, game_id)
            seq = sub.seen
        else:
            seq = await self.hub.resend(conn, game_id, since)
            if seq < game.version:  # the events are gone: a finished game past its grace
                await self.hub.send_state(conn, game_id)
                seq = conn.subs[game_id].seen
        # The deadline as it is now: an outage may have moved it since the events were
        # sent (lua/claim.lua), and a countdown must show the time the seat really has.
        if seq != game.version:
            game = await self.games.load(game_id)
        deadline = seat_deadline(game, sub.seat)
        return {"type": "synced", "game": game_id, "seq": seq, "deadline": deadline}

    async def _found(self, conn: Session, game_id: str, tell: bool) -> Game | None:
        """The game; None while its fair deal waits for seeds: the socket then follows it
        from seq 0 (`start` comes as it is dealt) and, if `tell`, gets its `match` again.
        GameError no_such_game when neither is found."""
        try:
            return await self.games.load(game_id)
        except GameError:
            match = await self.deals.waiting_match(game_id, player_of(conn))
        if match is None:
            return await self.games.load(game_id)  # dealt since we looked, or no such game
        if tell:
            await conn.on_player_message(match)  # follows it, and counts for the address
        else:
            self.hub.join(conn, game_id, match["seat"], 0, slow=bool(match.get("days")))
        return None

    async def visible(self, conn: Session, game_id: str, code: str | None) -> Game:
        """The game, when this player may look at it: any queue game; a private table's
        game for its seated players and whoever holds its join code (a wrong code pays
        the guess limit)."""
        if code is None:
            game = await self.games.load(game_id)
            if game.code is not None and game.seat_of(player_of(conn)) is None:
                raise GameError("not_in_game", "a private table's game is watched with its code")
            return game
        async with self.guard.attempt(conn.address, player_of(conn)):
            game = await self.games.load(game_id)
            stranger = game.code is not None and game.seat_of(player_of(conn)) is None
            if stranger and clean_code(code) != game.code:
                raise GameError("bad_code", f"that is not the join code of game {game_id}")
        return game

    async def seat_player(self, conn: Session, game_id: str, seat: object) -> str:
        """The player at `seat` of a game this player may watch; no_such_player for a server
        bot's seat or a seat the game does not have."""
        game = await self.visible(conn, game_id, None)
        if not isinstance(seat, int) or not 0 <= seat < len(game.players):
            raise ProtocolError("bad_message", f"seat is 0 to {len(game.players) - 1}")
        player = game.players[seat]
        if player is None or game.bots[seat] is not None:
            raise GameError("no_such_player", "a server bot has no profile")
        return player

    async def watch(self, conn: Session, msg: Watch) -> Message:
        """Follow a game as a spectator (a seated player keeps their seat's view)."""
        game_id = msg.game
        watched = sum(1 for sub in conn.subs.values() if sub.seat is None)
        if game_id not in conn.subs and watched >= self.watched:
            raise full(
                "watched", f"this socket watches {self.watched} games already; unwatch one first"
            )
        game = await self.visible(conn, game_id, msg.code)
        seat, slow = game.seat_of(player_of(conn)), game.days is not None
        self.hub.join(conn, game_id, seat, game.version, slow=slow)
        await self.hub.send_state(conn, game_id)
        return {"type": "watching", "game": game_id, "seq": conn.subs[game_id].seen}

    async def unwatch(self, conn: Session, msg: Unwatch) -> Message:
        """Stop following a game as a spectator."""
        sub = conn.subs.get(msg.game)
        if sub is not None and sub.seat is None:
            self.hub.leave(conn, msg.game)
        return {"type": "unwatched", "game": msg.game}

    async def record(self, conn: Session, msg: Record) -> Message:
        """The record of a finished game (of a private table's: as for `watch`); a rated
        queue game's also after the game expired, while its record is kept."""
        try:
            game = await self.visible(conn, msg.game, msg.code)
        except GameError as exc:
            kept = await self.store.kept_record(msg.game) if exc.code == "no_such_game" else None
            if kept is None:
                raise
            return {"type": "record", "game": msg.game, "record": kept}
        return {"type": "record", "game": msg.game, "record": finished_record(game)}
