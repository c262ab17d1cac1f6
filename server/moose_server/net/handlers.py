"""One small handler per client message type: check, call games/matchmaking, answer.

`Handlers` is built once per instance with the parts it calls; each handler
takes the socket's session and the checked message and returns the answer
(without `id`; the socket adds it), or raises an error with a PROTOCOL.md code.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from moose.protocol import PROTOCOL_VERSION, ProtocolError
from moose_server.accounts import names, ratings
from moose_server.accounts.bans import Bans
from moose_server.accounts.identity import Accounts, Identity
from moose_server.accounts.leaderboards import DEFAULT_LIMIT, Boards
from moose_server.accounts.limits import CodeGuard, Limited
from moose_server.accounts.quotas import Quotas
from moose_server.accounts.reports import Reports, clean_reason
from moose_server.lobby.dealer import Lobby, game_id_of
from moose_server.lobby.invites import Invites
from moose_server.lobby.live_games import LiveGames
from moose_server.lobby.matchmaking import (
    MatchError,
    Matchmaker,
    TableInfo,
    Ticket,
    normalize_code,
)
from moose_server.lobby.presence import Presence
from moose_server.net.arena_requests import ArenaRequests
from moose_server.net.frames import seat_deadline
from moose_server.net.hub import Hub, Peer
from moose_server.net.invite_handlers import invite_handlers
from moose_server.net.social import Social
from moose_server.net.waiting import Waiting
from moose_server.ops.metrics import Metrics
from moose_server.play.game import Game, GameError, finished_record
from moose_server.play.games import Games
from moose_server.storage.players import PlayerStore
from moose_server.storage.store import Store

__all__ = ["Handlers", "Session"]

log = logging.getLogger(__name__)

Message = dict[str, Any]
DEFAULT_TABLE = 4


def _player(conn: Session) -> str:
    assert conn.player is not None
    return conn.player


class Session(Peer, Protocol):
    """What a handler needs of a socket: the hub's view of it, plus who it is."""

    name: str
    address: str  # the client's address (addresses.py), for the limits kept per client
    bot: bool
    generation: int | None  # an account's token generation; None: a guest


def _identity(conn: Session) -> Identity:
    return Identity(_player(conn), conn.name, conn.bot, conn.generation)


class Handlers:
    """The message handlers of one instance, with the parts they call."""

    def __init__(
        self, store: Store, games: Games, hub: Hub, accounts: Accounts, matchmaker: Matchmaker,
        lobby: Lobby, metrics: Metrics, guard: CodeGuard, boards: Boards,
        live: LiveGames, waiting: Waiting, bans: Bans, reports: Reports, quotas: Quotas,
        arenas: ArenaRequests, social: Social, invites: Invites | None = None,
        presence: Presence | None = None,
    ) -> None:  # fmt: skip
        self.store = store
        self.games = games
        self.hub = hub
        self.accounts = accounts
        self.players: PlayerStore = accounts.players
        self.matchmaker = matchmaker
        self.lobby = lobby
        self.metrics = metrics
        self.guard = guard
        self.boards = boards
        self.live = live
        self.waiting = waiting  # who queued here: queued again should Redis lose them
        self.bans = bans  # banned accounts and addresses: refused at hello
        self.reports = reports
        self.quotas = quotas  # what one player or address may hold (issue 22)
        self.arenas = arenas  # the arena messages (issue 26, arena)
        self.social = social  # chat, blocks, follows (issue 25): its own handlers
        self.bot_sockets: dict[int, str] = {}  # id(session) -> its address: a bot session
        self.table: dict[str, Callable[[Session, Message], Awaitable[Message | None]]] = {
            "hello": self.hello, "ping": self.ping, "queue": self.queue,
            "leave_queue": self.leave_queue, "queue_range": self.queue_range,
            "queue_bots": self.queue_bots, "create_table": self.create_table,
            "join_table": self.join_table, "add_bot": self.add_bot,
            "leave_table": self.leave_table, "start_table": self.start_table,
            "move": self.move, "sync": self.sync, "watch": self.watch, "unwatch": self.unwatch,
            "record": self.record, "register": self.register,
            "change_password": self.change_password, "logout_all": self.logout_all,
            "leaderboard": self.leaderboard, "profile": self.profile, "games": self.games_list,
            "report": self.report, "seed": self.seed, **arenas.table(),
        }  # fmt: skip
        self.presence = presence  # who is connected anywhere: challenges (issue 25)
        if invites is not None:
            self.table.update(invite_handlers(invites))
        self.table.update(social.table)

    async def handle(self, mtype: str, conn: Session, msg: Message) -> Message | None:
        """Run the handler of a checked message of type `mtype`."""
        return await self.table[mtype](conn, msg)

    async def hello(self, conn: Session, msg: Message) -> Message:
        """Start a session: a new player with a name, or an old one with a token."""
        if msg["protocol"] != PROTOCOL_VERSION:
            raise ProtocolError(
                "protocol_version", f"this server speaks protocol {PROTOCOL_VERSION}"
            )
        self.bans.check(conn.address)  # before any work (a password hash) is done for it
        now = await self.store.now_ms()
        if msg.get("token"):
            who = await self.accounts.resume(msg["token"], now / 1000)
            self.metrics.reconnects.inc()
        elif msg.get("name") is None:
            raise ProtocolError("bad_message", "'hello' needs a 'name' or a 'token'")
        elif msg.get("password") is not None:
            who = await self.accounts.login(msg["name"], msg["password"], conn.address)
        else:
            who = await self._guest(conn, names.clean(msg["name"]), bool(msg.get("bot")))
        self.bans.check(conn.address, who.player)
        if who.bot and id(conn) not in self.bot_sockets:
            await self._bot_session(conn, new=False)
        self._become(conn, who)
        self.hub.add_player(conn)
        if self.presence is not None:
            await self.presence.here([(who.player, who.name)])
        games = await self._resume(conn)
        await self.quotas.seated(conn.address, games)
        # A returning player may sit at a private table that has not started: say which.
        table = await self.matchmaker.seated_table(who.player) if msg.get("token") else None
        how = "resumed" if msg.get("token") else "login" if msg.get("password") else "new"
        log.info("hello %s (%s, %s session, %d games)", who.player, who.name, how, len(games),
                 extra={"event": "hello", "player": who.player,
                        "games": games or None})  # fmt: skip
        welcome = {
            "type": "welcome", "protocol": PROTOCOL_VERSION, "player": who.player,
            "name": who.name, "token": self.accounts.token(who, now / 1000), "server_time": now,
            "games": games, "account": who.account, "bot": who.bot,
            "table": _table_fields(table),
        }  # fmt: skip
        if who.renamed_from is not None:  # an account took this guest's name meanwhile
            welcome["renamed_from"] = who.renamed_from
        return welcome

    async def _guest(self, conn: Session, name: str, bot: bool) -> Identity:
        """A new guest; a new bot's session is counted (and metered) before its profile
        is written."""
        if bot:
            await self._bot_session(conn, new=True)
        try:
            return await self.accounts.guest(name, bot)
        except BaseException:
            if bot:
                await self.closed(conn)
            raise

    async def _bot_session(self, conn: Session, new: bool) -> None:
        await self.quotas.enter_bot(conn.address, new)
        self.bot_sockets[id(conn)] = conn.address

    async def closed(self, conn: Session) -> None:
        """The socket closed: what it held that counts per address is given back."""
        gone = conn.player is not None and not self.hub.player_peers(conn.player)
        if self.presence is not None and gone:
            await self.presence.left(_player(conn))
        self.arenas.closed(conn)
        address = self.bot_sockets.pop(id(conn), None)
        if address is not None:
            await self.quotas.leave_bot(address)

    async def matched(self, conn: Session, game: str) -> None:
        """The socket's player was dealt a seat in `game`: it counts for the address."""
        await self.quotas.seated(conn.address, [game])

    @staticmethod
    def _become(conn: Session, who: Identity) -> None:
        conn.player, conn.name, conn.bot, conn.generation = (
            who.player,
            who.name,
            who.bot,
            who.generation,
        )

    async def register(self, conn: Session, msg: Message) -> Message:
        """Claim the session's name as an account with a password (same player id)."""
        now = await self.store.now_ms()
        who = await self.accounts.register(_identity(conn), msg["password"], now, conn.address)
        self._become(conn, who)
        log.info("register %s (%s)", who.player, who.name,
                 extra={"event": "register", "player": who.player})  # fmt: skip
        return {"type": "registered", "player": who.player, "name": who.name,
                "token": self.accounts.token(who, now / 1000)}  # fmt: skip

    async def change_password(self, conn: Session, msg: Message) -> Message:
        """A new password; the account's other sessions are logged out."""
        who = await self.accounts.change_password(
            _identity(conn), msg["password"], msg["new_password"], conn.address
        )
        return {"type": "password_changed", "token": await self._revoke_others(conn, who)}

    async def logout_all(self, conn: Session, msg: Message) -> Message:
        """Refuse every earlier token of the account, and close its other sockets."""
        who = await self.accounts.logout_all(_identity(conn))
        return {"type": "logged_out", "token": await self._revoke_others(conn, who)}

    async def _revoke_others(self, conn: Session, who: Identity) -> str:
        """This socket takes the new generation; every older one, on any instance, closes."""
        self._become(conn, who)
        assert who.generation is not None
        await self.store.publish_player(who.player, {"type": "revoked",
                                                     "generation": who.generation})  # fmt: skip
        log.info("logout everywhere %s", who.player,
                 extra={"event": "revoke", "player": who.player})  # fmt: skip
        return self.accounts.token(who, await self.store.now_ms() / 1000)

    async def leaderboard(self, conn: Session, msg: Message) -> Message:
        """The best players of the humans' or the bots' leaderboard."""
        kind, limit = msg.get("kind", "humans"), msg.get("limit", DEFAULT_LIMIT)
        return {"type": "leaderboard", **await self.boards.page(kind, limit, msg.get("offset", 0))}

    async def profile(self, conn: Session, msg: Message) -> Message:
        """A player's rating, rank and history (by id, account name, or seat of a game
        this player may watch; default: our own)."""
        player, name = msg.get("player"), msg.get("name")
        if msg.get("game") is not None:
            player = await self._seat_player(conn, msg["game"], msg.get("seat"))
        found = await self.boards.find(player, name) if player or name else _player(conn)
        out = await self.boards.profile(found, await self.store.now_ms())
        return {"type": "profile", **out, "arenas_won": await self.arenas.won(found)}

    async def _seat_player(self, conn: Session, game_id: str, seat: object) -> str:
        """The player at `seat` of a game this player may watch; no_such_player for a server
        bot's seat or a seat the game does not have."""
        game = await self._visible(conn, game_id, None)
        if not isinstance(seat, int) or not 0 <= seat < len(game.players):
            raise ProtocolError("bad_message", f"seat is 0 to {len(game.players) - 1}")
        player = game.players[seat]
        if player is None or game.bots[seat] is not None:
            raise GameError("no_such_player", "a server bot has no profile")
        return player

    async def _resume(self, conn: Session) -> list[str]:
        """Follow the player's unfinished games again; an away seat comes back."""
        player = _player(conn)
        found = []
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
            self.hub.join(conn, game_id, seat, game.version)
            if game.away[seat]:
                await self.games.back(game_id, player)
            found.append(game_id)
        return found

    async def ping(self, conn: Session, msg: Message) -> Message:
        """Answer with Redis' clock."""
        return {"type": "pong", "server_time": await self.store.now_ms()}

    async def queue(self, conn: Session, msg: Message) -> Message:
        """Join the public queue."""
        low, high = msg.get("min_players", 2), msg.get("max_players", 6)
        await self.quotas.may_play(conn.address, _player(conn))
        [profile] = await self.players.profiles([_player(conn)])
        skill = ratings.skill(float(profile.get("mu", ratings.MU)))
        fair = bool(msg.get("fair"))
        since = await self.matchmaker.enqueue(_player(conn), conn.name, low, high, skill, fair)
        self.waiting.add(_player(conn), conn.name, low, high, skill, fair)
        log.info("queue %s for %s-%s seats", conn.player, low, high,
                 extra={"event": "queue", "player": conn.player})  # fmt: skip
        return self._queued(Ticket(since, low, high))

    def _queued(self, ticket: Ticket) -> Message:
        """The `queued` answer of PROTOCOL.md for a ticket."""
        mm = self.matchmaker.options
        return {
            "type": "queued", "min_players": ticket.min_players,
            "max_players": ticket.max_players, "server_time": ticket.since,
            "match_wait": mm.match_wait, "queue_bots_after": mm.queue_bots_after,
            "queue_offer_after": mm.offer_after, "bots": ticket.bots,
        }  # fmt: skip

    async def queue_range(self, conn: Session, msg: Message) -> Message:
        """Change the sizes of table the player waits for, keeping their place."""
        player = _player(conn)
        ticket = await self.matchmaker.change_range(
            player, msg.get("min_players", 2), msg.get("max_players", 6)
        )
        self.waiting.change(player, ticket.min_players, ticket.max_players)
        log.info("queue_range %s for %s-%s seats", player, ticket.min_players,
                 ticket.max_players, extra={"event": "queue_range", "player": player})  # fmt: skip
        return self._queued(ticket)

    async def queue_bots(self, conn: Session, msg: Message) -> Message:
        """A player who waited long enough asks for a table now, bots in the empty seats."""
        player = _player(conn)
        ticket = await self.matchmaker.ask_bots(player, msg.get("players"))
        log.info("queue_bots %s for %s seats", player, ticket.bots,
                 extra={"event": "queue_bots", "player": player})  # fmt: skip
        return self._queued(ticket)

    async def leave_queue(self, conn: Session, msg: Message) -> Message:
        """Leave the public queue."""
        self.waiting.discard(_player(conn))
        if not await self.matchmaker.leave(_player(conn)):
            raise MatchError("not_queued", "you are not in the queue")
        log.info(
            "leave_queue %s", conn.player, extra={"event": "leave_queue", "player": conn.player}
        )
        return {"type": "left"}

    async def create_table(self, conn: Session, msg: Message) -> Message:
        """Open a private table with us as host."""
        mm = self.matchmaker
        players, rated = msg.get("players", DEFAULT_TABLE), bool(msg.get("rated"))
        fair = bool(msg.get("fair"))
        await self.quotas.may_play(conn.address, _player(conn))
        async with self.quotas.hosting(conn.address) as held:
            info = await mm.create_table(_player(conn), conn.name, players, rated, conn.bot, fair)
            held.id = info.code
        return info.as_message()

    # Every request naming a join code pays the guess limit (limits.CodeGuard) if refused.

    async def join_table(self, conn: Session, msg: Message) -> Message:
        """Sit at a private table; everyone there hears of it."""
        await self.quotas.may_play(conn.address, _player(conn))
        async with self.guard.attempt(conn.address, _player(conn)):
            info = await self.matchmaker.join_table(
                msg["code"], _player(conn), conn.name, conn.bot, bool(msg.get("fair"))
            )
        await self.lobby.tell_table(info, skip=conn.player)
        return info.as_message()

    async def add_bot(self, conn: Session, msg: Message) -> Message:
        """The host seats a bot."""
        player, bot = _player(conn), msg.get("bot", "greedy")
        async with self.guard.attempt(conn.address, player):
            info = await self.matchmaker.add_bot(msg["code"], player, bot)
        await self.lobby.tell_table(info, skip=conn.player)
        return info.as_message()

    async def leave_table(self, conn: Session, msg: Message) -> Message:
        """Leave a private table before it starts."""
        async with self.guard.attempt(conn.address, _player(conn)):
            info = await self.matchmaker.leave_table(msg["code"], _player(conn))
        await self.lobby.tell_table(info, skip=conn.player)
        if info is None:
            return {"type": "table", "code": msg["code"], "host": None, "players": 0, "seats": []}
        return info.as_message()

    async def start_table(self, conn: Session, msg: Message) -> Message:
        """The host starts the game; every seated player gets `match`."""
        async with self.quotas.starting(conn.address, _player(conn)) as held:
            async with self.guard.attempt(conn.address, _player(conn)):
                table = await self.matchmaker.start_table(msg["code"], _player(conn))
            game = await self.lobby.start(table)  # None: a fair deal waits for its seeds
            held.id = game.id if game is not None else game_id_of(table.key)
        return self.lobby.started_message(msg["code"], _player(conn), table)

    async def seed(self, conn: Session, msg: Message) -> Message:
        """A fair seat's seed for its game's deal (PROTOCOL.md, "Provably fair deals")."""
        return await self.lobby.deals.seed(msg["game"], _player(conn), msg["seed"])

    async def move(self, conn: Session, msg: Message) -> Message:
        """Play a move in one of our games."""
        game, received = msg["game"], time.perf_counter()
        seq = await self.games.move(
            game, _player(conn), msg["move"], msg.get("seq"), msg.get("move_id")
        )
        self.metrics.commit_latency.observe(time.perf_counter() - received)
        return {"type": "moved", "game": game, "seq": seq}

    async def sync(self, conn: Session, msg: Message) -> Message:
        """Resend the events after `since`, or the current state."""
        game_id = msg["game"]
        try:
            game = await self._found(conn, game_id, tell=True)
        except GameError:
            self.hub.leave(conn, game_id)  # gone (Redis lost it, or it expired)
            raise
        if game is None:  # dealt soon: `start` comes as seq 1 (PROTOCOL.md, `sync`)
            return {"type": "synced", "game": game_id, "seq": 0}
        sub = conn.subs.get(game_id)
        if sub is None:
            seat = game.seat_of(_player(conn))
            if seat is None:
                raise GameError("not_in_game", f"you have no seat in game {game_id}; watch it")
            sub = self.hub.join(conn, game_id, seat, game.version)
        since = msg.get("since")
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
            match = await self.lobby.deals.waiting_match(game_id, _player(conn))
        if match is None:
            return await self.games.load(game_id)  # dealt since we looked, or no such game
        if tell:
            await conn.on_player_message(match)  # follows it, and counts for the address
        else:
            self.hub.join(conn, game_id, match["seat"], 0)
        return None

    async def _visible(self, conn: Session, game_id: str, code: str | None) -> Game:
        """The game, when this player may look at it: any queue game; a private table's
        game for its seated players and whoever holds its join code (a wrong code pays
        the guess limit)."""
        if code is None:
            game = await self.games.load(game_id)
            if game.code is not None and game.seat_of(_player(conn)) is None:
                raise GameError("not_in_game", "a private table's game is watched with its code")
            return game
        async with self.guard.attempt(conn.address, _player(conn)):
            game = await self.games.load(game_id)
            stranger = game.code is not None and game.seat_of(_player(conn)) is None
            if stranger and normalize_code(code) != game.code:
                raise MatchError("bad_code", f"that is not the join code of game {game_id}")
        return game

    async def watch(self, conn: Session, msg: Message) -> Message:
        """Follow a game as a spectator (a seated player keeps their seat's view)."""
        game_id = msg["game"]
        watched = sum(1 for sub in conn.subs.values() if sub.seat is None)
        most = self.quotas.settings.watched_per_socket
        if game_id not in conn.subs and watched >= most:
            raise Limited(f"this socket watches {most} games already; unwatch one first", None,
                          "too_many_watched")  # fmt: skip
        game = await self._visible(conn, game_id, msg.get("code"))
        self.hub.join(conn, game_id, game.seat_of(_player(conn)), game.version)
        await self.hub.send_state(conn, game_id)
        return {"type": "watching", "game": game_id, "seq": conn.subs[game_id].seen}

    async def unwatch(self, conn: Session, msg: Message) -> Message:
        """Stop following a game as a spectator."""
        sub = conn.subs.get(msg["game"])
        if sub is not None and sub.seat is None:
            self.hub.leave(conn, msg["game"])
        return {"type": "unwatched", "game": msg["game"]}

    async def record(self, conn: Session, msg: Message) -> Message:
        """The record of a finished game (of a private table's: as for `watch`); a rated
        queue game's also after the game expired, while its record is kept."""
        try:
            game = await self._visible(conn, msg["game"], msg.get("code"))
        except GameError as exc:
            kept = await self.store.kept_record(msg["game"]) if exc.code == "no_such_game" else None
            if kept is None:
                raise
            return {"type": "record", "game": msg["game"], "record": kept}
        return {"type": "record", "game": msg["game"], "record": finished_record(game)}

    async def games_list(self, conn: Session, msg: Message) -> Message:
        """The live public games; with `follow`, again whenever the list changes."""
        if msg.get("follow"):
            self.live.follow(conn)
        elif msg.get("follow") is False:
            self.live.unfollow(conn)
        return dict(await self.live.snapshot())

    async def report(self, conn: Session, msg: Message) -> Message:
        """Report a player to the moderators (`moose admin reports`)."""
        reason, game_id, target = clean_reason(msg["reason"]), msg.get("game"), msg["player"]
        if target == conn.player:
            raise ProtocolError("bad_message", "you cannot report yourself")
        line = await self.social.quoted(conn, msg)  # a chat line it names (issue 25)
        if line is not None:
            player, name = line["player"], line["name"]
        elif game_id is not None:
            game = await self.games.load(game_id)
            player, name = _seated(game, target)
        else:
            player, name = await self.reports.find(target)
        if player == conn.player:
            raise ProtocolError("bad_message", "you cannot report yourself")
        await self.reports.take(_player(conn), conn.address)
        now = await self.store.now_ms()
        await self.reports.keep(reporter=conn.player, reporter_name=conn.name,
                                address=conn.address, player=player, name=name, game=game_id,
                                reason=reason, at=now, chat=line["line"] if line else None,
                                text=line["text"] if line else None)  # fmt: skip
        log.info("report of %s (%s) by %s: %s", player, name, conn.player, reason,
                 extra={"event": "report", "player": conn.player, "game": game_id})  # fmt: skip
        return {"type": "reported", "player": player, "name": name}


def _seated(game: Game, target: str) -> tuple[str, str]:
    """(player id, name) of the seat of `game` called `target`; or no_such_player."""
    seat = game.seat_named(target)
    player = game.players[seat] if seat is not None else None
    if seat is not None and player is not None:
        return player, game.names[seat]
    raise GameError("no_such_player", f"no player of game {game.id} is called {target[:24]!r}")


def _table_fields(table: TableInfo | None) -> Message | None:
    """A `table` message's fields but its type, for `welcome`."""
    if table is None:
        return None
    fields = table.as_message()
    del fields["type"]
    return fields
