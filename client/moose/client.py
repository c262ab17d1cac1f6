"""The async client library: one WebSocket to a Moose House server (PROTOCOL.md).

    async with moose.connect("ws://127.0.0.1:8080/ws", name="alice") as client:
        await client.queue(2, 4)
        async for msg in client.events():  # `match`, `table` and `event` messages
            ...

The client says hello, keeps the session token and matches each answer to its
request by `id`. When the socket drops it reconnects by itself (exponential
backoff with jitter; at once after close code 1012) to the same URL, or, given
a list of URLs (several instances), to the next one in turn; it says hello
with its token, resumes every game it follows with `sync` from the last seq it
saw, and resends the requests in flight (a move keeps its `move_id`, so the
server applies it once).

Errors, one tree::

    MooseError
     ├── ConnectError      the first connection failed: nothing answers at that URL
     ├── ConnectionLost    the socket dropped for good, or the client was closed
     └── ServerError       the server refused a request: `code`, `message`
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp

from moose import protocol
from moose.bots import Bot, make_bot

__all__ = [
    "Client",
    "ConnectError",
    "ConnectionLost",
    "GameResult",
    "MooseError",
    "ServerError",
    "connect",
    "is_final",
    "play_bot",
]

log = logging.getLogger("moose.client")

Message = dict[str, Any]
RESTART = 1012  # the server instance is going away: reconnect at once
_HELLO_TIMEOUT = 10.0
_BACKOFF_FIRST = 0.1
_BACKOFF_MAX = 5.0
# Requests that are safe to send twice; others fail with ConnectionLost when the
# socket drops before their answer (a second create_table would make a second table).
_RESENDABLE = frozenset(
    {"move", "sync", "watch", "unwatch", "record", "ping", "queue", "leave_queue"}
)


class MooseError(Exception):
    """Base of every error this library raises."""


class ConnectError(MooseError):
    """The first connection failed: no Moose House server answers at that URL."""


class ConnectionLost(MooseError):
    """The socket dropped and could not be restored, or the client was closed."""


class ServerError(MooseError):
    """The server answered a request with an error (`code` is stable, see PROTOCOL.md)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass
class _Request:
    """A request waiting for its answer."""

    message: Message
    future: asyncio.Future[Message] | None = None  # None: the client's own request
    on_answer: Callable[[Message], None] | None = None
    sent_on: int = -1  # the socket generation it was last sent on
    order: int = 0  # when it was sent: the server answers in this order


@dataclass
class _Game:
    """What the client knows of one game it sits at or watches."""

    seat: int | None
    seq: int = 0  # the last seq delivered
    top: int = 0  # the highest seq seen, ahead of `seq` while there is a gap
    watching: bool = False
    announced: bool = True  # whether `match` was delivered for it
    syncing: bool = False
    over: bool = False


@dataclass(frozen=True)
class GameResult:
    """How one game ended for the seat a bot played."""

    game: str
    seat: int
    names: list[str]
    scores: list[int]
    winners: list[int]
    moves: int = 0

    @property
    def won(self) -> bool:
        """Whether this seat is among the winners."""
        return self.seat in self.winners


@dataclass
class _Seat:
    """A bot's seat in a game being played."""

    seat: int
    names: list[str]
    moves: int = 0


_CLOSED = object()


class Client:
    """A connection to a Moose House server; use `async with moose.connect(...)`."""

    def __init__(
        self,
        url: str | Sequence[str],
        *,
        name: str | None = None,
        token: str | None = None,
        binary: bool = True,
        reconnect_timeout: float | None = 120.0,
    ) -> None:
        self.urls = [url] if isinstance(url, str) else list(url)
        if not self.urls:
            raise ValueError("no server URL")
        self.url = self.urls[0]  # the one in use; reconnects go round the list
        self.name = name
        self.token = token
        self.binary = binary
        self.reconnect_timeout = reconnect_timeout
        self.player: str | None = None
        self.clock_offset = 0.0  # server clock minus ours, in ms
        self.connected = False
        self.reconnects = 0
        # Called with ("send" | "recv", message) for every message; for logs and tests.
        self.trace: Callable[[str, Message], None] | None = None
        self._ids = itertools.count(1)
        self._sends = itertools.count(1)
        # The server allows 20 messages a second in bursts of 40 (by default).
        self.rate, self.burst = 15.0, 30.0
        self._allowance, self._checked = self.burst, time.monotonic()
        self._pending: dict[int, _Request] = {}
        self._outbox: list[_Request] = []
        self._games: dict[str, _Game] = {}
        self._queue_args: Message | None = None  # set while we want to be queued
        self._inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._session: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._gen = 0
        self._task: asyncio.Task[None] | None = None
        self._failed: MooseError | None = None
        self._closed = False

    # -- lifetime -------------------------------------------------------------

    async def __aenter__(self) -> Client:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open(self) -> None:
        """Connect and say hello; `ConnectError` when nothing answers."""
        self._session = aiohttp.ClientSession()
        try:
            for left in range(len(self.urls) - 1, -1, -1):
                try:
                    await self._connect_once()
                    break
                except ConnectError:
                    if not left:
                        raise
                    self._next_url()
        except BaseException:
            await self._session.close()
            raise
        await self._resume()
        self._task = asyncio.create_task(self._run(), name=f"moose-client {self.name}")

    async def close(self) -> None:
        """Close the socket, stop the reader and fail what still waits."""
        if self._closed:
            return
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        if self._session is not None:
            await self._session.close()
        self._fail_pending(ConnectionLost("the client is closed"))
        self._inbox.put_nowait(_CLOSED)

    def _abort(self) -> None:
        """Cut the socket without a close frame, as a network failure would (tests)."""
        if self._ws is not None and self._ws._writer.transport is not None:
            self._ws._writer.transport.abort()

    # -- requests -------------------------------------------------------------

    async def ping(self) -> float:
        """Measure the server clock's offset from ours (ms) and keep it."""
        t0 = time.time() * 1000
        answer = await self._request("ping")
        t1 = time.time() * 1000
        self.clock_offset = answer["server_time"] - (t0 + t1) / 2
        return self.clock_offset

    def server_time(self) -> float:
        """The server's clock now, in ms since the epoch, as far as we know it."""
        return time.time() * 1000 + self.clock_offset

    async def queue(self, min_players: int = 2, max_players: int = 6) -> Message:
        """Join the public queue; a `match` event follows when a table forms."""
        self._queue_args = {"min_players": min_players, "max_players": max_players}
        return await self._request("queue", **self._queue_args)

    async def leave_queue(self) -> Message:
        """Leave the public queue."""
        self._queue_args = None
        try:
            return await self._request("leave_queue")
        except ServerError as exc:
            # After a reconnect the server has already dropped us from the queue.
            if exc.code != "not_queued" or self.reconnects == 0:
                raise
            return {"type": "left"}

    async def create_table(self, players: int) -> Message:
        """Create a private table of `players` seats; the answer holds its join code."""
        return await self._request("create_table", players=players)

    async def join_table(self, code: str) -> Message:
        """Take a seat at a private table."""
        return await self._request("join_table", code=code)

    async def add_bot(self, code: str, bot: str = "greedy") -> Message:
        """Seat a server-side bot at your table (host only)."""
        return await self._request("add_bot", code=code, bot=bot)

    async def start_table(self, code: str) -> Message:
        """Start the game at your table (host only)."""
        return await self._request("start_table", code=code)

    async def leave_table(self, code: str) -> Message:
        """Leave a private table before it starts."""
        return await self._request("leave_table", code=code)

    async def move(self, game: str, move: Message, *, seq: int | None = None) -> Message:
        """Play `move`; `seq` defaults to the last event seen. Returns the `moved` answer."""
        known = self._games.get(game)
        if seq is None and known is not None:
            seq = known.seq
        move_id = f"{uuid.uuid4().hex[:16]}-{next(self._ids)}"
        return await self._request("move", game=game, move=move, seq=seq, move_id=move_id)

    async def watch(self, game: str) -> Message:
        """Follow a game as a spectator: its events arrive through `events()`."""
        known = self._games.setdefault(game, _Game(seat=None))
        known.watching = True
        return await self._request("watch", game=game)

    async def unwatch(self, game: str) -> Message:
        """Stop following a game as a spectator."""
        known = self._games.get(game)
        if known is not None:
            known.watching = False
        return await self._request("unwatch", game=game)

    async def record(self, game: str) -> Message:
        """The record of a finished game (RULES.md section 7)."""
        answer = await self._request("record", game=game)
        record: Message = answer["record"]
        return record

    def events(self) -> _Events:
        """An async iterator of `match`, `table` and `event` messages."""
        return _Events(self)

    @property
    def active_games(self) -> list[str]:
        """The unfinished games this player sits at."""
        return [g for g, k in self._games.items() if k.seat is not None and not k.over]

    async def run_bot(
        self,
        bot: Bot | str,
        games: int | None = 1,
        *,
        min_players: int = 2,
        max_players: int = 6,
        stop: Callable[[], bool] | None = None,
        on_result: Callable[[GameResult], None] | None = None,
    ) -> list[GameResult]:
        """Play `games` games from the public queue with `bot`; the result of each.

        `games=None` plays until `stop()` is true after a game ends.
        """
        if isinstance(bot, str):
            bot = make_bot(bot)
        results: list[GameResult] = []
        seats: dict[str, _Seat] = {}

        def more() -> bool:
            done = len(results) + len(seats)
            return (games is None or done < games) and not (stop is not None and stop())

        if more():
            await self.queue(min_players, max_players)
        async for msg in self.events():
            if msg["type"] == "match" and msg.get("seat") is not None:
                seats[msg["game"]] = _Seat(msg["seat"], msg.get("names") or [])
            elif msg["type"] == "event" and msg["game"] in seats:
                result = await self._bot_event(bot, seats[msg["game"]], msg)
                if result is None:
                    continue
                del seats[msg["game"]]
                results.append(result)
                if on_result is not None:
                    on_result(result)
                if not seats and more():
                    await self.queue(min_players, max_players)
                elif not seats:
                    break
        return results

    async def _bot_event(self, bot: Bot, seat: _Seat, msg: Message) -> GameResult | None:
        """Act on one event of a bot's game; the result when the game is over."""
        view, event = msg.get("view") or {}, msg.get("event") or {}
        if event.get("kind") in ("start", "state"):
            seat.names = event.get("names") or seat.names
        if is_final(msg):
            return GameResult(
                game=msg["game"],
                seat=seat.seat,
                names=seat.names,
                scores=event.get("scores") or view.get("scores") or [],
                winners=event.get("winners") or view.get("winners") or [],
                moves=seat.moves,
            )
        legal = msg.get("legal")
        if legal and view.get("to_act") == seat.seat:
            move = bot.choose(view, legal)
            for attempt in range(1, 6):
                try:
                    await self.move(msg["game"], move, seq=msg["seq"])
                    seat.moves += 1
                    break
                except ServerError as exc:
                    if exc.code in ("rate_limited", "unavailable"):  # unavailable: Redis is down
                        await asyncio.sleep(0.2 * attempt)
                        continue
                    # The game moved on (a timeout, or a newer event is queued): wait for it.
                    if exc.code not in ("stale_seq", "not_your_turn", "game_over"):
                        raise
                    break
        return None

    async def _request(self, mtype: str, **fields: Any) -> Message:
        if self._failed is not None:
            raise self._failed
        if self._closed:
            raise ConnectionLost("the client is closed")
        await self._pace()
        msg: Message = {"type": mtype, "id": next(self._ids)}
        msg.update({k: v for k, v in fields.items() if v is not None})
        req = _Request(msg, asyncio.get_running_loop().create_future())
        self._pending[msg["id"]] = req
        try:
            if self.connected:
                await self._send_request(req)
            assert req.future is not None
            return await req.future
        finally:
            self._pending.pop(msg["id"], None)

    def _internal(self, mtype: str, on_answer: Callable[[Message], None], **fields: Any) -> None:
        """A request of the client's own, answered through a callback, sent by `_flush`."""
        msg: Message = {"type": mtype, "id": next(self._ids), **fields}
        req = _Request(msg, on_answer=on_answer)
        self._pending[msg["id"]] = req
        self._outbox.append(req)

    async def _pace(self) -> None:
        """Stay under the server's rate limit (a token bucket), so bots never trip it."""
        now = time.monotonic()
        self._allowance = min(self.burst, self._allowance + (now - self._checked) * self.rate)
        self._checked = now
        self._allowance -= 1  # below zero: callers already waiting for tokens
        if self._allowance < 0:
            await asyncio.sleep(-self._allowance / self.rate)

    async def _send_request(self, req: _Request) -> None:
        req.sent_on = self._gen
        req.order = next(self._sends)
        await self._send(req.message)

    async def _send(self, msg: Message) -> None:
        if self.trace is not None:
            self.trace("send", msg)
        ws = self._ws
        if ws is None or ws.closed:
            return  # the reader notices and reconnects; pending requests are resent
        frame = protocol.encode(msg, binary=self.binary)
        with contextlib.suppress(ConnectionError, aiohttp.ClientError):
            if isinstance(frame, bytes):
                await ws.send_bytes(frame)
            else:
                await ws.send_str(frame)

    # -- the socket ---------------------------------------------------------------

    async def _connect_once(self) -> None:
        """Open a socket and say hello (with the token when we have one)."""
        assert self._session is not None
        try:
            ws = await self._session.ws_connect(
                self.url, heartbeat=15.0, max_msg_size=4 * protocol.MAX_FRAME, autoping=True
            )
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
            raise ConnectError(f"cannot reach {self.url}: {exc or type(exc).__name__}") from exc
        hello: Message = {
            "type": "hello",
            "id": next(self._ids),
            "protocol": protocol.PROTOCOL_VERSION,
        }
        if self.token:
            hello["token"] = self.token
        elif self.name:
            hello["name"] = self.name
        self._ws = ws
        try:
            await self._send(hello)
            async with asyncio.timeout(_HELLO_TIMEOUT):
                welcome = await self._await_answer(ws, hello["id"])
        except BaseException:
            await ws.close()
            self._ws = None
            raise
        if welcome["type"] == "error":
            await ws.close()
            self._ws = None
            raise ServerError(welcome.get("code", "internal"), welcome.get("message", ""))
        self.player = welcome.get("player")
        self.token = welcome.get("token", self.token)
        self.name = welcome.get("name", self.name)
        if "server_time" in welcome:
            self.clock_offset = welcome["server_time"] - time.time() * 1000
        self._gen += 1
        for game in welcome.get("games") or ():
            if game not in self._games:
                # A seat we did not know of: matched while the socket was down, or
                # an earlier session's game. `sync` tells us the seat.
                self._games[game] = _Game(seat=None, announced=False)
                self._queue_args = None

    async def _await_answer(self, ws: aiohttp.ClientWebSocketResponse, msg_id: int) -> Message:
        while True:
            raw = await ws.receive()
            if raw.type not in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
                raise ConnectError(f"{self.url} closed the connection during hello")
            msg = protocol.decode(raw.data)
            if self.trace is not None:
                self.trace("recv", msg)
            if msg.get("id") == msg_id:
                return msg

    async def _resume(self) -> None:
        """After hello: sync followed games, queue again, resend requests in flight."""
        # The client's own requests of the old socket are made afresh below.
        self._outbox.clear()
        for msg_id in [i for i, r in self._pending.items() if r.future is None]:
            del self._pending[msg_id]
        for game, known in self._games.items():
            if known.over:
                continue
            known.syncing = False
            self._sync(game, known)
            if known.watching:
                self._internal("watch", self._log_error, game=game)
        queueing = any(r.message["type"] == "queue" for r in self._pending.values())
        if self._queue_args is not None and not queueing:
            self._internal("queue", self._log_error, **self._queue_args)
        self.connected = True
        await self._flush()
        for req in list(self._pending.values()):
            if req.sent_on == self._gen:
                continue
            if req.sent_on >= 0 and req.message["type"] not in _RESENDABLE:
                del self._pending[req.message["id"]]
                assert req.future is not None
                if not req.future.done():
                    what = req.message["type"]
                    req.future.set_exception(
                        ConnectionLost(f"the connection dropped before '{what}' was answered")
                    )
                continue
            await self._send_request(req)

    async def _run(self) -> None:
        """Read until the socket closes, then reconnect; forever, until closed."""
        try:
            while True:
                code = await self._read()
                self.connected = False
                if self._closed:
                    return
                await self._reconnect(at_once=code == RESTART)
        except MooseError as exc:
            self._fail(exc)
        except Exception as exc:  # a bug here must not leave callers waiting forever
            log.exception("moose client reader failed")
            self._fail(ConnectionLost(f"the client failed: {exc!r}"))

    async def _read(self) -> int | None:
        """Dispatch messages until the socket closes; return the close code."""
        ws = self._ws
        assert ws is not None
        while True:
            raw = await ws.receive()
            if raw.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
                try:
                    msg = protocol.decode(raw.data)
                except protocol.ProtocolError as exc:
                    log.warning("bad frame from the server: %s", exc)
                    continue
                await self._dispatch(msg)
            elif raw.type in (
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSMsgType.CLOSING,
                aiohttp.WSMsgType.CLOSED,
                aiohttp.WSMsgType.ERROR,
            ):
                code = ws.close_code
                with contextlib.suppress(Exception):
                    await ws.close()
                log.info("socket closed (code %s)", code)
                return code

    async def _reconnect(self, *, at_once: bool) -> None:
        """Connect again with backoff and jitter, then resume; ConnectionLost on giving up."""
        start = time.monotonic()
        delay = _BACKOFF_FIRST
        attempt = 0
        while True:
            if attempt or not at_once:
                await asyncio.sleep(random.uniform(0, delay))  # full jitter: no thundering herd
                delay = min(_BACKOFF_MAX, delay * 2)
            attempt += 1
            self._next_url()
            try:
                await self._connect_once()
                break
            except ServerError as exc:
                if exc.code in ("bad_token", "token_expired", "protocol_version"):
                    raise ConnectionLost(f"cannot resume the session: {exc}") from exc
                last: Exception = exc
            except (ConnectError, TimeoutError, protocol.ProtocolError) as exc:
                last = exc
            if (
                self.reconnect_timeout is not None
                and time.monotonic() - start > self.reconnect_timeout
            ):
                raise ConnectionLost(f"lost the connection to {self.url}: {last}") from last
        self.reconnects += 1
        log.info("reconnected to %s (attempt %d)", self.url, attempt)
        await self._resume()

    def _next_url(self) -> None:
        """Move to the next URL of the list: the instance we were on may be gone."""
        self.url = self.urls[(self.urls.index(self.url) + 1) % len(self.urls)]

    def _fail(self, exc: MooseError) -> None:
        self._failed = exc
        self._fail_pending(exc)
        self._inbox.put_nowait(exc)

    def _fail_pending(self, exc: MooseError) -> None:
        for req in list(self._pending.values()):
            if req.future is not None and not req.future.done():
                req.future.set_exception(exc)
        self._pending.clear()

    # -- incoming messages ----------------------------------------------------------

    async def _dispatch(self, msg: Message) -> None:
        if self.trace is not None:
            self.trace("recv", msg)
        mtype = msg.get("type")
        req = self._pending.pop(msg["id"], None) if "id" in msg and mtype != "event" else None
        if req is not None:
            self._answer(req, msg)
        elif mtype == "event":
            self._on_event(msg)
        elif mtype == "match":
            self._queue_args = None
            known = self._games.setdefault(msg["game"], _Game(seat=msg.get("seat")))
            known.seat, known.announced = msg.get("seat"), True
            self._inbox.put_nowait(msg)
        elif mtype == "table":
            self._inbox.put_nowait(msg)
        elif mtype == "error" and msg.get("code") == "rate_limited":
            self._refuse_oldest(msg)
        elif mtype == "error":
            log.warning("server error: %s: %s", msg.get("code"), msg.get("message"))
        await self._flush()

    def _refuse_oldest(self, msg: Message) -> None:
        """A `rate_limited` error without id: the frame refused is our oldest unanswered one.

        The server reads a socket's frames in order and answers each before the
        next, so every request sent earlier has had its answer already.
        """
        sent = [r for r in self._pending.values() if r.sent_on == self._gen]
        if sent:
            req = min(sent, key=lambda r: r.order)
            del self._pending[req.message["id"]]
            self._answer(req, {**msg, "id": req.message["id"]})

    def _answer(self, req: _Request, msg: Message) -> None:
        if req.on_answer is not None:
            req.on_answer(msg)
        if req.future is not None and not req.future.done():
            if msg.get("type") == "error":
                code = msg.get("code", "internal")
                req.future.set_exception(ServerError(code, msg.get("message", "")))
            else:
                req.future.set_result(msg)

    def _on_event(self, msg: Message) -> None:
        """Deliver events in seq order, once each; a gap asks for `sync`."""
        game_id, seq = msg.get("game"), msg.get("seq")
        if not isinstance(game_id, str) or not isinstance(seq, int):
            return
        view = msg.get("view") or {}
        known = self._games.get(game_id)
        if known is None:
            known = self._games[game_id] = _Game(seat=view.get("seat"), announced=False)
        if seq <= known.seq:
            return  # seen already (a resend, or a sync overlapping live events)
        kind = (msg.get("event") or {}).get("kind")
        if kind != "state" and seq > known.seq + 1:
            known.top = max(known.top, seq)
            self._sync(game_id, known)
            return
        known.seq = seq
        known.top = max(known.top, seq)
        if known.seat is None and view.get("seat") is not None:
            known.seat = view["seat"]
        if not known.announced and known.seat is not None:
            # A game we learnt of from `welcome` or a sync: announce it as a match.
            known.announced = True
            self._queue_args = None
            self._inbox.put_nowait(
                {
                    "type": "match",
                    "game": game_id,
                    "seat": known.seat,
                    "players": view.get("players"),
                    "names": (msg.get("event") or {}).get("names"),  # a `state` names them
                    "resumed": True,
                }
            )
        if is_final(msg):
            known.over = True
        self._inbox.put_nowait(msg)

    def _sync(self, game_id: str, known: _Game) -> None:
        """Ask for the events after the last one seen (one sync at a time per game)."""
        if known.syncing:
            return
        known.syncing = True
        before = known.seq

        def done(answer: Message) -> None:
            known.syncing = False
            if answer.get("type") == "error":
                if answer.get("code") != "not_in_game":  # a spectator may not sync
                    log.warning("sync of %s failed: %s", game_id, answer.get("message"))
                return
            if known.top > known.seq > before:
                self._sync(game_id, known)  # live events ran ahead during the sync

        fields: Message = {"game": game_id}
        if known.seq > 0:
            fields["since"] = known.seq
        self._internal("sync", done, **fields)

    async def _flush(self) -> None:
        """Send the client's own requests made while handling a message."""
        while self._outbox and self.connected:
            await self._send_request(self._outbox.pop(0))

    def _log_error(self, answer: Message) -> None:
        if answer.get("type") == "error" and answer.get("code") != "already_queued":
            log.warning("%s: %s", answer.get("code"), answer.get("message"))


def is_final(msg: Message) -> bool:
    """Whether an event ends its game: the `over` event, or a `state` of a finished game."""
    kind = (msg.get("event") or {}).get("kind")
    return kind == "over" or (kind == "state" and bool((msg.get("view") or {}).get("over")))


def connect(
    url: str | Sequence[str],
    *,
    name: str | None = None,
    token: str | None = None,
    binary: bool = True,
) -> Client:
    """A client for `async with`: connects and says hello on entry, closes on exit.

    `url` may be a list of instances' URLs: reconnects go round it.
    """
    return Client(url, name=name, token=token, binary=binary)


async def play_bot(
    url: str | Sequence[str],
    bot: Bot | str,
    games: int = 1,
    *,
    name: str | None = None,
    min_players: int = 2,
    max_players: int = 6,
    seed: int | None = None,
) -> list[GameResult]:
    """Connect, play `games` games from the public queue with `bot`, and disconnect."""
    if isinstance(bot, str):
        bot = make_bot(bot, seed)
    name = name or f"{bot.name}-{uuid.uuid4().hex[:4]}"
    async with connect(url, name=name) as client:
        return await client.run_bot(bot, games, min_players=min_players, max_players=max_players)


class _Events:
    """The async iterator behind `Client.events()`."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def __aiter__(self) -> _Events:
        return self

    async def __anext__(self) -> Message:
        inbox = self._client._inbox
        item = await inbox.get()
        if item is _CLOSED or isinstance(item, MooseError):
            inbox.put_nowait(item)  # every later reader ends the same way
            if isinstance(item, MooseError):
                raise item
            raise StopAsyncIteration
        message: Message = item
        return message
