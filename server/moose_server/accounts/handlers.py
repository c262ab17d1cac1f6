"""The messages of who plays: hello, ping, register, passwords, logout; leaderboards, profiles.

`hello` is where a socket becomes a player: the features that follow a player
(their games, presence, a private table they sit at) are told as `Arrival`s, in
the order app.py gives them, and each adds its fields to `welcome`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from moose.messages import (
    ChangePassword,
    Hello,
    Leaderboard,
    LogoutAll,
    Ping,
    Pong,
    Profile,
    Register,
)
from moose.protocol import PROTOCOL_VERSION, ProtocolError
from moose_server.accounts import names
from moose_server.accounts.identity import Accounts, Identity
from moose_server.accounts.leaderboards import DEFAULT_LIMIT, Boards
from moose_server.net.router import Router
from moose_server.net.session import Message, Session, player_of
from moose_server.storage.store import Store

__all__ = ["Admission", "Arrival", "BotSessions", "Profiles", "Sessions"]

log = logging.getLogger(__name__)


class Admission(Protocol):
    """Who may come in (moderation's bans)."""

    def check(self, address: str, player: str | None = None) -> None:
        """Refuse (`banned`) an address, or a player, that is banned."""


class BotSessions(Protocol):
    """The bot sessions an address holds, and its new guests (limits' quotas)."""

    async def enter_bot(self, address: str, new: bool) -> None:
        """One more bot session of `address`, or `too_many_bots`."""

    async def leave_bot(self, address: str) -> None:
        """A bot session of `address` ended."""

    async def new_guest(self, address: str) -> None:
        """One more new guest of `address` this hour, or `rate_limited`."""


class Arrival(Protocol):
    """A feature told of each socket that said hello."""

    async def arrived(self, conn: Session, resumed: bool) -> Message:
        """The socket is its player's now (`resumed`: by a token); fields for `welcome`."""


def _identity(conn: Session) -> Identity:
    return Identity(player_of(conn), conn.name, conn.bot, conn.generation)


def _become(conn: Session, who: Identity) -> None:
    conn.player, conn.name, conn.bot, conn.generation = (
        who.player,
        who.name,
        who.bot,
        who.generation,
    )


class Sessions:
    """hello, ping, register, change_password, logout_all; a bot session's count."""

    def __init__(
        self,
        accounts: Accounts,
        store: Store,
        admission: Admission,
        bots: BotSessions,
        reconnected: Callable[[], None],
        arrivals: Sequence[Arrival],
    ) -> None:
        self.accounts = accounts
        self.store = store
        self.admission = admission  # banned accounts and addresses: refused at hello
        self.bots = bots
        self.reconnected = reconnected  # counts the sessions resumed by a token
        self.arrivals = arrivals
        self.bot_sockets: dict[int, str] = {}  # id(session) -> its address: a bot session

    def register(self, router: Router) -> None:
        """Handle the session messages; a closed bot socket's session ends."""
        router.add(
            {
                Hello: self.hello,
                Ping: self.ping,
                Register: self.register_account,
                ChangePassword: self.change_password,
                LogoutAll: self.logout_all,
            }
        )
        router.on_closed(self.closed)

    async def hello(self, conn: Session, msg: Hello) -> Message:
        """Start a session: a new player with a name, or an old one with a token."""
        if msg.protocol != PROTOCOL_VERSION:
            raise ProtocolError(
                "protocol_version", f"this server speaks protocol {PROTOCOL_VERSION}"
            )
        self.admission.check(conn.address)  # before any work (a password hash) is done for it
        now = await self.store.now_ms()
        if msg.token:
            # A banned player hears `banned` (why, and until when), not that the ban
            # revoked their token.
            self.admission.check(conn.address, self.accounts.signed(msg.token, now / 1000))
            who = await self.accounts.resume(msg.token, now / 1000)
            self.reconnected()
        elif msg.name is None:
            raise ProtocolError("bad_message", "'hello' needs a 'name' or a 'token'")
        elif msg.password is not None:
            who = await self.accounts.login(msg.name, msg.password, conn.address)
        else:
            who = await self._guest(conn, names.clean(msg.name), bool(msg.bot))
        self.admission.check(conn.address, who.player)
        if who.bot and id(conn) not in self.bot_sockets:
            await self._bot_session(conn, new=False)
        _become(conn, who)
        fields: Message = {}
        for arrival in self.arrivals:
            fields.update(await arrival.arrived(conn, bool(msg.token)))
        games = fields.get("games", [])
        how = "resumed" if msg.token else "login" if msg.password else "new"
        log.info(
            "hello %s (%s, %s session, %d games)",
            who.player,
            who.name,
            how,
            len(games),
            extra={"event": "hello", "player": who.player, "games": games or None},
        )
        welcome = {
            "type": "welcome",
            "protocol": PROTOCOL_VERSION,
            "player": who.player,
            "name": who.name,
            "token": self.accounts.token(who, now / 1000),
            "server_time": now,
            "games": games,
            "account": who.account,
            "bot": who.bot,
            "table": fields.get("table"),
        }
        if fields.get("challenges"):  # correspondence challenges waiting for this player
            welcome["challenges"] = fields["challenges"]
        if who.renamed_from is not None:  # an account took this guest's name meanwhile
            welcome["renamed_from"] = who.renamed_from
        return welcome

    async def _guest(self, conn: Session, name: str, bot: bool) -> Identity:
        """A new guest, metered per address before anything is written; a new bot's
        session is counted (and metered apart) before its profile is written."""
        if bot:
            await self._bot_session(conn, new=True)
        else:
            await self.bots.new_guest(conn.address)
        try:
            return await self.accounts.guest(name, bot)
        except BaseException:
            if bot:
                await self.closed(conn)
            raise

    async def _bot_session(self, conn: Session, new: bool) -> None:
        await self.bots.enter_bot(conn.address, new)
        self.bot_sockets[id(conn)] = conn.address

    async def closed(self, conn: Session) -> None:
        """The socket closed: a bot session it held ends."""
        address = self.bot_sockets.pop(id(conn), None)
        if address is not None:
            await self.bots.leave_bot(address)

    async def ping(self, conn: Session, msg: Ping) -> Pong:
        """Answer with Redis' clock."""
        return Pong(server_time=await self.store.now_ms(), id=msg.id)

    async def register_account(self, conn: Session, msg: Register) -> Message:
        """Claim the session's name as an account with a password (same player id)."""
        now = await self.store.now_ms()
        who = await self.accounts.register(_identity(conn), msg.password, now, conn.address)
        _become(conn, who)
        log.info(
            "register %s (%s)",
            who.player,
            who.name,
            extra={"event": "register", "player": who.player},
        )
        return {
            "type": "registered",
            "player": who.player,
            "name": who.name,
            "token": self.accounts.token(who, now / 1000),
        }

    async def change_password(self, conn: Session, msg: ChangePassword) -> Message:
        """A new password; the account's other sessions are logged out."""
        who = await self.accounts.change_password(
            _identity(conn), msg.password, msg.new_password, conn.address
        )
        return {"type": "password_changed", "token": await self._revoke_others(conn, who)}

    async def logout_all(self, conn: Session, msg: LogoutAll) -> Message:
        """Refuse every earlier token of the account, and close its other sockets."""
        who = await self.accounts.logout_all(_identity(conn))
        return {"type": "logged_out", "token": await self._revoke_others(conn, who)}

    async def _revoke_others(self, conn: Session, who: Identity) -> str:
        """This socket takes the new generation; every older one, on any instance, closes."""
        _become(conn, who)
        assert who.generation is not None
        await self.store.publish_player(
            who.player, {"type": "revoked", "generation": who.generation}
        )
        log.info(
            "logout everywhere %s", who.player, extra={"event": "revoke", "player": who.player}
        )
        return self.accounts.token(who, await self.store.now_ms() / 1000)


SeatPlayer = Callable[[Session, str, object], Awaitable[str]]


class Profiles:
    """leaderboard and profile."""

    def __init__(
        self,
        boards: Boards,
        store: Store,
        seat_player: SeatPlayer,
        won: Callable[[str], Awaitable[list[str]]],
    ) -> None:
        self.boards = boards
        self.store = store
        self.seat_player = seat_player  # the player at a seat of a game one may watch (play)
        self.won = won  # the arenas a player won (arenas)

    def register(self, router: Router) -> None:
        """Handle leaderboard and profile."""
        router.add({Leaderboard: self.leaderboard, Profile: self.profile})

    async def leaderboard(self, conn: Session, msg: Leaderboard) -> Message:
        """The best players of the humans' or the bots' leaderboard of a rating pool."""
        kind = "humans" if msg.kind is None else msg.kind
        limit = DEFAULT_LIMIT if msg.limit is None else msg.limit
        offset = 0 if msg.offset is None else msg.offset
        pool = "realtime" if msg.pool is None else msg.pool
        return {"type": "leaderboard", **await self.boards.page(kind, limit, offset, pool)}

    async def profile(self, conn: Session, msg: Profile) -> Message:
        """A player's rating, rank and history (by id, account name, or seat of a game
        this player may watch; default: our own)."""
        player, name = msg.player, msg.name
        if msg.game is not None:
            player = await self.seat_player(conn, msg.game, msg.seat)
        found = await self.boards.find(player, name) if player or name else player_of(conn)
        out = await self.boards.profile(found, await self.store.now_ms())
        return {"type": "profile", **out, "arenas_won": await self.won(found)}
