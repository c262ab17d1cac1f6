"""A socket's outbox: frames written at once while the writer keeps up, in order after
one it made wait, and that wait carried on in a task exactly as `await` would.

The senders here stand in for aiohttp's `send_bytes`: they write (append) at once
and wait only when told to, as aiohttp does when the client's buffer is full.
tests/test_ws.py runs the same over real sockets.
"""

from __future__ import annotations

import asyncio
from typing import Any

from moose_server.net.outbox import Outbox


class Writer:
    """Writes frames to `wire`; while `gate` is set, a frame waits for it after its write."""

    def __init__(self) -> None:
        self.wire: list[Any] = []
        self.gate: asyncio.Future[Any] | None = None
        self.seen: list[Any] = []  # what each wait gave back (a value, or what it raised)

    async def send(self, payload: Any) -> None:
        self.wire.append(payload)
        if self.gate is not None:
            try:
                self.seen.append(await self.gate)
            except BaseException as exc:
                self.seen.append(type(exc))
                raise


async def _turns(n: int = 3) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def test_a_frame_that_needs_no_wait_is_written_at_once_without_a_task() -> None:
    out, w = Outbox(), Writer()
    out.put(w.send, b"a")
    out.put(w.send, b"b")
    assert w.wire == [b"a", b"b"]  # before this coroutine has given the loop a turn
    assert out._task is None and out.size == 0


async def test_frames_put_while_one_waits_follow_it_in_order() -> None:
    out, w = Outbox(), Writer()
    w.gate = asyncio.get_running_loop().create_future()
    out.put(w.send, b"a")  # written, then waits
    out.put(w.send, b"bb")
    out.put(w.send, "ccc")
    assert w.wire == [b"a"] and out.size == 5
    gate, w.gate = w.gate, None
    gate.set_result("drained")
    await _turns()
    assert w.wire == [b"a", b"bb", "ccc"] and w.seen == ["drained"]
    assert out._task is None and out.size == 0
    out.put(w.send, b"d")  # at once again
    assert w.wire[-1] == b"d"


async def test_what_the_wait_raises_reaches_the_frame_and_what_waits_is_dropped() -> None:
    out, w = Outbox(), Writer()
    w.gate = asyncio.get_running_loop().create_future()
    out.put(w.send, b"a")
    out.put(w.send, b"b")
    gate, w.gate = w.gate, None
    gate.set_exception(ConnectionResetError("gone"))  # as aiohttp when the socket is lost
    await _turns()
    assert w.seen == [ConnectionResetError] and w.wire == [b"a"]
    assert out._task is None and out.size == 0


async def test_put_later_is_written_a_loop_turn_later_after_what_waits() -> None:
    out, w = Outbox(), Writer()
    out.put(w.send, b"close", now=False)
    assert w.wire == [] and out.size == 5
    await _turns()
    assert w.wire == [b"close"] and out._task is None


async def test_aclose_cancels_a_waiting_frame_and_drops_the_rest() -> None:
    out, w = Outbox(), Writer()
    w.gate = asyncio.get_running_loop().create_future()
    out.put(w.send, b"a")
    out.put(w.send, b"b")
    await _turns()  # the task waits for the gate now
    await out.aclose()
    assert w.seen == [asyncio.CancelledError] and w.wire == [b"a"]
    assert out._task is None and out.size == 0
