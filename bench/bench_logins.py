"""A real user's login latency, idle and during a registration flood.

Starts `moose serve` (the code on PYTHONPATH, its bundled Redis, loopback
trusted as a proxy), registers an owner, times LOGINS logins one after another
while idle, then again while FLOODERS sockets keep registering new accounts:
from one client address (`--from one`) or each from an address of its own
(`--from many`, IPv6 /64s of 2001:db8::/32, a header only). Prints one JSON
object. Before/after: run it with PYTHONPATH at either tree.

    python bench/bench_logins.py --from one
    python bench/bench_logins.py --from many --flooders 16
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from typing import Any

import aiohttp

from moose_server.storage.embedded import free_port

PASSWORD = "correct horse battery"


async def ask(ws: aiohttp.ClientWebSocketResponse, **msg: Any) -> dict[str, Any]:
    await ws.send_str(json.dumps({"id": 1, **msg}))
    while True:
        answer: dict[str, Any] = json.loads((await ws.receive(timeout=120)).data)
        if answer.get("id") == 1:
            return answer


async def timed_logins(session: aiohttp.ClientSession, url: str, count: int) -> list[float]:
    """Milliseconds of `count` logins of the owner, one after another, each on a new socket."""
    times = []
    for _ in range(count):
        async with session.ws_connect(url, headers={"X-Forwarded-For": "192.0.2.1"}) as ws:
            start = time.perf_counter()
            answer = await ask(ws, type="hello", protocol=1, name="owner", password=PASSWORD)
            times.append((time.perf_counter() - start) * 1000)
            assert answer["type"] == "welcome", answer
    return times


async def flooder(
    session: aiohttp.ClientSession, url: str, addresses: Any, stop: asyncio.Event, tally: dict
) -> None:
    """Register accounts until `stop`, a new socket and guest each."""
    while not stop.is_set():
        n = next(addresses)
        headers = {"X-Forwarded-For": n if isinstance(n, str) else f"2001:db8:0:{n:x}::1"}
        async with session.ws_connect(url, headers=headers) as ws:
            await ask(ws, type="hello", protocol=1, name=f"flood{next(tally['names'])}")
            answer = await ask(ws, type="register", password=f"{PASSWORD} {n}")
            kind = answer["type"] if answer["type"] != "error" else answer["code"]
            tally[kind] = tally.get(kind, 0) + 1


def summary(times: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(times), 1), "max_ms": round(max(times), 1)}


async def measure(url: str, args: argparse.Namespace) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url) as ws:
            await ask(ws, type="hello", protocol=1, name="owner")
            assert (await ask(ws, type="register", password=PASSWORD))["type"] == "registered"
        idle = await timed_logins(session, url, args.logins)
        stop, tally = asyncio.Event(), {"names": itertools.count()}
        addresses = itertools.repeat("203.0.113.9") if args.source == "one" else itertools.count()
        tasks = [
            asyncio.create_task(flooder(session, url, addresses, stop, tally))
            for _ in range(args.flooders)
        ]
        await asyncio.sleep(args.warmup)
        flooded = await timed_logins(session, url, args.logins)
        stop.set()
        await asyncio.gather(*tasks)
    del tally["names"]
    return {
        "from": args.source,
        "flooders": args.flooders,
        "idle": summary(idle),
        "during_flood": summary(flooded),
        "flood_answers": tally,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", choices=("one", "many"), default="one")
    parser.add_argument("--flooders", type=int, default=8)
    parser.add_argument("--logins", type=int, default=10)
    parser.add_argument("--warmup", type=float, default=2.0)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "MOOSE_TRUSTED_PROXIES": "127.0.0.1"}
        cmd = [sys.executable, "-m", "moose", "serve", "--port", str(port), "--data-dir", data]
        server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        try:
            for _ in range(300):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1)
                    break
                except OSError:
                    time.sleep(0.1)
            print(json.dumps(asyncio.run(measure(f"ws://127.0.0.1:{port}/ws", args))))
        finally:
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    main()
