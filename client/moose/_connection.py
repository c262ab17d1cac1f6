"""The socket under `moose.client.Client`: hello, requests and answers, pacing, reconnects.

`Connection` opens a WebSocket and says hello (with the session token once it
has one), sends requests under the server's rate limit and matches each answer
to its request by `id`. When the socket drops it reconnects by itself
(exponential backoff with full jitter, `moose.backoff`; the first attempt at
once after close code 1012), trying its other URLs in a random order of its
own, so that the players of a dead instance spread over the others; says
hello again and resends the requests in flight that are safe to send twice.
What the messages mean (games, events) is `_session.Session`'s, through three
hooks: `_welcomed`, `_restore` and `_dispatch`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from moose import backoff, protocol
from moose._errors import ConnectError, ConnectionLost, MooseError, ServerError

__all__ = ["Connection", "Message"]

log = logging.getLogger("moose.client")

Message = dict[str, Any]
RESTART = 1012  # the server instance is going away: reconnect at once
REVOKED = 4001  # the account logged out everywhere: this session's token is refused
BANNED = 4003  # the account or address is banned (the error `banned` came before)
ENDED = 4004  # a moderator ended the session: not reconnected by itself
_HELLO_TIMEOUT = 10.0
# Requests that are safe to send twice; others fail with ConnectionLost when the
# socket drops before their answer (a second create_table would make a second table).
_RESENDABLE = frozenset(
    {
        "move",
        "sync",
        "watch",
        "unwatch",
        "record",
        "ping",
        "queue",
        "leave_queue",
        "leaderboard",
        "profile",
        "games",
    }
)
CLOSED = object()  # put in the inbox when the client is closed


@dataclass
class _Request:
    """A request waiting for its answer."""

    message: Message
    future: asyncio.Future[Message] | None = None  # None: the client's own request
    on_answer: Callable[[Message], None] | None = None
    sent_on: int = -1  # the socket generation it was last sent on
    order: int = 0  # when it was sent: the server answers in this order


def ws_url(url: str) -> str:
    """`url` as a Moose House WebSocket URL: ws:// (wss:// for https) and the path /ws."""
    parts = urlsplit(url if "://" in url else f"ws://{url}")
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, "/ws", "", ""))


def explain(url: str, exc: BaseException) -> str:
    """What is wrong when a WebSocket to `url` cannot be opened, said to a person."""
    if isinstance(exc, aiohttp.WSServerHandshakeError):
        # Something answers HTTP there, but not with a WebSocket: most often the path.
        what = f"HTTP {exc.status}, not a WebSocket"
        return f"{url} answered {what}: the path is /ws, as in {ws_url(url)}"
    if isinstance(exc, aiohttp.NonHttpUrlClientError | aiohttp.InvalidURL):
        return f"{url} is not a WebSocket URL: write it as {ws_url(url)}"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return f"cannot reach {url}: no such host"
    if isinstance(exc, aiohttp.ClientConnectorSSLError | aiohttp.ClientSSLError):
        return f"cannot reach {url}: TLS failed ({exc}); a server without TLS takes ws://"
    return f"cannot reach {url}: is `moose serve` running? ({exc or type(exc).__name__})"


class Connection:
    """A session's socket; the public API is `moose.client.Client`, built on this."""

    def __init__(
        self,
        url: str | Sequence[str],
        *,
        name: str | None = None,
        token: str | None = None,
        binary: bool = True,
        reconnect_timeout: float | None = 120.0,
        password: str | None = None,
        bot: bool = False,
    ) -> None:
        self.urls = [url] if isinstance(url, str) else list(url)
        if not self.urls:
            raise ValueError("no server URL")
        self.url = self.urls[0]  # the one in use; reconnects go round the list
        self.name = name
        self.token = token
        self.password = password  # with `name`: log in to that account (first hello only)
        self.bot = bot  # say hello as a bot
        self.account = False  # whether the server says we are an account
        # The name this guest had until an account took it (the last welcome's
        # `renamed_from`); `name` is the fresh one the server gave.
        self.renamed_from: str | None = None
        self.binary = binary
        self.reconnect_timeout = reconnect_timeout
        self.player: str | None = None
        self.clock_offset = 0.0  # server clock minus ours, in ms
        self.connected = False
        self.reconnects = 0
        # Requests the server refused, by error code (retried ones too): a caller
        # that retries `unavailable` through an outage can still say it happened.
        self.refusals: Counter[str] = Counter()
        # Called with ("send" | "recv", message) for every message; for logs and tests.
        self.trace: Callable[[str, Message], None] | None = None
        self._ids = itertools.count(1)
        self._sends = itertools.count(1)
        # The server allows 20 messages a second in bursts of 40 (by default).
        self.rate, self.burst = 15.0, 30.0
        self._allowance, self._checked = self.burst, time.monotonic()
        self._pending: dict[int, _Request] = {}
        self._outbox: list[_Request] = []
        self._inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._session: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._closed_why = ""  # the reason of the server's last close frame
        self._gen = 0
        self._task: asyncio.Task[None] | None = None
        self._failed: MooseError | None = None
        self._closed = False

    # -- lifetime -------------------------------------------------------------

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
        self._inbox.put_nowait(CLOSED)

    def _abort(self) -> None:
        """Cut the socket without a close frame, as a network failure would (tests)."""
        if self._ws is not None and self._ws._writer.transport is not None:
            self._ws._writer.transport.abort()

    # -- requests -------------------------------------------------------------

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

    async def _flush(self) -> None:
        """Send the client's own requests made while handling a message."""
        while self._outbox and self.connected:
            await self._send_request(self._outbox.pop(0))

    def _answer(self, req: _Request, msg: Message) -> None:
        if msg.get("type") == "error":
            self.refusals[str(msg.get("code"))] += 1
        if req.on_answer is not None:
            req.on_answer(msg)
        if req.future is not None and not req.future.done():
            if msg.get("type") == "error":
                code = msg.get("code", "internal")
                req.future.set_exception(ServerError(code, msg.get("message", "")))
            else:
                req.future.set_result(msg)

    def _refuse_oldest(self, msg: Message) -> None:
        """A `rate_limited` error without id (older servers): our oldest unanswered frame's.

        The server reads a socket's frames in order and answers each before the
        next, so every request sent earlier has had its answer already.
        """
        sent = [r for r in self._pending.values() if r.sent_on == self._gen]
        if sent:
            req = min(sent, key=lambda r: r.order)
            del self._pending[req.message["id"]]
            self._answer(req, {**msg, "id": req.message["id"]})

    # -- the socket ---------------------------------------------------------------

    async def _connect_once(self) -> None:
        """Open a socket and say hello (with the token when we have one)."""
        assert self._session is not None
        try:
            ws = await self._session.ws_connect(
                self.url, heartbeat=15.0, max_msg_size=4 * protocol.MAX_FRAME, autoping=True
            )
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
            raise ConnectError(explain(self.url, exc)) from exc
        hello: Message = {
            "type": "hello",
            "id": next(self._ids),
            "protocol": protocol.PROTOCOL_VERSION,
        }
        if self.token:
            hello["token"] = self.token
        elif self.name:
            hello["name"] = self.name
            if self.password is not None:
                hello["password"] = self.password
            if self.bot:
                hello["bot"] = True
        self._ws = ws
        try:
            await self._send(hello)
            async with asyncio.timeout(_HELLO_TIMEOUT):
                welcome = await self._await_answer(ws, hello["id"])
            if welcome["type"] == "error":
                raise ServerError(welcome.get("code", "internal"), welcome.get("message", ""))
        except BaseException:
            await ws.close()
            self._ws = None
            raise
        self.player = welcome.get("player")
        self.token = welcome.get("token", self.token)
        self.name = welcome.get("name", self.name)
        self.account = bool(welcome.get("account"))
        renamed = welcome.get("renamed_from")
        self.renamed_from = renamed if isinstance(renamed, str) else None
        if self.renamed_from is not None:
            log.warning(
                "an account holds the name %r now: you play as %r", self.renamed_from, self.name
            )
        self.password = None  # the token says who we are from now on
        if "server_time" in welcome:
            self.clock_offset = welcome["server_time"] - time.time() * 1000
        self._gen += 1
        self._welcomed(welcome)

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
        """After hello: the session's own requests afresh, then resend requests in flight."""
        # The client's own requests of the old socket are made afresh by `_restore`.
        self._outbox.clear()
        for msg_id in [i for i, r in self._pending.items() if r.future is None]:
            del self._pending[msg_id]
        self._restore()
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
                if code == REVOKED:
                    raise ConnectionLost("this account logged out everywhere; log in again")
                if code in (BANNED, ENDED):
                    why = "banned" if code == BANNED else "a moderator ended this session"
                    raise ConnectionLost(f"{why}: {self._closed_why or 'no reason given'}")
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
                if raw.type == aiohttp.WSMsgType.CLOSE:
                    self._closed_why = str(raw.extra or "")
                with contextlib.suppress(Exception):
                    await ws.close()
                log.info("socket closed (code %s)", code)
                return code

    async def _reconnect(self, *, at_once: bool) -> None:
        """Connect again with full-jitter backoff (`moose.backoff`), trying the other
        URLs in a random order first, then resume; ConnectionLost on giving up."""
        start = time.monotonic()
        order = backoff.reconnect_order(self.urls, self.url)
        attempt = 0
        while True:
            if attempt or not at_once:
                await asyncio.sleep(backoff.delay(attempt))  # no thundering herd
            self.url = order[attempt % len(order)]
            attempt += 1
            try:
                await self._connect_once()
                break
            except ServerError as exc:
                if exc.code in (
                    "bad_token",
                    "token_expired",
                    "token_revoked",
                    "protocol_version",
                    "banned",
                ):
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

    # -- what the session above does with it ----------------------------------------

    def _welcomed(self, welcome: Message) -> None:
        """A `welcome` has arrived (on every connect)."""

    def _restore(self) -> None:
        """After a hello, before requests in flight are resent: queue the session's own."""

    async def _dispatch(self, msg: Message) -> None:
        """One message from the server."""
        raise NotImplementedError
