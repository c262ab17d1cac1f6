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
"""

from __future__ import annotations

import asyncio
import types
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any

from moose_server.tasks import cancel_and_wait

__all__ = ["Outbox", "Send"]

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

    async def aclose(self) -> None:
        """Stop writing; the frames that wait are dropped."""
        if self._task is not None:
            await cancel_and_wait([self._task])


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
