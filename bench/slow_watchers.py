"""Slow watchers against a real `moose serve`: what their burst costs the server's RSS.

    python bench/slow_watchers.py [--watchers 200] [--bursts 2] [--env MOOSE_X=Y ...] [--json]

Starts `moose serve` (its own embedded Redis in a temporary folder) and
`moose bots` playing public-queue games on it. Once the games run, it samples
the server process' RSS (/proc/PID/status VmRSS) as a baseline, then opens
`--watchers` WebSockets from loopback addresses of their own (127.0.0.2 ...,
`--per-address` each), each with a 4 KiB receive buffer. Every watcher says
hello, `watch`es the live games (up to `--games` at once; a game that ends is
replaced by a new one) and asks for `sync` of one of them from seq 0 a few
times a second, and never reads a byte after the handshake: what the server
sends it piles up in the kernel's buffers, then in aiohttp's and the
server's. A burst ends once the server holds none of its sockets (it drops
a client that stopped reading: close 1013, then a TCP reset), or after
`--hold` seconds, when the watchers close their side. It prints the RSS at
baseline, the burst's peak, `--settle` seconds after the burst, and the same
for every further burst (`--bursts`): a second burst that costs as much again
shows memory that was not given back nor reused.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from typing import Any

import aiohttp
import psutil

RCVBUF = 4096  # the watcher's receive buffer: the server's side fills at once
# `moose serve` watched from inside (--trace): on SIGUSR1 it appends to the file what
# glibc's malloc holds (mallinfo2), what the sockets hold queued (our outboxes, asyncio's
# transport buffers) and, with MOOSE_BENCH_TRACEMALLOC=1, the top lines of tracemalloc.
TRACED = """
import ctypes, gc, json, os, runpy, signal, sys, tracemalloc
out = sys.argv.pop(1)
py = os.environ.get("MOOSE_BENCH_TRACEMALLOC") == "1"
if py:
    tracemalloc.start()
class Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Mallinfo2
def dump(*_):
    m = libc.mallinfo2()
    gc.unfreeze()  # gc.get_objects does not list frozen objects
    outbox = transport = sockets = 0
    for o in gc.get_objects():
        kind = type(o).__name__
        if kind == "Connection" and hasattr(o, "_outbox"):
            sockets += 1
            outbox += o._outbox.size
            buf = getattr(o._transport, "_buffer", None)
            transport += len(buf) if buf is not None else 0
    gc.freeze()
    row = {"arena": m.arena, "mmap": m.hblkhd, "in_use": m.uordblks, "free": m.fordblks,
           "sockets": sockets, "outbox": outbox, "transport": transport}
    if py:
        snap = tracemalloc.take_snapshot()
        row["traced"] = tracemalloc.get_traced_memory()[0]
        row["top"] = [[str(s.traceback), s.size, s.count] for s in snap.statistics("lineno")[:15]]
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\\n")
signal.signal(signal.SIGUSR1, dump)
sys.argv[0] = "moose"
runpy.run_module("moose", run_name="__main__", alter_sys=True)
"""


def rss(pid: int) -> int:
    """The resident set of process `pid`, in bytes (VmRSS)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def frame(message: dict[str, Any]) -> bytes:
    """A client's masked text frame holding `message` as JSON."""
    payload, mask = json.dumps(message).encode(), os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    n = len(payload)
    head = struct.pack("!BB", 0x81, 0x80 | n) if n < 126 else struct.pack("!BBH", 0x81, 0xFE, n)
    return head + mask + body


class Watcher:
    """One WebSocket that sends requests and never reads what it is sent."""

    def __init__(self, port: int, address: str, name: str) -> None:
        self.port, self.address, self.name = port, address, name
        self.sock = socket.socket()
        self.watching: list[str] = []
        self.ids = iter(range(1, 10**9))
        self.dead = False

    async def open(self) -> None:
        """Connect, upgrade (the one read it makes) and say hello; again while the server
        still holds the last burst's sockets (429)."""
        for _ in range(60):
            try:
                await self._open()
                return
            except ConnectionRefusedError:
                self.sock.close()
                self.sock = socket.socket()
                await asyncio.sleep(1)
        raise ConnectionError("the server refused us for a minute")

    async def _open(self) -> None:
        loop = asyncio.get_running_loop()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        self.sock.bind((self.address, 0))
        self.sock.setblocking(False)
        await loop.sock_connect(self.sock, ("127.0.0.1", self.port))
        key = base64.b64encode(os.urandom(16)).decode()
        await loop.sock_sendall(
            self.sock,
            (
                f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode(),
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = await loop.sock_recv(self.sock, 1)  # byte by byte: nothing after the head
            if not chunk:
                raise ConnectionError("closed during the handshake")
            head += chunk
        if head.startswith(b"HTTP/1.1 429"):
            raise ConnectionRefusedError("429")
        if not head.startswith(b"HTTP/1.1 101"):
            raise ConnectionError(head.decode(errors="replace").splitlines()[0])
        await self.send({"type": "hello", "id": next(self.ids), "protocol": 1, "name": self.name})

    async def send(self, message: dict[str, Any]) -> None:
        """Send one request; a socket the server cut is marked dead."""
        if self.dead:
            return
        try:
            async with asyncio.timeout(1):
                await asyncio.get_running_loop().sock_sendall(self.sock, frame(message))
        except (OSError, TimeoutError):
            self.dead = True  # reset by the server, or it stopped reading us too

    async def follow(self, live: list[str], games: int) -> None:
        """Watch the newest live games (up to `games`), then ask for one's whole stream."""
        self.watching = [g for g in self.watching if g in live]
        for game in live:
            if len(self.watching) >= games:
                break
            if game not in self.watching:
                self.watching.append(game)
                await self.send({"type": "watch", "id": next(self.ids), "game": game})
        if self.watching:
            game = self.watching[next(self.ids) % len(self.watching)]
            await self.send({"type": "sync", "id": next(self.ids), "game": game, "since": 0})

    def close(self) -> None:
        """Close our side."""
        self.sock.close()


def kernel_queued(port: int, ours: set[int]) -> int:
    """Bytes the kernel holds on the server's sockets to our ports (their send queues)."""
    total = 0
    with open("/proc/net/tcp") as table:
        for row in table.read().splitlines()[1:]:
            fields = row.split()
            local, remote = int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16)
            if local == port and remote in ours:
                total += int(fields[4].split(":")[0], 16)
    return total


def server_ports(pid: int, addresses: set[str]) -> set[tuple[str, int]]:
    """The server's TCP connections from `addresses`."""
    conns = psutil.Process(pid).net_connections(kind="tcp")
    return {(c.raddr.ip, c.raddr.port) for c in conns if c.raddr and c.raddr.ip in addresses}


async def live_games(url: str) -> list[str]:
    """The ids of the public games being played now (a reading client asks)."""
    async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
        await ws.send_json({"type": "hello", "id": 1, "protocol": 1, "name": "lister"})
        await ws.send_json({"type": "games", "id": 2})
        async for raw in ws:
            msg = json.loads(raw.data)
            if msg.get("id") == 2:
                return [g["game"] for g in msg.get("games", [])]
    return []


async def burst(args: argparse.Namespace, port: int, pid: int) -> dict[str, float]:
    """One burst of slow watchers: the server's RSS peak, and when every socket was gone."""
    url = f"ws://127.0.0.1:{port}/ws"
    addresses = [f"127.0.0.{2 + i // args.per_address}" for i in range(args.watchers)]
    watchers = [Watcher(port, a, f"sloth{i}") for i, a in enumerate(addresses)]
    started, peak = time.monotonic(), rss(pid)
    dumped = peak
    await asyncio.gather(*(w.open() for w in watchers))
    opened = time.monotonic() - started
    ours = {w.sock.getsockname()[1] for w in watchers}
    kernel = 0
    live: list[str] = []
    try:
        while time.monotonic() - started < args.hold:
            if not live or int(time.monotonic() - started) % 2 == 0:
                live = await live_games(url)
            await asyncio.gather(*(w.follow(live, args.games) for w in watchers))
            for _ in range(5):
                peak = max(peak, rss(pid))
                await asyncio.sleep(0.05)
            if args.trace and peak > dumped + 64 * 2**20:
                dumped = peak
                os.kill(pid, signal.SIGUSR1)  # what Python holds while the watchers are held
            kernel = max(kernel, kernel_queued(port, ours))
            if not server_ports(pid, set(addresses)):
                break  # the server let go of every one of them
    finally:
        held = len(server_ports(pid, set(addresses)))
        if args.trace:
            os.kill(pid, signal.SIGUSR1)
        for w in watchers:
            w.close()
    for _ in range(300):  # the server lets go of what we closed (else the next burst gets 429)
        if not server_ports(pid, set(addresses)):
            break
        await asyncio.sleep(0.1)
    return {
        "opened_s": opened,
        "peak": peak,
        "seconds": time.monotonic() - started,
        "held_at_end": held,
        "kernel": kernel,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Start the server and the bots, then measure every burst."""
    port = free_port()
    data = tempfile.mkdtemp(prefix="moose-slow-")
    env = {**os.environ, **dict(e.split("=", 1) for e in args.env)}
    serve = ["serve", "--port", str(port), "--data-dir", data]
    cmd = [sys.executable, "-m", "moose", *serve]
    if args.trace:
        cmd = [sys.executable, "-c", TRACED, args.trace, *serve]
    with open(os.path.join(data, "serve.log"), "wb") as out:
        server = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    bots = None
    try:
        for _ in range(300):
            ready = f"http://127.0.0.1:{port}/readyz"
            with contextlib.suppress(OSError), urllib.request.urlopen(ready, timeout=1):
                break
            await asyncio.sleep(0.1)
        bots = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "moose",
                "bots",
                "--url",
                f"ws://127.0.0.1:{port}/ws",
                "--count",
                str(args.bots),
                "--games",
                "1000000",
                "--players",
                "2-4",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        await asyncio.sleep(args.warmup)
        trace = (lambda: server.send_signal(signal.SIGUSR1)) if args.trace else (lambda: None)
        trace()
        result: dict[str, Any] = {
            "env": dict(e.split("=", 1) for e in args.env),
            "watchers": args.watchers,
            "baseline": rss(server.pid),
            "bursts": [],
        }
        for _ in range(args.bursts):
            one = await burst(args, port, server.pid)
            await asyncio.sleep(args.settle)
            one["after"] = rss(server.pid)
            trace()
            result["bursts"].append(one)
        with open(os.path.join(data, "serve.log"), errors="replace") as log:
            result["dropped_slow"] = log.read().count("dropping a slow client")
        return result
    finally:
        for proc in (bots, server):
            if proc is not None:
                proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(20)


def main() -> None:
    """Parse the flags, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--per-address", type=int, default=50, help="watchers per address")
    parser.add_argument("--games", type=int, default=4, help="games each watcher watches")
    parser.add_argument("--bots", type=int, default=16, help="bots playing (moose bots)")
    parser.add_argument("--bursts", type=int, default=2)
    parser.add_argument("--warmup", type=float, default=8.0, help="seconds of play first")
    parser.add_argument("--hold", type=float, default=150.0, help="longest a burst lasts")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds after a burst")
    parser.add_argument("--env", action="append", default=[], help="MOOSE_X=Y for the server")
    parser.add_argument("--trace", help="run the server under tracemalloc, dump to this file")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result))
        return
    mib = 2**20
    print(
        f"watchers {args.watchers}, env {result['env'] or 'defaults'}; "
        f"{result['dropped_slow']} dropped as slow"
    )
    print(f"baseline {result['baseline'] / mib:.0f} MiB")
    for i, one in enumerate(result["bursts"], 1):
        peak, after = one["peak"] / mib, one["after"] / mib
        print(
            f"burst {i}: peak {peak:.0f} MiB, after {after:.0f} MiB ({one['seconds']:.0f} s, "
            f"{one['held_at_end']} sockets held at its end, the kernel's send queues "
            f"up to {one['kernel'] / mib:.0f} MiB)"
        )


if __name__ == "__main__":
    main()
