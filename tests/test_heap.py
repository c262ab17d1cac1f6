"""Memory comes back: the C heap is trimmed when much of it is free, and a burst of
clients that stop reading costs a real `moose serve` what its bounds allow, and no more
a second time.

The burst: watchers that never read, each asking again and again for a finished
game's events (`sync` from 0, ~20 KB an answer) until the server drops it with
1013. The server's RSS (/proc/PID/status) is compared at rest, at the burst's
peak and after: memory figures with generous slack, never times.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
import re
import socket
import struct
import time
from typing import Any

import aiohttp
import msgpack
import psutil
import pytest

from moose_server.ops.heap import Heap
from moose_server.settings import Settings

from helpers import RawClient, play_out, table_game

MIB = 1 << 20
WATCHERS = 10  # per burst, from one loopback address of their own
CUT_WITHIN = 60.0  # seconds; a watcher still open then closes itself (and the test fails)
# One socket may hold far more than all of them together: only the instance's bound
# can drop them (before it, each held up to 8 MiB here, beyond ~3 MiB of the kernel's).
ENV = {
    "MOOSE_SEND_BUFFER": str(8 * MIB),
    "MOOSE_SEND_BUFFER_TOTAL": str(MIB),
    "MOOSE_RATE": "10000",
    "MOOSE_BURST": "10000",
    "MOOSE_CLOSE_TIMEOUT": "1",
    "MOOSE_MALLOC_TRIM": str(4 * MIB),
}
# What a burst may take beyond the bound: the answers packed and not yet freed, the
# sessions, Redis replies, on a busy machine.
PEAK_SLACK = 24 * MIB


def rss(pid: int) -> int:
    """The resident set of process `pid`, in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_a_trim_hands_freed_memory_back_and_only_once_enough_is_free() -> None:
    heap = Heap.open(threshold=16 * MIB)
    if heap is None:
        pytest.skip("no glibc >= 2.33 here")
    heap.check()  # whatever earlier tests left
    # Blocks malloc keeps in its heap (over 512 B, under its mmap threshold), each tenth
    # kept alive so that the freed ones between cannot go back from the top of the heap.
    blocks = [bytes([i % 256]) * 16_000 for i in range(4096)]  # written: resident
    kept = blocks[::10]
    del blocks
    returned = heap.check()
    assert returned > 32 * MIB, returned
    assert heap.check() < 4 * MIB  # nothing more to hand back
    assert Heap(heap._libc, threshold=1 << 40).check() == 0  # not that much free
    assert kept


def test_memory_settings_come_from_the_environment_and_are_checked() -> None:
    settings = Settings.from_env({"MOOSE_SEND_BUFFER_TOTAL": "1048576", "MOOSE_MALLOC_TRIM": "0"})
    assert settings.send_buffer_total == MIB and settings.malloc_trim == 0
    assert Heap.open(settings.malloc_trim) is None  # 0: never trim
    for bad in ({"send_buffer_total": 0}, {"send_buffer": 0}, {"malloc_trim": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            Settings(**bad)


# -- a burst of slow watchers against `moose serve` -----------------------------------------


def masked(message: dict[str, Any]) -> bytes:
    """A client's binary frame (masked, as RFC 6455 wants) holding `message`."""
    payload, mask = msgpack.packb(message), os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    n = len(payload)
    head = struct.pack("!BB", 0x82, 0x80 | n) if n < 126 else struct.pack("!BBH", 0x82, 0xFE, n)
    return head + mask + body


async def watcher(port: int, address: str, game: str, code: str) -> None:
    """A socket that watches `game` and asks for all its events again and again, reading
    nothing after the handshake; returns once the server has cut it."""
    loop = asyncio.get_running_loop()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.bind((address, 0))
    sock.setblocking(False)
    try:
        await loop.sock_connect(sock, ("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        await loop.sock_sendall(
            sock,
            (
                f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode(),
        )
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            head += await loop.sock_recv(sock, 1)  # byte by byte: nothing past the head
        assert head.startswith(b"HTTP/1.1 101"), head
        first = [
            {"type": "hello", "id": 1, "protocol": 1, "name": "sloth"},
            {"type": "watch", "id": 2, "game": game, "code": code},
        ]
        await loop.sock_sendall(sock, b"".join(masked(m) for m in first))
        async with asyncio.timeout(CUT_WITHIN):
            for i in itertools.count(3):  # until the server cuts us
                sync = {"type": "sync", "id": i, "game": game, "since": 0}
                await loop.sock_sendall(sock, masked(sync))
                await asyncio.sleep(0.005)
    except (ConnectionError, TimeoutError):
        pass  # cut by the server: what we are here for
    finally:
        sock.close()


async def burst(port: int, pid: int, game: str, code: str) -> int:
    """`WATCHERS` slow watchers at once from 127.0.0.7; the server's RSS at its peak."""
    peak = rss(pid)
    tasks = [asyncio.create_task(watcher(port, "127.0.0.7", game, code)) for _ in range(WATCHERS)]
    while not all(t.done() for t in tasks):
        peak = max(peak, rss(pid))
        await asyncio.sleep(0.02)
    await asyncio.gather(*tasks)
    deadline = time.monotonic() + 15  # the server lets go of them: the next burst is not 429
    while held(pid, "127.0.0.7") and time.monotonic() < deadline:
        peak = max(peak, rss(pid))
        await asyncio.sleep(0.1)
    return peak


def held(pid: int, address: str) -> int:
    """The server's TCP connections from `address`."""
    conns = psutil.Process(pid).net_connections(kind="tcp")
    return sum(1 for c in conns if c.raddr and c.raddr.ip == address)


async def settled(pid: int, below: int) -> int:
    """The server's RSS once it is under `below` (the collector trims every 5 s), or
    after 12 s."""
    deadline = time.monotonic() + 12
    while (now := rss(pid)) >= below and time.monotonic() < deadline:
        await asyncio.sleep(0.25)
    return now


@pytest.mark.slow
async def test_slow_watchers_are_dropped_and_a_second_burst_costs_no_more(moose_serve):
    server = moose_serve(env=ENV)
    assert server.proc is not None
    pid = server.proc.pid
    async with aiohttp.ClientSession() as session:
        host = RawClient(await session.ws_connect(server.url), True)
        await host.hello("host")
        codes: list[str] = []
        game, [seat] = await table_game([host], bots=("greedy",), codes=codes)
        await play_out(host, game, seed=seat)  # a finished game: ~20 KB of events
        await host.close()
    baseline = rss(pid)
    peak1 = await burst(server.port, pid, game, codes[0])
    after1 = await settled(pid, baseline + 8 * MIB)
    peak2 = await burst(server.port, pid, game, codes[0])
    after2 = await settled(pid, baseline + 8 * MIB)
    figures = (baseline, peak1, after1, peak2, after2)
    print(
        "\nRSS (MiB): baseline {:.0f}, burst 1 peak {:.0f} after {:.0f}, burst 2 peak {:.0f} "
        "after {:.0f}".format(*(f / MIB for f in figures))
    )
    log = server.log.read_text()
    slow = re.findall(r"disconnect \S+ \(close code 1013 from the server\)", log)
    assert len(slow) == 2 * WATCHERS, f"{len(slow)} of {2 * WATCHERS} dropped with 1013"
    assert peak1 - baseline < PEAK_SLACK
    assert peak2 < peak1 + PEAK_SLACK / 2  # reused or returned: not taken again on top
