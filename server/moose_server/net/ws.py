"""One WebSocket: read loop -> dispatch; every frame out through aiohttp's writer.

The reader applies the rate limit, decodes each frame once into its typed
message (moose.messages: msgspec's JSON or msgpack decoder, which checks every
field as it reads) and runs the handler the message's feature registered with
the router (`router.py`).
`send` never waits: the frame goes to aiohttp's writer at once (`outbox.py`), so
a move's `moved` and the events the hub sends are on the wire when they are
sent, not when the loop turn ends. The kernel and aiohttp buffer what the client
has not read; what aiohttp does not take meanwhile waits in the socket's outbox,
and once more than `send_buffer` bytes wait there and in the transport's buffer
the client reads too slowly and is dropped (close 1013) instead of stalling the
hub; so is the socket that holds the most once all of them hold more than
`send_buffer_total` (`outbox.Backlog`). A dropped socket's waiting frames go at
once. Client mistakes become `error` messages with a stable code and the socket
stays open; Redis trouble becomes `unavailable`; anything else is logged and
answered `internal`.

The frames went straight to the transport before, one write per socket and loop
turn: the whole server used 1.14-1.23x less CPU per move that way
(BENCHMARKS.md, "Full speed": *Tried and not kept*), under the 1.5x that would
keep a hand-written writer beside aiohttp's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

import msgspec
from aiohttp import WSMsgType, web

from moose import messages, protocol
from moose.messages import ClientMessage, Error, Hello, Reply
from moose.protocol import ProtocolError
from moose_server.addresses import networks
from moose_server.errors import Refusal
from moose_server.limits.limiter import Limited, SocketRate
from moose_server.limits.limits import Sockets
from moose_server.limits.rates import rate
from moose_server.net.outbox import Backlog, Outbox, Send
from moose_server.net.router import Router
from moose_server.net.session import Sub
from moose_server.ops.metrics import Metrics
from moose_server.origins import Origins
from moose_server.settings import Settings
from moose_server.storage.codec import pack
from moose_server.storage.failures import UNAVAILABLE

__all__ = ["DOORS", "Connection", "Doors", "Socket", "websocket"]

log = logging.getLogger(__name__)
MESSAGES = rate("messages")  # the per-socket rate, as the table of limits says

CLOSE_FLOOD = 1008
CLOSE_SLOW = 1013
CLOSE_RESTART = 1012
CLOSE_NO_HELLO = 4408  # no hello within MOOSE_HELLO_TIMEOUT of the upgrade
CLOSE_REVOKED = 4001  # the account logged out everywhere (or changed its password)
_Refusal = (ProtocolError, Refusal)
_UNENCODABLE = protocol.error("internal", "the answer could not be encoded (logged)")


class Socket(Protocol):
    """What the instance needs of an open socket: a way to ask it to close, its heartbeat,
    who it is and a way to refuse it (moderators' notices, moderation/notices.py)."""

    player: str | None
    address: str

    def send_error(
        self,
        code: str,
        message: str,
        msg_id: Any = None,
        game: str | None = None,
        fields: dict[str, Any] | None = None,
    ) -> None:
        """Send an error with a stable code."""

    def close(self, code: int, message: str = "") -> None:
        """Close after what was sent before has been written."""

    def beat(self, now: float, heartbeat: float) -> None:
        """Ping the socket if it has been silent `heartbeat` s; cut it if a ping went unanswered."""


class Refusals(Protocol):
    """Where a refusal of a limit is noted, for operators (moderation/refusals.py)."""

    def refused(self, limit: str, address: str, player: str | None, name: str) -> None:
        """`address` (`player`, `name`) was refused by `limit`."""


class Doors:
    """The way in at /ws: what every socket uses (built once in app.py), the sockets
    open now, and whether the instance is draining (it lets no new one in)."""

    def __init__(
        self,
        settings: Settings,
        limits: Sockets,
        router: Router,
        metrics: Metrics,
        refusals: Refusals,
    ) -> None:
        self.settings = settings
        self.limits = limits  # the caps on open sockets, in all and per address
        self.router = router  # the features' message handlers and a socket's hooks
        self.metrics = metrics
        self.refusals = refusals  # every refusal of a limit, for `moose admin refusals`
        self.open: set[Socket] = set()
        self.draining = False
        self.origins = Origins(settings.allowed_origins, networks(settings.trusted_proxies))
        self.backlog = Backlog(settings.send_buffer_total)  # what all sockets hold queued

    def ask_to_reconnect(self, reason: str) -> None:
        """Close every socket with 1012: the client library reconnects at once and resumes."""
        for conn in list(self.open):
            conn.close(CLOSE_RESTART, reason)


DOORS = web.AppKey("doors", Doors)


class Connection:
    """One client's socket: its player, the games it follows, the frames it is sent."""

    def __init__(
        self,
        ws: web.WebSocketResponse,
        doors: Doors,
        transport: asyncio.BaseTransport | None,
        address: str = "unknown",
    ) -> None:
        self.ws = ws
        self.doors = doors
        self.address = address
        settings = doors.settings
        self.binary = True
        self.player: str | None = None
        self.name = ""
        self.bot = False
        self.generation: int | None = None  # an account's token generation; None: a guest
        self.subs: dict[str, Sub] = {}
        self.away: set[str] = set()  # games where our seat is away: back on any message
        self._transport: Any = transport  # the socket's: aborted when a client lingers
        self._outbox = Outbox()
        self._limit = settings.send_buffer
        self._loop = asyncio.get_running_loop()
        self._rate = SocketRate(settings, self._loop.time())  # messages a second
        self._unencodable = False  # logged once: a client must not be able to flood the log
        self._refused = 0  # `rate_limited` sent so far: the 1st, 10th, 100th, ... logged
        self._closing = False
        self._cut: asyncio.TimerHandle | None = None  # aborts the transport (see `_cut_later`)
        self.close_sent: int | None = None  # the close code this server sent, if it closed
        self.seen = self._loop.time()  # when the client last sent a frame (heartbeats.py)
        self._pinged = 0.0  # when we last pinged it

    async def run(self) -> None:
        """Serve the socket until it closes; then forget it everywhere."""
        self.doors.open.add(self)
        timeout = self.doors.settings.hello_timeout
        hello = self._loop.call_later(timeout, self._no_hello)
        try:
            async for raw in self.ws:
                self.seen = self._loop.time()
                if self._closing:
                    continue  # draining until the close handshake ends the loop
                if raw.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                    await self._frame(raw.data)
                elif raw.type == WSMsgType.PING:
                    self._write(self.ws.pong, raw.data)  # a PONG needs nothing but `seen`
                elif raw.type == WSMsgType.ERROR:
                    break
        finally:
            hello.cancel()
            await self._cleanup()

    def _no_hello(self) -> None:
        if self.player is None:
            log.info(
                "closing a socket from %s that said no hello",
                self.address,
                extra={"event": "no_hello"},
            )
            self.close(CLOSE_NO_HELLO, "no hello in time")

    async def _cleanup(self) -> None:
        s = self.doors
        # aiohttp's close_code is the peer's answer to our close frame (1000 to a
        # 1012), or None after an abort: log the code we sent when we closed.
        by = "server" if self.close_sent is not None else "client"
        code = self.close_sent if self.close_sent is not None else self.ws.close_code
        log.info(
            "disconnect %s (close code %s from the %s)",
            self.player or "before hello",
            code,
            by,
            extra={
                "event": "disconnect",
                "player": self.player,
                "close_code": code,
                "closed_by": by,
            },
        )
        s.open.discard(self)
        s.backlog.release(self)
        s.router.dropped(self)  # it follows no game, list or arena from here on
        await self._outbox.aclose()
        self._cut_later()
        await s.router.closed(self)  # the queue, presence, a bot session: given back

    # -- reading ------------------------------------------------------------------

    async def _frame(self, data: bytes | str) -> None:
        if self.player is None:
            self.binary = isinstance(data, bytes)  # answers follow the hello's encoding
        if not self._rate.allow(self._loop.time()):
            self._limited(data)
            return
        await self._answer(data)

    async def _answer(self, data: bytes | str) -> None:
        msg_id = None
        msg: ClientMessage | None = None
        try:
            msg = messages.decode(data)  # typed and checked, or ProtocolError
            msg_id = msg.id
            answer = await self._dispatch(msg)
        except _Refusal as exc:
            if isinstance(exc, ProtocolError) and msg is None:
                msg_id = exc.msg_id  # the id of a message that failed its check
            fields = getattr(exc, "fields", None)
            self.send_error(exc.code, exc.message, msg_id, _game_of(msg), fields)
            if isinstance(exc, Limited):
                mtype = msg.__struct_config__.tag if msg is not None else "?"
                self.doors.refusals.refused(
                    f"{exc.code}:{mtype}", self.address, self.player, self.name
                )
            elif isinstance(exc, Refusal) and exc.close is not None:
                self.close(exc.close, exc.message)
            return
        except UNAVAILABLE as exc:
            log.warning(
                "storage unavailable: %s",
                exc,
                extra={"event": "redis_error", "player": self.player},
            )
            self.send_error("unavailable", "the server cannot reach its storage; try again", msg_id)
            return
        except Exception:
            log.exception(
                "request failed",
                extra={
                    "event": "internal_error",
                    "player": self.player,
                    "game": _game_of(msg),
                },
            )
            self.send_error("internal", "internal error (logged)", msg_id)
            return
        if answer is not None:
            if msg_id is not None and isinstance(answer, dict):
                answer["id"] = msg_id  # a Reply Struct carries it already
            self.send(answer)

    async def _dispatch(self, msg: ClientMessage) -> dict[str, Any] | Reply | None:
        hello = type(msg) is Hello
        if self.player is None and not hello:
            raise ProtocolError("hello_required", "say hello first")
        if self.player is not None and hello:
            raise ProtocolError("already_hello", "this socket has said hello already")
        if self.away:  # a seat of ours is away: it comes back (play/handlers.py)
            await self.doors.router.back(self)
        return await self.doors.router.handle(self, msg)

    def _limited(self, data: bytes | str) -> None:
        msg_id = None
        with contextlib.suppress(ProtocolError):  # a refused frame still gets its id back
            msg_id = protocol.request_id(protocol.decode(data))
        wait = {"retry_after": self._rate.retry_after_ms()}
        self.send_error(MESSAGES.code, MESSAGES.message, msg_id, None, wait)
        self.doors.refusals.refused("rate_limited:messages", self.address, self.player, self.name)
        if self._rate.strikes >= self.doors.settings.rate_strikes:
            log.info(
                "closing a flooding socket of %s",
                self.player,
                extra={"event": "flood", "player": self.player},
            )
            self.close(CLOSE_FLOOD, "flooding")

    # -- writing ------------------------------------------------------------------

    def send(self, message: dict[str, Any] | Reply) -> None:
        """Send a message (written now, unless the client is behind); never waits."""
        if self._closing:
            return
        try:
            frame = pack(message) if self.binary else _json(message)
        except (ValueError, TypeError, OverflowError, msgspec.EncodeError) as exc:
            # A value the protocol check let through by mistake: the client gets
            # `internal` instead of a dead socket, and the log one line per socket.
            if not self._unencodable:
                self._unencodable = True
                log.error(
                    "cannot encode a %s message: %s",
                    _type_of(message),
                    exc,
                    extra={"event": "internal_error", "player": self.player},
                )
            frame = protocol.encode(_UNENCODABLE, binary=self.binary)
        self.send_frame(frame)

    def send_frame(self, payload: bytes | str) -> None:
        """Send an encoded message: bytes as a binary frame, str as a text frame."""
        if self._closing:
            return
        self._write(self.ws.send_str if isinstance(payload, str) else self.ws.send_bytes, payload)

    def _write(self, send: Send, payload: bytes | str) -> None:
        """One frame through aiohttp, after those before it; drop a client that stopped reading."""
        # queued(), inline: this runs for every frame of every socket.
        transport, outbox = self._transport, self._outbox
        queued = outbox.size + (transport.get_write_buffer_size() if transport is not None else 0)
        if queued > self._limit:
            self.drop_slow()
            return
        outbox.put(send, payload)
        if queued or outbox.size:
            self.doors.backlog.report(self, self.queued())

    def queued(self) -> int:
        """Bytes this socket holds queued: its outbox's and its transport's buffer."""
        transport = self._transport
        buffered = transport.get_write_buffer_size() if transport is not None else 0
        return self._outbox.size + int(buffered)

    def drop_slow(self) -> None:
        """Close with 1013 a client that reads too slowly; what waits for it goes now."""
        if self._closing:
            return
        log.info(
            "dropping a slow client (%s)",
            self.player,
            extra={"event": "slow_client", "player": self.player},
        )
        self._outbox.discard()
        self.doors.backlog.release(self)
        self._close(CLOSE_SLOW, "")

    def send_error(
        self,
        code: str,
        message: str,
        msg_id: Any = None,
        game: str | None = None,
        fields: dict[str, Any] | None = None,
    ) -> None:
        """Send an error with a stable code (`game`: the game it is about, for the log;
        `fields`: more fields of the message, such as `retry_after`)."""
        if code not in protocol.ERROR_CODES:
            log.error("unknown error code %s: %s", code, message)
            code = "internal"
        self.doors.metrics.error(code)
        level, count, logged = logging.DEBUG, None, True
        if code == "rate_limited":  # a flood of them: the 1st, 10th, 100th, ... logged
            self._refused = count = self._refused + 1
            level, logged = logging.INFO, _tenfold(count)
        if logged and log.isEnabledFor(level):
            log.log(
                level,
                "error %s to %s: %s%s",
                code,
                self.player,
                message,
                f" (refusal {count} of this socket)" if count else "",
                extra={
                    "event": "error",
                    "code": code,
                    "player": self.player,
                    "game": game,
                    "refusals": count,
                },
            )
        if not fields:
            self.send(Error(code=code, message=message, id=msg_id))
        elif fields.keys() <= Error.KNOWN:
            self.send(Error(code=code, message=message, id=msg_id, **fields))
        else:  # a field the Struct does not name yet: the map, as PROTOCOL.md has it
            self.send({**protocol.error(code, message, msg_id), **fields})

    def close(self, code: int, message: str = "") -> None:
        """Close after what was sent before has been written."""
        if not self._closing:
            self._close(code, message)

    def _close(self, code: int, message: str) -> None:
        """Send the close frame after what waits, and cut the socket should it linger."""
        self._closing, self.close_sent = True, code
        ws = self.ws

        async def close(text: bytes) -> None:
            await ws.close(code=code, message=text, drain=False)

        # In a task (aiohttp's close waits for the handshake), a loop turn later as before:
        # at once, tests/test_ws.py's client was reset before it read the close frame in 6
        # runs of 20 (its pongs still on their way when aiohttp shut the transport).
        # A close frame's reason holds 123 bytes of UTF-8 at most (RFC 6455, 5.5).
        reason = message.encode()[:123].decode(errors="ignore").encode()
        self._outbox.put(close, reason, now=False)
        self._cut_later()

    def _cut_later(self) -> None:
        """Abort the transport `close_timeout` from now, unless it has closed by then.

        A clean close waits until the peer has read everything queued for it, and
        a peer that never reads never lets it finish: its socket would stay open,
        holding the kernel's send queue and ours, long after we dropped it.
        """
        if self._cut is None and self._transport is not None:
            timeout = self.doors.settings.close_timeout
            self._cut = self._loop.call_later(timeout, self._transport.abort)

    def beat(self, now: float, heartbeat: float) -> None:
        """Ping the socket if it has been silent `heartbeat` s; cut it if a ping went unanswered.

        Called for each socket once every `heartbeat / 2` (heartbeats.py): a silent
        socket is pinged within 1.5 `heartbeat` and cut within as long again.
        """
        transport = self._transport
        if self._closing or transport is None or transport.is_closing():
            return
        if self._pinged > self.seen:  # no frame since our ping
            if now - self._pinged >= heartbeat / 2:
                log.info(
                    "cutting a socket of %s that did not answer a ping",
                    self.player,
                    extra={"event": "no_pong", "player": self.player},
                )
                transport.abort()
        elif now - self.seen >= heartbeat:
            self._pinged = now
            self._write(self.ws.ping, b"")

    # -- called by the hub --------------------------------------------------------

    def note_away(self, game: str) -> None:
        """Our seat in `game` is away now."""
        self.away.add(game)

    async def on_player_message(self, message: dict[str, Any]) -> None:
        """A `match` or `table` for our player; after a match, the game's first events.

        `revoked` (the account logged out everywhere) closes every socket of an
        older token generation.
        """
        if message.get("type") == "revoked":
            if self.generation is not None and self.generation < message["generation"]:
                self.close(CLOSE_REVOKED, "logged out everywhere")
            return
        self.send(message)
        await self.doors.router.told(self, message)  # a `match`: we follow its game


async def websocket(request: web.Request) -> web.WebSocketResponse:
    """GET /ws: one client connection."""
    doors = request.app[DOORS]
    settings = doors.settings
    # aiohttp refuses a frame of max_msg_size bytes already; PROTOCOL.md lets it through.
    # No heartbeat and no autoping from aiohttp: pings and pongs are ours (heartbeats.py).
    ws = web.WebSocketResponse(
        max_msg_size=settings.max_msg_size + 1,
        compress=False,
        timeout=settings.close_timeout,
        autoping=False,
    )
    if doors.draining:
        raise web.HTTPServiceUnavailable(text="draining")
    _check_origin(request, doors.origins)
    limits = doors.limits
    address = limits.address(request.remote, request.headers.get("X-Forwarded-For"))
    refused = limits.refusal(address)
    if refused is not None:
        doors.metrics.refused.labels("full" if refused.status == 503 else "address").inc()
        raise refused
    with limits.held(address):
        await ws.prepare(request)
        log.info("connect from %s", address, extra={"event": "connect"})
        await Connection(ws, doors, request.transport, address).run()
    return ws


def _check_origin(request: web.Request, origins: Origins) -> None:
    """Refuse (403) a browser page of another site: it would play as its visitor."""
    origin = request.headers.get("Origin")
    own = origins.own(request.scheme, request.host, request.remote, request.headers)
    if not origins.allows(origin, own):
        extra = {"event": "foreign_origin"}
        log.info("refused a socket from a page at %r (this server is %s)", origin, own, extra=extra)
        raise web.HTTPForbidden(
            text="WebSocket refused: this page's origin is not this server's, nor one of "
            "MOOSE_ALLOWED_ORIGINS\n"
        )


def _json(message: dict[str, Any] | Reply) -> str:
    """A message as a JSON text frame."""
    if isinstance(message, Reply):
        return msgspec.json.encode(message).decode()
    return str(protocol.encode(message, binary=False))


def _type_of(message: dict[str, Any] | Reply) -> object:
    """A message's `type`, for the log."""
    if isinstance(message, Reply):
        return message.__struct_config__.tag
    return message.get("type")


def _tenfold(n: int) -> bool:
    """Whether `n` is 1, 10, 100, ...: the refusals of one socket that are logged."""
    while n % 10 == 0:
        n //= 10
    return n == 1


def _game_of(msg: ClientMessage | None) -> str | None:
    """The game a request is about, if it names one."""
    game = getattr(msg, "game", None)
    return game if isinstance(game, str) else None
