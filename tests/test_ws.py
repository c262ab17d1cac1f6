"""The socket's send side: a client that stops reading is dropped, not waited for."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from moose_server.settings import Settings
from moose_server.ws import CLOSE_SLOW, Connection


class StuckSocket:
    """A WebSocket whose peer never reads: every send waits forever."""

    def __init__(self) -> None:
        self.sent = 0
        self.closed_with: int | None = None
        self.closes = 0
        self.forever = asyncio.Event()

    async def send_bytes(self, data: bytes) -> None:
        self.sent += 1
        await self.forever.wait()

    async def close(self, code: int = 1000, message: bytes = b"") -> None:
        self.closed_with = code
        self.closes += 1


async def test_a_client_that_stops_reading_is_dropped_with_1013():
    ws = StuckSocket()
    services: Any = SimpleNamespace(settings=Settings(send_queue=3))
    conn = Connection(ws, services)  # type: ignore[arg-type]
    conn._tasks.append(asyncio.create_task(conn._write_loop()))
    for i in range(10):
        conn.send({"type": "pong", "id": i, "server_time": 0})
        await asyncio.sleep(0)
    async with asyncio.timeout(10):
        while ws.closed_with is None:
            await asyncio.sleep(0.01)
    assert ws.closed_with == CLOSE_SLOW and ws.sent == 1
    queued = conn._queue.qsize()
    conn.send({"type": "pong", "id": 99, "server_time": 0})  # ignored once closing
    await asyncio.sleep(0.05)
    assert conn._queue.qsize() == queued and ws.closes == 1 and ws.sent == 1
    for task in conn._tasks:
        task.cancel()
    await asyncio.gather(*conn._tasks, return_exceptions=True)
