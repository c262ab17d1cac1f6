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

URLs: ``redis://[[user]:password@]host[:port][/db]`` and
``unix://path[?db=N&password=...]``, read by redis-py's own `parse_url`.
TLS (``rediss://``) and Redis Cluster are not supported (`Pipe.supports` says
so): the cluster path stays redis-py's, which routes each command to the node
of its slot; a pipe per cluster node is future work. The server uses a pipe
for its frequent calls (store.py: a move's game read and commit script, event
reads, the players' game sets and messages; matchmaking.py: its scripts), with
redis-py as the fallback and for everything else (connections.py).
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

__all__ = ["Pipe"]

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
