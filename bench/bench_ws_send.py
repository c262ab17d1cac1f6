"""Server CPU per WebSocket frame: ws.py's direct transport write against aiohttp's writer.

    python bench/bench_ws_send.py [--sockets 100] [--frames 1,2,5] [--rate 20000]
        [--rounds 5] [--duration 3] [--out bench/results/FILE.json]

An aiohttp server in this process accepts `--sockets` WebSockets from a reader
process (aiohttp clients that read and drop every frame) and wraps each in the
server's real `moose_server.net.ws.Connection` ("direct": frames of a loop turn
framed by ws.py and written to the transport in one `write`) or in the same
class from the bench-only variant of ws.py (`bench/ws_variant.py`, "aiohttp":
one task per socket and turn awaiting `ws.send_bytes` for each frame). Each loop
turn sends N frames of a 500-byte payload to every socket (N from `--frames`),
paced to `--rate` frames/s in all, so both ways send the same frames at the same
pace; the figure is this process's CPU time per frame over a `--duration` s
window (its reads, the loop and aiohttp's server included: the same in both).
The two ways alternate within each round.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
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
sys.path[:0] = [str(ROOT / "client"), str(ROOT / "server"), str(ROOT / "bench")]

import aiohttp  # noqa: E402
from aiohttp import web  # noqa: E402
from ws_variant import variant  # noqa: E402

from moose_server.net import ws as direct_ws  # noqa: E402
from moose_server.settings import Settings  # noqa: E402
from moose_server.storage.embedded import free_port  # noqa: E402

PAYLOAD = bytes(range(250)) * 2  # 500 bytes: about an event frame of a 4-player game


def aiohttp_ws() -> Any:
    """The variant ws.py, loaded as a module of its own beside the real one."""
    source = variant(Path(direct_ws.__file__).read_text())
    spec = importlib.util.spec_from_loader("ws_via_aiohttp", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, "ws_via_aiohttp.py", "exec"), module.__dict__)
    return module


async def reader(url: str, sockets: int) -> None:
    """The reader process: open the sockets, read and drop until the server closes them."""
    async with aiohttp.ClientSession() as session:

        async def one() -> None:
            async with session.ws_connect(url, max_msg_size=0) as ws:
                async for _ in ws:
                    pass

        await asyncio.gather(*(one() for _ in range(sockets)))


class Bench:
    """The server side: accepted sockets, wrapped in whichever Connection class is asked."""

    def __init__(self) -> None:
        self.sockets: list[tuple[web.WebSocketResponse, Any]] = []
        self.ready = asyncio.Event()
        self.done = asyncio.Event()
        self.wanted = 0
        self.services = SimpleNamespace(settings=Settings())

    async def handler(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(compress=False)
        await ws.prepare(request)
        self.sockets.append((ws, request.transport))
        if len(self.sockets) == self.wanted:
            self.ready.set()
        await self.done.wait()
        await ws.close()
        return ws

    async def window(self, cls: Any, frames: int, rate: float, duration: float) -> dict[str, Any]:
        """Send `frames` per socket per turn at `rate` frames/s in all; CPU per frame."""
        conns = [cls(ws, self.services, transport) for ws, transport in self.sockets]
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
        return {"frames_per_s": round(sent / wall),
                "cpu_us_per_frame": round(cpu / sent * 1e6, 2),
                "cpu_percent": round(100 * cpu / wall, 1),
                "write_backlog_bytes": backlog}  # fmt: skip


async def run(args: argparse.Namespace) -> dict[str, Any]:
    ways = {"direct": direct_ws.Connection, "aiohttp": aiohttp_ws().Connection}
    bench = Bench()
    bench.wanted = args.sockets
    app = web.Application()
    app.router.add_get("/ws", bench.handler)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    proc = subprocess.Popen([sys.executable, __file__, "--reader", f"ws://127.0.0.1:{port}/ws",
                             "--sockets", str(args.sockets)])  # fmt: skip
    runs: list[dict[str, Any]] = []
    try:
        await asyncio.wait_for(bench.ready.wait(), 60)
        for rnd in range(args.rounds):
            for frames in [int(f) for f in args.frames.split(",")]:
                order = list(ways) if rnd % 2 == 0 else list(reversed(ways))
                for way in order:
                    res = await bench.window(ways[way], frames, args.rate, args.duration)
                    res.update(way=way, frames_per_turn=frames, round=rnd,
                               loadavg_1m=round(os.getloadavg()[0], 2))  # fmt: skip
                    runs.append(res)
                    print(res, flush=True)
    finally:
        bench.done.set()
        await asyncio.sleep(0.5)
        await runner.cleanup()
        proc.wait(30)
    return {"bench": "bench/bench_ws_send.py", "argv": sys.argv[1:], "sockets": args.sockets,
            "rate": args.rate, "duration_s": args.duration, "payload_bytes": len(PAYLOAD),
            "aiohttp": aiohttp.__version__, "medians": medians(runs), "runs": runs}  # fmt: skip


def medians(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per frames-per-turn: each way's median CPU per frame, and aiohttp / direct."""
    out: dict[str, dict[str, Any]] = {}
    for frames in sorted({r["frames_per_turn"] for r in runs}):
        row: dict[str, Any] = {}
        for way in ("direct", "aiohttp"):
            values = [r["cpu_us_per_frame"] for r in runs
                      if r["way"] == way and r["frames_per_turn"] == frames]  # fmt: skip
            row[way] = round(statistics.median(values), 2)
            row[f"{way}_range"] = [min(values), max(values)]
        row["aiohttp_over_direct"] = round(row["aiohttp"] / row["direct"], 2)
        out[f"{frames} frames/turn"] = row
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
