"""One socket's outgoing frames, written in order through aiohttp's public WebSocket API.

`put` writes a frame at once: it runs aiohttp's coroutine (`send_bytes`,
`send_str`, `ping`, `pong`) up to its first wait, as Python 3.12's eager tasks
would, and with compression off aiohttp writes the frame to the transport
before it could wait. So a move's frames are on the wire when they are sent,
not one loop turn later, and no task is made while the client keeps up (were
aiohttp to wait before writing, the frame would only go later, still in order).
aiohttp waits when the client reads too slowly (its transport's buffer is
full); then one task finishes that frame and writes, in order, the frames put
meanwhile, which wait here: `size` bytes of them, for the socket to bound.

`Backlog` bounds them all: what every socket of the instance holds
queued, ours and asyncio's transport buffer, counted as each socket last said.
Once the sum passes its limit, the sockets holding the most are dropped until
it is back under: 200 clients that stop reading no longer cost 200 times a
socket's bound, but the instance's one.
"""

from __future__ import annotations

import asyncio
import types
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Protocol

from moose_server.tasks import cancel_and_wait

__all__ = ["Backlog", "Holder", "Outbox", "Send"]

Send = Callable[[Any], Coroutine[Any, Any, Any]]  # e.g. `ws.send_bytes`: one frame of its payload


class Outbox:
    """A socket's frames: written now, or after those still waiting for a slow client."""

    def __init__(self) -> None:
        self._waiting: deque[tuple[Send, bytes | str]] = deque()
        self.size = 0  # bytes (characters of text) waiting
        self._task: asyncio.Task[None] | None = None  # writing what waits, if anything does

    def put(self, send: Send, payload: bytes | str, *, now: bool = True) -> None:
        """Write `send(payload)` now (not `now`: in a task, a loop turn later), or after
        the frames that wait; never waits itself."""
        if self._task is not None or not now:
            self._waiting.append((send, payload))
            self.size += len(payload)
            if self._task is None:
                self._task = asyncio.ensure_future(self._write(None))
            return
        coro = send(payload)
        try:
            step = coro.send(None)
        except StopIteration:
            return  # written
        except ConnectionError:
            return  # the socket is closing: nothing reaches it any more
        self._task = asyncio.ensure_future(self._write(_resumed(coro, step)))

    async def _write(self, started: Awaitable[Any] | None) -> None:
        """Finish the frame aiohttp made wait, if any, then write the frames that wait."""
        try:
            if started is not None:
                await started
            while self._waiting:
                send, payload = self._waiting.popleft()
                self.size -= len(payload)
                await send(payload)
        except ConnectionError:
            pass  # the socket closed: what waits will not reach it
        finally:
            self._waiting.clear()
            self.size = 0
            self._task = None

    def discard(self) -> None:
        """Drop the frames that wait (not the one aiohttp is writing): a client that is
        being dropped would never read them, and they hold memory until it is cut."""
        self._waiting.clear()
        self.size = 0

    async def aclose(self) -> None:
        """Stop writing; the frames that wait are dropped."""
        if self._task is not None:
            await cancel_and_wait([self._task])


class Holder(Protocol):
    """A socket as the backlog sees it."""

    def queued(self) -> int:
        """Bytes it holds queued now (ours and the transport's)."""

    def drop_slow(self) -> None:
        """Drop it as a client that reads too slowly (close 1013), forgetting what waits."""


class Backlog:
    """The bytes every socket of the instance holds queued, bounded in all (`limit`)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0  # the sum of what each socket last reported
        self._held: dict[Holder, int] = {}  # sockets that hold something, and how much

    def report(self, holder: Holder, queued: int) -> None:
        """`holder` holds `queued` bytes now; past the limit, drop the largest holders."""
        self.total += queued - self._held.pop(holder, 0)
        if queued:
            self._held[holder] = queued
        if self.total > self.limit:
            self._shed()

    def release(self, holder: Holder) -> None:
        """`holder` holds nothing any more (closed, or being dropped)."""
        self.total -= self._held.pop(holder, 0)

    def _shed(self) -> None:
        """Count again (transports drain without telling), then drop the largest holders
        until the total is under the limit."""
        self._held = {h: q for h in self._held if (q := h.queued())}
        self.total = sum(self._held.values())
        for holder in sorted(self._held, key=self._held.__getitem__, reverse=True):
            if self.total <= self.limit:
                break
            self.release(holder)
            holder.drop_slow()


@types.coroutine
def _resumed(coro: Coroutine[Any, Any, Any], step: Any) -> Generator[Any, Any, None]:
    """The rest of `coro`, whose first step yielded `step`: what `await coro` would have
    done from there (the task waits for what it yielded and passes the outcome on)."""
    while True:
        try:
            try:
                sent = yield step
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # what the awaited future raised, or a cancel
                step = coro.throw(exc)
            else:
                step = coro.send(sent)
        except StopIteration:
            return
