"""The socket's send side, over a real socket: frames arrive whole and in order, and a
client that stops reading is dropped with 1013 instead of being waited for.

`Connection` sends every frame through aiohttp's writer, as soon as it is sent
(`outbox.py`): never compressed, in order with aiohttp's own pings and before
its close frame, and on the wire before the rest of the loop turn runs.
"""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import struct
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import msgpack
import pytest
from aiohttp import web

from moose_server.app import HUB
from moose_server.net.outbox import Backlog
from moose_server.net.ws import CLOSE_SLOW, Connection
from moose_server.settings import Settings

from helpers import RawClient, Serve, table_game

SMALL = 4096  # socket buffers of both ends, so that a client that stops reading shows soon


class Server:
    """A bare aiohttp app whose one WebSocket is served by a real `Connection`."""

    def __init__(self, send_buffer: int, heartbeat: float | None = None) -> None:
        self.settings = Settings(send_buffer=send_buffer)
        self.heartbeat = heartbeat
        self.conn: Connection | None = None
        self.ready = asyncio.Event()
        self.done = asyncio.Event()

    async def handler(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(compress=False, heartbeat=self.heartbeat)
        await ws.prepare(request)
        self.ws = ws
        sock = request.transport.get_extra_info("socket")  # type: ignore[union-attr]
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SMALL)
        doors: Any = SimpleNamespace(
            settings=self.settings, backlog=Backlog(self.settings.send_buffer_total)
        )
        self.conn = Connection(ws, doors, request.transport)
        self.ready.set()
        # A receive loop, as the real server keeps: aiohttp takes the pongs there.
        reading = asyncio.create_task(self._receive(ws))
        await self.done.wait()
        reading.cancel()
        return ws

    @staticmethod
    async def _receive(ws: web.WebSocketResponse) -> None:
        async for _ in ws:
            pass


async def _start(server: Server) -> tuple[web.AppRunner, int]:
    app = web.Application()
    app.router.add_get("/ws", server.handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, port


async def _raw_client(
    port: int, extra: str = ""
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket handshake by hand on a socket with a small receive buffer."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 22)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        f"Sec-WebSocket-Version: 13\r\n{extra}\r\n".encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101"), head
    # Our frames are never compressed: no extension may be agreed on.
    assert b"sec-websocket-extensions" not in head.lower(), head
    return reader, writer


async def _frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One server frame: (opcode, payload)."""
    b0, b1 = await reader.readexactly(2)
    assert b0 & 0x80 and not b1 & 0x80, "a whole, unmasked frame"
    assert not b0 & 0x70, "no reserved bit: nothing compressed"
    n = b1 & 0x7F
    if n == 126:
        (n,) = struct.unpack("!H", await reader.readexactly(2))
    elif n == 127:
        (n,) = struct.unpack("!Q", await reader.readexactly(8))
    return b0 & 0x0F, await reader.readexactly(n)


async def test_frames_arrive_whole_and_in_order_binary_and_text():
    server = Server(send_buffer=1 << 20)
    runner, port = await _start(server)
    try:
        reader, writer = await _raw_client(port)
        await server.ready.wait()
        conn = server.conn
        assert conn is not None
        sizes = [1, 125, 126, 65535, 65536, 3000]  # every length encoding, at its edges
        for i, size in enumerate(sizes):
            conn.send({"type": "pong", "id": i, "pad": "x" * size})  # one loop turn
        await asyncio.sleep(0)
        conn.send({"type": "pong", "id": 99})  # the next turn
        conn.send_frame('{"type":"pong","id":100}')  # a text frame, as JSON clients get
        got = [await _frame(reader) for _ in range(len(sizes) + 2)]
        assert [op for op, _ in got] == [2] * (len(sizes) + 1) + [1]
        msgs = [msgpack.unpackb(p) for _, p in got[:-1]]
        assert [m["id"] for m in msgs] == [*range(len(sizes)), 99]
        assert [len(m.get("pad", "")) for m in msgs[:-1]] == sizes
        assert got[-1][1] == b'{"type":"pong","id":100}'
        writer.close()
    finally:
        server.done.set()
        await runner.cleanup()


async def test_a_client_that_stops_reading_is_dropped_with_1013():
    server = Server(send_buffer=64 * 1024)
    runner, port = await _start(server)
    try:
        reader, writer = await _raw_client(port)  # and then it reads nothing
        await server.ready.wait()
        conn = server.conn
        assert conn is not None
        transport = conn._transport
        sent = 0
        for _ in range(2000):  # 2000 x 10 KB: far beyond the buffers and the limit
            conn.send({"type": "pong", "id": sent, "pad": "x" * 10_000})
            sent += 1
            await asyncio.sleep(0)
            if conn._closing:
                break
        assert conn._closing, "never dropped"
        assert conn.close_sent == CLOSE_SLOW  # what the disconnect log line shows
        # Dropped soon after more than the limit waited, not after 20 MB.
        assert sent < 200, sent
        held, waiting = transport.get_write_buffer_size(), conn._outbox.size
        assert waiting <= 4  # what waited in our outbox went with the drop: the close frame
        conn.send({"type": "pong", "id": -1})  # ignored once closing
        await asyncio.sleep(0.05)
        assert conn._outbox.size <= waiting and transport.get_write_buffer_size() <= held
        # The client reads again: the frames aiohttp had taken before the drop, whole and
        # in order, then the close frame with 1013.
        ids = []
        async with asyncio.timeout(10):
            while True:
                op, payload = await _frame(reader)
                if op == 8:
                    break
                ids.append(msgpack.unpackb(payload)["id"])
        assert struct.unpack("!H", payload[:2])[0] == CLOSE_SLOW
        assert ids == list(range(len(ids))) and ids
        writer.close()
    finally:
        server.done.set()
        await runner.cleanup()


async def test_a_message_that_cannot_be_encoded_is_sent_as_internal_and_the_socket_stays():
    server = Server(send_buffer=1 << 20)
    runner, port = await _start(server)
    try:
        reader, writer = await _raw_client(port)
        await server.ready.wait()
        conn = server.conn
        assert conn is not None
        conn.send({"type": "pong", "id": 10**30})  # msgpack holds no such integer
        conn.send({"type": "pong", "id": "\ud800"})  # nor a lone surrogate
        conn.send({"type": "pong", "id": 3})
        got = [msgpack.unpackb(p) for _, p in [await _frame(reader) for _ in range(3)]]
        assert [m.get("code") for m in got[:2]] == ["internal", "internal"]
        assert got[2] == {"type": "pong", "id": 3}
        writer.close()
    finally:
        server.done.set()
        await runner.cleanup()


async def test_aiohttps_own_frames_interleave_whole_with_ours_and_its_close_comes_last():
    # A ping every 0.4 s; aiohttp drops a socket whose pong takes over half that (a
    # 50 ms heartbeat gave 25 ms, which a busy test machine's loop did not always meet).
    server = Server(send_buffer=1 << 20, heartbeat=0.4)
    runner, port = await _start(server)
    try:
        # The client offers compression; the server must not take it.
        offer = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
        reader, writer = await _raw_client(port, offer)
        await server.ready.wait()
        conn = server.conn
        assert conn is not None
        ids: list[int] = []
        pings = 0

        async def read() -> bytes:
            nonlocal pings
            while True:
                op, payload = await _frame(reader)
                if op == 9:  # answered, or aiohttp's heartbeat gives up on us
                    pings += 1
                    mask = os.urandom(4)
                    body = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
                    writer.write(bytes((0x8A, 0x80 | len(payload))) + mask + body)
                elif op == 8:
                    return payload
                else:
                    ids.append(msgpack.unpackb(payload)["id"])

        reading = asyncio.create_task(read())
        for i in range(200):
            conn.send({"type": "pong", "id": i, "pad": "x" * 500})
            if i % 20 == 0:
                await asyncio.sleep(0.08)  # aiohttp's pings go out meanwhile
        conn.close(1000, "bye")
        async with asyncio.timeout(10):
            closing = await reading
        assert ids == list(range(200)), "every frame of ours before the close frame"
        assert pings > 0, "aiohttp's pings reached the same stream, whole"
        assert struct.unpack("!H", closing[:2])[0] == 1000
        writer.close()
    finally:
        server.done.set()
        await runner.cleanup()


def _unread(client: RawClient) -> list[dict[str, Any]]:
    """The messages the server has written to the client's socket and it has not read."""
    fd = client.ws.get_extra_info("socket").fileno()
    with socket.socket(fileno=os.dup(fd)) as sock:
        try:
            data = sock.recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return []
    msgs = []
    while data:  # unmasked server frames, whole on loopback at this size
        n, data = data[1] & 0x7F, data[2:]
        if n == 126:
            (n,), data = struct.unpack("!H", data[:2]), data[2:]
        msgs.append(msgpack.unpackb(data[:n]))
        data = data[n:]
    return msgs


async def test_a_moves_frames_are_written_when_ready_not_when_the_loop_turn_ends(
    serve: Serve, ws_client: Callable[..., Awaitable[RawClient]], monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = await serve()
    hub = instance.runner.app[HUB]
    a, b = await ws_client(instance.url, "ann"), await ws_client(instance.url, "bob")
    game, _ = await table_game([a, b])
    first = [await c.expect(type="event", game=game) for c in (a, b)]
    mover, other = (a, b) if first[0]["legal"] else (b, a)
    start = first[0] if mover is a else first[1]
    seen: dict[str, list[dict[str, Any]]] = {}

    def look() -> None:
        seen["mover"], seen["other"] = _unread(mover), _unread(other)

    deliver = hub.committed

    def committed(game_id: str, entries: list[Any]) -> None:
        # Queued before the commit's frames are sent: it runs before a write at the
        # end of the loop turn would, and before the clients' sockets are read.
        asyncio.get_running_loop().call_soon(look)
        deliver(game_id, entries)

    monkeypatch.setattr(hub, "committed", committed)  # Games tells the hub: through this
    seq = start["seq"]
    await mover.send({"type": "move", "id": 7, "game": game, "seq": seq, "move": start["legal"][0]})
    assert (await mover.expect(id=7))["type"] == "moved"
    await other.expect(type="event", game=game, seq=seq + 1)
    # The other seat's event went out when the hub sent it, the mover's event and
    # `moved` when they were sent (not when the loop turn ended).
    assert [(m["type"], m.get("seq")) for m in seen["other"]][:1] == [("event", seq + 1)]
    assert [m["type"] for m in seen["mover"]][:2] == ["event", "moved"]
