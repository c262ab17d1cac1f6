"""A lean pipelined Redis connection for the hot commands of a move.

redis-py's asyncio client spends ~170 us of CPU per EVALSHA under concurrency
(a pooled connection per call, a parser and locks per connection); `Pipe` sends
every command on one connection, in order, and matches the replies to the
callers first in, first out, for about a tenth of that:

- the first command of an event-loop iteration is written at once, so that
  Redis works on it while the iteration goes on; the others of that iteration
  are encoded into a buffer written once when it ends (`loop.call_soon`), so
  concurrent callers share one write (at most two writes a turn; BENCHMARKS.md,
  issue 14: a move's commit waited for the end of a turn that at 10,000-20,000
  players took several ms);
- replies are parsed by `hiredis.Reader`: bytes, ints, lists, None — the same
  raw replies redis-py gives (without ``decode_responses``);
- no task, lock or `asyncio.wait_for` per call: a call is one future.

``await pipe.call("HMGET", key, "v")`` sends one command; ``await
pipe.evalsha(source, keys, args)`` runs a Lua script by its SHA1 and sends the
source with EVAL when the server does not know it (NOSCRIPT, e.g. after a
restart or SCRIPT FLUSH), which also caches it there.

Errors are redis-py's, so ``except RedisError`` keeps working: an error reply
is raised to its caller only (`ResponseError`, or the subclass redis-py would
raise, e.g. `NoScriptError`); a lost connection fails every pending call with
`ConnectionError` and the next call reconnects (connect timeout 10 s; AUTH and
SELECT first when the URL has credentials or a database); a reply later than
`timeout` (10 s, as the server's redis-py `socket_timeout`) fails every pending
call with `TimeoutError` and drops the connection. A periodic check runs while
anything is pending. `aclose()` fails pending calls with `ConnectionError`.

`PipeSubscriber` is the same idea for the hub's subscription, in place of
redis-py's `PubSub` (several layers of coroutines per message, ~3 % of the
server's CPU): ``async with sub: await sub.subscribe(*channels)`` (waits
for the confirmations), then ``async for message in sub.listen()`` yields
``{"type": "message", "pattern": None, "channel": bytes, "data": bytes}`` in
order. Messages are parsed by hiredis in `data_received` and queued in a deque
the listener drains, woken by one future when it waited: no task per message
(past 10,000 messages not taken, reading pauses until the listener caught up).
A lost connection ends `listen()` with `ConnectionError` (after the messages
already received); so does silence: after `keepalive` (10 s, redis-py's
``health_check_interval``) without data it sends PING (RESP2 answers
["pong", ""] in subscribed mode) and drops the connection when nothing comes
back within `timeout` (10 s). A subscriber connects on its first subscribe and
is done once lost: `PipePubSub.pubsub()` gives the hub a new one per
(re)subscription, and its `aclose()` closes those still open.

URLs: ``redis://[[user]:password@]host[:port][/db]`` and
``unix://path[?db=N&password=...]``, read by redis-py's own `parse_url`.
TLS (``rediss://``) and Redis Cluster are not supported (`Pipe.supports` says
so): the cluster path stays redis-py's, which routes each command to the node
of its slot; a pipe per cluster node is future work. The server uses a pipe
for its frequent calls (store.py: a move's game read and commit script, event
reads, the players' game sets and messages; matchmaking.py: its scripts), with
redis-py as the fallback and for everything else, and a `PipePubSub` for the
hub on the same single nodes (connections.py).
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import hiredis
from redis.connection import parse_url
from redis.exceptions import (
    AuthenticationError,
    BusyLoadingError,
    ConnectionError,
    DataError,
    ExecAbortError,
    InvalidResponse,
    NoPermissionError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisError,
    ResponseError,
    TimeoutError,
)

__all__ = ["Pipe", "PipePubSub", "PipeSubscriber"]

CONNECT_TIMEOUT = 10.0
REPLY_TIMEOUT = 10.0
SCHEMES = ("redis", "unix")


_C = TypeVar("_C", bound="_Connection")


# The error replies a pipe can meet, as the classes redis-py raises for them, so
# that callers' `except` clauses work alike on both clients (LOADING is a
# ConnectionError there, which the store's fallback retries). Written out here
# rather than read from redis-py's private parser module.
_ERROR_PREFIXES: dict[str, type[RedisError]] = {
    "NOSCRIPT": NoScriptError,
    "LOADING": BusyLoadingError,
    "READONLY": ReadOnlyError,
    "NOAUTH": AuthenticationError,
    "WRONGPASS": AuthenticationError,
    "NOPERM": NoPermissionError,
    "OOM": OutOfMemoryError,
    "EXECABORT": ExecAbortError,
}
_ERR_MESSAGES: dict[str, type[RedisError]] = {
    "max number of clients reached": ConnectionError,
    "invalid password": AuthenticationError,
}


def _reply_error(message: str) -> RedisError:
    """The redis-py exception for an error reply ("NOSCRIPT ..." -> NoScriptError)."""
    code, _, rest = message.partition(" ")
    if code in _ERROR_PREFIXES:
        return _ERROR_PREFIXES[code](rest)
    if code == "ERR":
        return _ERR_MESSAGES.get(rest, ResponseError)(rest)
    return ResponseError(message)


class _Connection(asyncio.Protocol):
    """One socket: the write buffer, the reader and the callers waiting, in order."""

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        self.loop = loop
        self.timeout = timeout
        self.transport: asyncio.Transport | None = None
        self.reader = hiredis.Reader(protocolError=InvalidResponse, replyError=_reply_error)
        # (future, time sent) of every call without its reply yet, oldest first.
        self.waiting: deque[tuple[asyncio.Future[Any], float]] = deque()
        self.out: list[bytes] = []
        self.flushing = False
        self.timer: asyncio.TimerHandle | None = None
        self.lost = False

    # -- asyncio.Protocol ------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        waiting = self.waiting
        while True:
            try:
                reply = self.reader.gets()
            except InvalidResponse as exc:
                self.fail(ConnectionError(f"Redis protocol error: {exc}"))
                return
            if reply is False:
                return
            if not waiting:
                self.fail(ConnectionError("Redis sent a reply nobody asked for"))
                return
            future = waiting.popleft()[0]
            if future.done():  # its caller was cancelled: the reply is dropped
                continue
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        reason = f"Redis connection lost: {exc}" if exc else "Redis closed the connection"
        self.fail(ConnectionError(reason))

    # -- calls -----------------------------------------------------------------------

    def send(self, args: tuple[Any, ...]) -> asyncio.Future[Any]:
        """Queue one command; its future gets the reply."""
        if self.lost:
            raise ConnectionError("Redis connection lost")
        out = self.out
        start = len(out)
        out.append(b"*%d\r\n" % len(args))
        try:
            for arg in args:
                if type(arg) is not bytes:
                    arg = _encode(arg)
                out.append(b"$%d\r\n" % len(arg))
                out.append(arg)
                out.append(b"\r\n")
        except DataError:
            del out[start:]  # nothing of a command that cannot be sent
            raise
        loop = self.loop
        if not self.flushing:
            # A loop turn's first command goes out at once: Redis, on a core of its
            # own, works on it while the turn goes on, and the reply is there for
            # the next. The turn's later commands share one write when it ends.
            self.flushing = True
            if self.transport is not None:
                self.transport.write(b"".join(out))
                out.clear()
            loop.call_soon(self._flush)
        if self.timer is None:
            self.timer = loop.call_later(self._every(), self._check)
        future = loop.create_future()
        self.waiting.append((future, loop.time()))
        return future

    def _flush(self) -> None:
        self.flushing = False
        if not self.out:
            return
        if self.lost or self.transport is None:
            self.out.clear()
            return
        self.transport.write(b"".join(self.out))
        self.out.clear()

    def _every(self) -> float:
        return min(1.0, max(self.timeout / 4, 0.01))

    def _check(self) -> None:
        """The reply timeout: runs every `_every()` s while a call is pending."""
        self.timer = None
        if self.lost or not self.waiting:
            return
        if self.loop.time() - self.waiting[0][1] > self.timeout:
            self.fail(TimeoutError(f"no reply from Redis within {self.timeout:g} s"))
            return
        self.timer = self.loop.call_later(self._every(), self._check)

    def fail(self, error: RedisError) -> None:
        """Drop the connection: every pending call gets `error`."""
        self.lost = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.out.clear()
        if self.transport is not None:
            self.transport.abort()  # no more data_received; connection_lost comes later
        waiting, self.waiting = self.waiting, deque()
        for future, _ in waiting:
            if not future.done():
                future.set_exception(error)


def _encode(arg: Any) -> bytes:
    if isinstance(arg, str):
        return arg.encode()
    if isinstance(arg, (bytes, bytearray, memoryview)):
        return bytes(arg)
    if isinstance(arg, (int, float)) and not isinstance(arg, bool):
        return repr(arg).encode()
    raise DataError(f"Invalid input of type {type(arg).__name__}: give bytes, str, int or float")


def _check_url(url: str) -> None:
    """ValueError unless a pipe can talk to `url` (`Pipe.supports`)."""
    if not Pipe.supports(url):
        raise ValueError(f"Pipe speaks redis:// and unix:// only, not {url.split(':')[0]}://")


class Pipe:
    """One pipelined connection to a Redis node (see the module docstring)."""

    def __init__(
        self, url: str, *, timeout: float = REPLY_TIMEOUT, connect_timeout: float = CONNECT_TIMEOUT
    ) -> None:
        _check_url(url)
        self.url = url
        self.options = parse_url(url)  # type: ignore[no-untyped-call]
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._conn: _Connection | None = None
        self._connecting: asyncio.Task[_Connection] | None = None
        self._shas: dict[str, bytes] = {}
        self._closed = False

    @staticmethod
    def supports(url: str) -> bool:
        """Whether a Pipe can talk to `url`: plain TCP or a unix socket (no TLS, no cluster)."""
        return urlsplit(url).scheme in SCHEMES

    async def call(self, *args: Any) -> Any:
        """Send one command (bytes, str, int or float arguments); its reply."""
        conn = self._conn
        if conn is None or conn.lost:
            conn = await self._connect()
        return await conn.send(args)

    async def call_many(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Send several commands at once (one write); their replies, in order.

        The first error reply raises, as `call` would; the other commands still run.
        """
        conn = self._conn
        if conn is None or conn.lost:
            conn = await self._connect()
        return await asyncio.gather(*[conn.send(args) for args in commands])

    async def evalsha(self, script: str, keys: list[Any], args: list[Any]) -> Any:
        """Run a Lua script by SHA1; on NOSCRIPT send its source with EVAL instead."""
        sha = self._shas.get(script)
        if sha is None:
            sha = self._shas[script] = hashlib.sha1(script.encode()).hexdigest().encode()
        try:
            return await self.call(b"EVALSHA", sha, len(keys), *keys, *args)
        except NoScriptError:
            return await self.call(b"EVAL", script, len(keys), *keys, *args)

    async def aclose(self) -> None:
        """Close the connection; pending calls fail with ConnectionError, later ones too."""
        self._closed = True
        if self._connecting is not None:
            self._connecting.cancel()
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.fail(ConnectionError("the Redis pipe is closed"))

    # -- connecting --------------------------------------------------------------------

    async def _connect(self) -> _Connection:
        """The live connection: one connect at a time, shared by every caller."""
        if self._closed:
            raise ConnectionError("the Redis pipe is closed")
        task = self._connecting
        if task is None:
            task = self._connecting = asyncio.get_running_loop().create_task(self._open())
            task.add_done_callback(self._connected)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and self._closed and not (current and current.cancelling()):
                raise ConnectionError("the Redis pipe is closed") from None
            raise  # our caller is cancelled

    def _connected(self, task: asyncio.Task[_Connection]) -> None:
        self._connecting = None
        if task.cancelled() or task.exception() is not None:
            return  # the exception is retrieved: the callers that waited got it
        if self._closed:
            task.result().fail(ConnectionError("the Redis pipe is closed"))
        else:
            self._conn = task.result()

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            conn = await _dial(
                self.options, lambda: _Connection(loop, self.timeout), self.connect_timeout
            )
        except BaseException as exc:
            error = _connect_error(self.options, exc, self._closed)
            if error is exc:
                raise
            raise error from exc
        if self._closed:  # closed while the hello was under way
            conn.fail(ConnectionError("the Redis pipe is closed"))
            raise ConnectionError("the Redis pipe is closed")
        return conn


# -- pub/sub -----------------------------------------------------------------------

PING = b"*1\r\n$4\r\nPING\r\n"
KEEPALIVE = 10.0  # redis-py's health_check_interval of the hub's old client
CONFIRMS = (b"subscribe", b"unsubscribe")
BACKLOG = 10_000  # messages queued and not taken: stop reading the socket until they are


class _Subscription(_Connection):
    """A subscribed socket: messages queued for `PipeSubscriber.listen`, a PING when quiet.

    The hello (AUTH, SELECT) goes through `send` as on a pipe; after it the only
    commands are SUBSCRIBE and the keepalive PING, written straight away.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        super().__init__(loop, timeout)
        self.messages: deque[dict[str, Any]] = deque()
        self.waiter: asyncio.Future[None] | None = None  # the listener, when it waits
        self.error: RedisError | None = None
        # One [confirmations still due, future] per SUBSCRIBE sent, oldest first.
        self.confirming: deque[list[Any]] = deque()
        self.heard = False  # data since the last keepalive tick
        self.quiet_since = 0.0
        self.ping_at: float | None = None
        self.interval = KEEPALIVE
        self.step = 1.0
        self.ticker: asyncio.TimerHandle | None = None
        self.paused = False

    def data_received(self, data: bytes) -> None:
        self.heard = True
        reader = self.reader
        reader.feed(data)
        messages = self.messages
        while True:
            try:
                reply = reader.gets()
            except InvalidResponse as exc:
                self.fail(ConnectionError(f"Redis protocol error: {exc}"))
                return
            if reply is False:
                break
            if type(reply) is list and reply:
                kind = reply[0]
                if kind == b"message" and len(reply) == 3:
                    messages.append(
                        {"type": "message", "pattern": None, "channel": reply[1], "data": reply[2]}
                    )
                    continue
                if kind in CONFIRMS:
                    self._confirmed()
                    continue
                if kind == b"pong":  # the keepalive's answer; `heard` says enough
                    continue
            if not self.waiting:  # a reply to a command of the hello, or nothing
                if reply == b"PONG":  # a keepalive before any SUBSCRIBE
                    continue
                self.fail(ConnectionError(f"Redis sent a reply nobody asked for: {reply!r}"))
                return
            future = self.waiting.popleft()[0]
            if not future.done():
                if isinstance(reply, Exception):
                    future.set_exception(reply)
                else:
                    future.set_result(reply)
        if messages:
            waiter = self.waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
            elif len(messages) > BACKLOG and self.transport is not None:
                # A listener this far behind: the rest waits in the kernel and in Redis
                # (whose pubsub output buffer limit drops a subscriber that never reads).
                self.paused = True
                self.transport.pause_reading()

    def resume(self) -> None:
        """Read again: the listener took every message queued."""
        self.paused = False
        if not self.lost and self.transport is not None:
            self.transport.resume_reading()

    def _confirmed(self) -> None:
        if not self.confirming:
            return  # an UNSUBSCRIBE nobody waits for
        head = self.confirming[0]
        head[0] -= 1
        if head[0] <= 0:
            self.confirming.popleft()
            if not head[1].done():
                head[1].set_result(None)

    def subscribe(self, channels: tuple[Any, ...]) -> asyncio.Future[None]:
        """Send SUBSCRIBE; the future is done once every channel is confirmed."""
        if self.lost or self.transport is None:
            raise ConnectionError(f"Redis connection lost: {self.error or 'not connected'}")
        future: asyncio.Future[None] = self.loop.create_future()
        self.confirming.append([len(channels), future])
        self.transport.write(_pack((b"SUBSCRIBE", *channels)))
        return future

    def start_keepalive(self, interval: float) -> None:
        """PING after `interval` s without data; no answer within `timeout` s drops the socket."""
        self.interval = interval
        self.step = max(0.005, min(interval, self.timeout) / 4)
        self.quiet_since = self.loop.time()
        self.ticker = self.loop.call_later(self.step, self._tick)

    def _tick(self) -> None:
        self.ticker = None
        if self.lost or self.transport is None:
            return
        now = self.loop.time()
        if self.heard or self.paused:  # paused: the listener is behind, not the server
            self.heard = False
            self.quiet_since = now
            self.ping_at = None
        elif self.ping_at is not None:
            if now - self.ping_at > self.timeout:
                self.fail(ConnectionError(f"no answer to PING from Redis in {self.timeout:g} s"))
                return
        elif now - self.quiet_since >= self.interval:
            self.ping_at = now
            self.transport.write(PING)
        self.ticker = self.loop.call_later(self.step, self._tick)

    def fail(self, error: RedisError) -> None:
        if self.error is None:
            self.error = error
        if self.ticker is not None:
            self.ticker.cancel()
            self.ticker = None
        super().fail(error)
        confirming, self.confirming = self.confirming, deque()
        for _, future in confirming:
            if not future.done():
                future.set_exception(ConnectionError(str(self.error)))
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)  # the listener raises `error` once the queue is empty


def _pack(args: tuple[Any, ...]) -> bytes:
    """One command in RESP."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        if type(arg) is not bytes:
            arg = _encode(arg)
        out += (b"$%d\r\n" % len(arg), arg, b"\r\n")
    return b"".join(out)


class PipeSubscriber:
    """One pub/sub connection: what the hub uses of redis-py's `PubSub`, leaner.

    ``async with sub: await sub.subscribe(*channels)``, then ``async for
    message in sub.listen()`` yields ``{"type": "message", "pattern": None,
    "channel": bytes, "data": bytes}`` in the order Redis sent them
    (confirmations are not yielded). A lost connection, or no answer to the
    keepalive PING within `timeout`, ends `listen()` with `ConnectionError`
    once the messages already received are taken; the subscriber is then done
    (take a new one to subscribe again). Leaving the context closes it.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = REPLY_TIMEOUT,
        connect_timeout: float = CONNECT_TIMEOUT,
        keepalive: float = KEEPALIVE,
        on_close: Callable[[PipeSubscriber], None] | None = None,
    ) -> None:
        _check_url(url)
        self.options = parse_url(url)  # type: ignore[no-untyped-call]
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.keepalive = keepalive
        self._on_close = on_close
        self._conn: _Subscription | None = None
        self._closed = False

    async def __aenter__(self) -> PipeSubscriber:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def subscribed(self) -> bool:
        """Whether the connection is up (it subscribed at least once and is not lost)."""
        return self._conn is not None and not self._conn.lost

    async def subscribe(self, *channels: bytes | str) -> None:
        """Subscribe (connecting first, on the first call) and wait for the confirmations."""
        if not channels:
            raise ValueError("subscribe to at least one channel")
        conn = self._conn or await self._open()
        future = conn.subscribe(channels)
        try:
            async with asyncio.timeout(self.timeout):
                await future
        except builtins.TimeoutError:
            conn.fail(ConnectionError(f"no SUBSCRIBE confirmation in {self.timeout:g} s"))
            raise ConnectionError(str(conn.error)) from None

    def listen(self) -> PipeSubscriber:
        """The messages, as an async iterator (this object)."""
        return self

    def __aiter__(self) -> PipeSubscriber:
        return self

    async def __anext__(self) -> dict[str, Any]:
        conn = self._conn
        if conn is None:
            raise ConnectionError("the subscriber is closed" if self._closed else "not subscribed")
        messages = conn.messages
        while not messages:
            if conn.error is not None:
                raise ConnectionError(str(conn.error))
            if conn.paused:
                conn.resume()
            waiter = conn.waiter = conn.loop.create_future()
            try:
                await waiter
            finally:
                conn.waiter = None
        return messages.popleft()

    async def aclose(self) -> None:
        """Close the connection; a waiting `listen()` raises ConnectionError."""
        if not self._closed:
            self._closed = True
            if self._on_close is not None:
                self._on_close(self)
        conn = self._conn
        if conn is not None and not conn.lost:
            conn.fail(ConnectionError("the subscriber is closed"))

    async def _open(self) -> _Subscription:
        if self._closed:
            raise ConnectionError("the subscriber is closed")
        loop = asyncio.get_running_loop()
        try:
            conn = await _dial(
                self.options, lambda: _Subscription(loop, self.timeout), self.connect_timeout
            )
        except BaseException as exc:
            error = _connect_error(self.options, exc, False)
            if error is exc:
                raise
            raise error from exc
        if self._closed:  # closed while connecting
            conn.fail(ConnectionError("the subscriber is closed"))
            raise ConnectionError("the subscriber is closed")
        conn.start_keepalive(self.keepalive)
        self._conn = conn
        return conn


class PipePubSub:
    """A source of `PipeSubscriber`s for the hub: a new connection per `pubsub()`.

    The same URLs as `Pipe`; `aclose()` closes every subscriber still open.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = REPLY_TIMEOUT,
        connect_timeout: float = CONNECT_TIMEOUT,
        keepalive: float = KEEPALIVE,
    ) -> None:
        _check_url(url)
        self.url = url
        self.kwargs = {"timeout": timeout, "connect_timeout": connect_timeout,
                       "keepalive": keepalive}  # fmt: skip
        self.open: set[PipeSubscriber] = set()

    def pubsub(self) -> PipeSubscriber:
        """A subscriber on a connection of its own (connected by its first subscribe)."""
        sub = PipeSubscriber(self.url, on_close=self.open.discard, **self.kwargs)
        self.open.add(sub)
        return sub

    async def aclose(self) -> None:
        """Close every subscriber still open."""
        for sub in list(self.open):
            await sub.aclose()


async def _dial(options: dict[str, Any], factory: Callable[[], _C], connect_timeout: float) -> _C:
    """A connection to the node of `options` (parse_url's), AUTH and SELECT done."""
    loop = asyncio.get_running_loop()
    conn: _C | None = None
    try:
        async with asyncio.timeout(connect_timeout):
            if "path" in options:
                _, conn = await loop.create_unix_connection(factory, options["path"])
            else:
                _, conn = await loop.create_connection(
                    factory, options.get("host", "localhost"), options.get("port", 6379)
                )
            if options.get("password"):
                user = [options["username"]] if options.get("username") else []
                await conn.send((b"AUTH", *user, options["password"]))
            if options.get("db"):
                await conn.send((b"SELECT", options["db"]))
    except BaseException:
        if conn is not None:
            conn.fail(ConnectionError("connect failed"))
        raise
    return conn


def _connect_error(options: dict[str, Any], exc: BaseException, closed: bool) -> BaseException:
    """What a failed connect raises: redis-py's errors, as its own client would."""
    where = options.get("path") or f"{options.get('host')}:{options.get('port')}"
    if isinstance(exc, asyncio.CancelledError):
        return ConnectionError("the Redis pipe is closed") if closed else exc
    if isinstance(exc, RedisError):
        return exc
    if isinstance(exc, builtins.TimeoutError):
        return TimeoutError(f"connecting to Redis at {where} timed out")
    if isinstance(exc, OSError):
        return ConnectionError(f"cannot connect to Redis at {where}: {exc}")
    return exc
