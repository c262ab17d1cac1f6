"""A socket's outbox: frames written at once while the writer keeps up, in order after
one it made wait, and that wait carried on in a task exactly as `await` would.

The senders here stand in for aiohttp's `send_bytes`: they write (append) at once
and wait only when told to, as aiohttp does when the client's buffer is full.
tests/test_ws.py runs the same over real sockets.
"""

from __future__ import annotations

import asyncio
from typing import Any

from moose_server.net.outbox import Backlog, Outbox


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


class Held:
    """A socket as the backlog sees it: `now` bytes queued; `dropped` once dropped."""

    def __init__(self, now: int) -> None:
        self.now, self.dropped = now, False

    def queued(self) -> int:
        return self.now

    def drop_slow(self) -> None:
        self.dropped, self.now = True, 0


def test_past_the_instance_bound_the_sockets_holding_most_are_dropped_until_under_it() -> None:
    backlog = Backlog(limit=100)
    small, big, bigger = Held(10), Held(40), Held(45)
    for held in (small, big, bigger):
        backlog.report(held, held.now)
    assert backlog.total == 95 and not any(h.dropped for h in (small, big, bigger))
    late = Held(30)
    backlog.report(late, 30)  # 125 in all: the largest goes, then 80 is under the bound
    assert bigger.dropped and not big.dropped and not small.dropped and not late.dropped
    assert backlog.total == 80


def test_the_backlog_counts_again_before_dropping_anyone() -> None:
    backlog = Backlog(limit=100)
    drained, slow = Held(90), Held(5)
    backlog.report(drained, 90)
    backlog.report(slow, 5)
    drained.now, slow.now = 0, 20  # the first one's transport drained since it reported
    backlog.report(slow, 20)  # 110 as last reported, 20 in truth: nobody is dropped
    assert not drained.dropped and not slow.dropped and backlog.total == 20


def test_a_released_socket_no_longer_counts() -> None:
    backlog = Backlog(limit=100)
    gone = Held(80)
    backlog.report(gone, 80)
    backlog.release(gone)
    backlog.release(gone)  # twice: a closing socket is released when dropped and at cleanup
    other = Held(60)
    backlog.report(other, 60)
    assert backlog.total == 60 and not other.dropped
