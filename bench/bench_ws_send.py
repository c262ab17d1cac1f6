"""Server CPU per WebSocket frame sent through ws.py's `Connection` (aiohttp's writer).

    python bench/bench_ws_send.py [--sockets 100] [--frames 1,2,5] [--rate 20000]
        [--rounds 5] [--duration 3] [--out FILE.json]

An aiohttp server in this process accepts `--sockets` WebSockets from a reader
process (aiohttp clients that read and drop every frame) and wraps each in the
server's real `moose_server.net.ws.Connection`, whose `send_frame` hands each
frame to aiohttp's `send_bytes` at once (net/outbox.py). Each loop turn sends N
frames of a 500-byte payload to every socket (N from `--frames`), paced to
`--rate` frames/s in all; the figure is this process's CPU time per frame over a
`--duration` s window (its reads, the loop and aiohttp's server included).
ws.py once wrote a turn's frames to the transport itself, one write per
socket and turn; this script compared that with
`send_bytes` awaited in a task (20.7 / 11.4 / 5.8 against 34.2 / 27.9 / 18.2 us
a frame at 1 / 2 / 5 frames a turn), the whole server 1.14-1.23x
(round4-ab-ws.json, round4-ab-all.json): under 1.5x, so the hand-written writer went.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "client"), str(ROOT / "server")]

import aiohttp  # noqa: E402
from aiohttp import web  # noqa: E402

from moose_server.net.outbox import Backlog  # noqa: E402
from moose_server.net.ws import Connection  # noqa: E402
from moose_server.settings import Settings  # noqa: E402
from moose_server.storage.embedded import free_port  # noqa: E402

PAYLOAD = bytes(range(250)) * 2  # 500 bytes: about an event frame of a 4-player game


async def reader(url: str, sockets: int) -> None:
    """The reader process: open the sockets, read and drop until the server closes them."""
    async with aiohttp.ClientSession() as session:

        async def one() -> None:
            async with session.ws_connect(url, max_msg_size=0) as ws:
                async for _ in ws:
                    pass

        await asyncio.gather(*(one() for _ in range(sockets)))


class Bench:
    """The server side: accepted sockets, each wrapped in a `Connection`."""

    def __init__(self) -> None:
        self.sockets: list[tuple[web.WebSocketResponse, Any]] = []
        self.ready = asyncio.Event()
        self.done = asyncio.Event()
        self.wanted = 0
        settings = Settings()
        self.doors: Any = SimpleNamespace(
            settings=settings, backlog=Backlog(settings.send_buffer_total)
        )

    async def handler(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(compress=False)
        await ws.prepare(request)
        self.sockets.append((ws, request.transport))
        if len(self.sockets) == self.wanted:
            self.ready.set()
        await self.done.wait()
        await ws.close()
        return ws

    async def window(self, frames: int, rate: float, duration: float) -> dict[str, Any]:
        """Send `frames` per socket per turn at `rate` frames/s in all; CPU per frame."""
        conns = [Connection(ws, self.doors, transport) for ws, transport in self.sockets]
        per_turn = frames * len(conns)
        loop = asyncio.get_running_loop()
        sent, cpu0, t0 = 0, time.process_time(), loop.time()
        while loop.time() < t0 + duration:
            for conn in conns:
                for _ in range(frames):
                    conn.send_frame(PAYLOAD)
            sent += per_turn
            await asyncio.sleep(max(0.0, t0 + sent / rate - loop.time()))
        await asyncio.sleep(0.05)  # the last turn's writes
        cpu, wall = time.process_time() - cpu0, loop.time() - t0
        backlog = sum(t.get_write_buffer_size() for _, t in self.sockets)
        return {
            "frames_per_s": round(sent / wall),
            "cpu_us_per_frame": round(cpu / sent * 1e6, 2),
            "cpu_percent": round(100 * cpu / wall, 1),
            "write_backlog_bytes": backlog,
        }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    bench = Bench()
    bench.wanted = args.sockets
    app = web.Application()
    app.router.add_get("/ws", bench.handler)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    proc = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--reader",
            f"ws://127.0.0.1:{port}/ws",
            "--sockets",
            str(args.sockets),
        ]
    )
    runs: list[dict[str, Any]] = []
    try:
        await asyncio.wait_for(bench.ready.wait(), 60)
        for rnd in range(args.rounds):
            for frames in [int(f) for f in args.frames.split(",")]:
                res = await bench.window(frames, args.rate, args.duration)
                res.update(
                    frames_per_turn=frames, round=rnd, loadavg_1m=round(os.getloadavg()[0], 2)
                )
                runs.append(res)
                print(res, flush=True)
    finally:
        bench.done.set()
        await asyncio.sleep(0.5)
        await runner.cleanup()
        proc.wait(30)
    return {
        "bench": "bench/bench_ws_send.py",
        "argv": sys.argv[1:],
        "sockets": args.sockets,
        "rate": args.rate,
        "duration_s": args.duration,
        "payload_bytes": len(PAYLOAD),
        "aiohttp": aiohttp.__version__,
        "medians": medians(runs),
        "runs": runs,
    }


def medians(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per frames-per-turn: the median CPU per frame and its range."""
    out: dict[str, dict[str, Any]] = {}
    for frames in sorted({r["frames_per_turn"] for r in runs}):
        values = [r["cpu_us_per_frame"] for r in runs if r["frames_per_turn"] == frames]
        median = round(statistics.median(values), 2)
        out[f"{frames} frames/turn"] = {
            "cpu_us_per_frame": median,
            "range": [min(values), max(values)],
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", help=argparse.SUPPRESS)
    parser.add_argument("--sockets", type=int, default=100)
    parser.add_argument("--frames", default="1,2,5")
    parser.add_argument("--rate", type=float, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.reader:
        asyncio.run(reader(args.reader, args.sockets))
        return
    report = asyncio.run(run(args))
    print(json.dumps(report["medians"], indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()
