"""Subscriber CPU per pub/sub message: redis-py, the hub's read loops, coredis, valkey-glide.

    python bench/bench_redis_pubsub.py [--rate 20000] [--batch 100] [--rounds 5]
        [--duration 3] [--out FILE.json]
    valgrind --tool=callgrind python bench/bench_redis_pubsub.py --rate 1000 --batch 1 \
        --only Subscription --count 4000   # and --count 1000: instructions per message

Starts a private redis-server (bundled binary, unix socket, no persistence) and
a publisher process that sends the hub's wake-ups (``"<game id> <seq>"`` on
`moose:games`, as commit.lua publishes them) at `--rate` messages/s, paced in
batches of `--batch`. In this process, one subscriber at a time (the order
rotates per round) reads them: redis-py's `async for message in
pubsub.listen()` on the hub's own client `store.connect(url, 1, blocking=True)`;
on that client too, the hub's read loop of before (`get_message loop`:
`PubSub.get_message(timeout=SILENT)` per message) and net/subscription.py's
`Subscription` (the connection's replies), each handing the data to a part;
`async for` for coredis, `get_pubsub_message()` for valkey-glide, whose
subscriptions are set when the client is made. Over a `--duration` s window
after a warm-up it counts the messages taken and the CPU time of this process
(all threads). Prints and writes the medians per subscriber and their ratios to
redis-py's `listen()` and to the `get_message loop`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "client"), str(ROOT / "server")]

import redis  # noqa: E402

from moose_server.net.subscription import SILENT, Subscription  # noqa: E402
from moose_server.storage.embedded import EmbeddedRedis  # noqa: E402
from moose_server.storage.keys import GAMES_CHANNEL  # noqa: E402
from moose_server.storage.store import connect  # noqa: E402

CHANNEL = GAMES_CHANNEL
BASE = "redis-py PubSub"
OLD = "get_message loop"


def publish(url: str, rate: float, batch: int) -> None:
    """The publisher process: wake-ups at `rate`/s in batches of `batch`, until killed."""
    r = redis.Redis.from_url(url)
    start, sent = time.monotonic(), 0
    while True:
        pipe = r.pipeline(transaction=False)
        for k in range(batch):
            pipe.publish(CHANNEL, f"g_{(sent + k) % 997:08x} {sent + k}")
        pipe.execute()
        sent += batch
        time.sleep(max(0.0, start + sent / rate - time.monotonic()))


async def redis_py(url: str) -> AsyncIterator[Any]:
    client = connect(url, 1, blocking=True)  # the hub's
    try:
        async with client.pubsub() as ps:
            await ps.subscribe(CHANNEL)
            async for message in ps.listen():
                yield message
    finally:
        await client.aclose()


async def coredis_sub(url: str) -> AsyncIterator[Any]:
    import coredis

    client = coredis.Redis.from_url(url, decode_responses=False)
    async with client, client.pubsub(channels=[CHANNEL]) as ps:
        async for message in ps:
            yield message


async def glide_sub(url: str) -> AsyncIterator[Any]:
    import glide

    mode = glide.GlideClientConfiguration.PubSubChannelModes.Exact
    config = glide.GlideClientConfiguration(
        [glide.NodeAddress(unix_socket_path=url.removeprefix("unix://"))],
        request_timeout=10_000,
        pubsub_subscriptions=glide.GlideClientConfiguration.PubSubSubscriptions(
            channels_and_patterns={mode: {CHANNEL.decode()}}, callback=None, context=None
        ),
    )
    client = await glide.GlideClient.create(config)
    try:
        while True:
            yield await client.get_pubsub_message()
    finally:
        await client.close()


async def get_message_loop(url: str, heard: Callable[[bytes], None]) -> None:
    """The hub's read loop before net/subscription.py read the connection's replies:
    `PubSub.get_message(timeout=SILENT)` per message, its dict to the channel's part."""
    client = connect(url, 1, blocking=True)
    parts = {CHANNEL: heard}
    try:
        async with client.pubsub() as ps:
            await ps.subscribe(CHANNEL)
            while True:
                message = await ps.get_message(timeout=SILENT)
                if message is not None and message.get("type") == "message":
                    part = parts.get(message["channel"])
                    if part is not None:
                        part(message["data"])
    finally:
        await client.aclose()


async def subscription(url: str, heard: Callable[[bytes], None]) -> None:
    """The hub's: net/subscription.py's `Subscription` on the hub's own client."""
    client = connect(url, 1, blocking=True)
    try:
        await Subscription(client, {CHANNEL: heard}).run()
    finally:
        await client.aclose()


SUBSCRIBERS: dict[str, Callable[[str], AsyncIterator[Any]]] = {
    BASE: redis_py,
    "coredis": coredis_sub,
    "valkey-glide": glide_sub,
}
# Subscribers that hand each message's data to a part, as the hub's subscription does.
PARTS: dict[str, Callable[[str, Callable[[bytes], None]], Awaitable[None]]] = {
    OLD: get_message_loop,
    "Subscription": subscription,
}


async def measure(name: str, url: str, warmup: float, duration: float) -> dict[str, Any]:
    """Messages/s taken and CPU per message of one subscriber over one window."""
    counter = [0]

    async def drain() -> None:
        if name in PARTS:
            await PARTS[name](url, lambda data: counter.__setitem__(0, counter[0] + 1))
            return
        async for message in SUBSCRIBERS[name](url):
            kind = message.get("type") if isinstance(message, dict) else "message"  # glide's
            if kind in ("message", b"message"):
                counter[0] += 1

    task = asyncio.create_task(drain())
    try:
        await asyncio.sleep(warmup)
        n0, c0, t0 = counter[0], time.process_time(), time.perf_counter()
        await asyncio.sleep(duration)
        n1, c1, t1 = counter[0], time.process_time(), time.perf_counter()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    n = max(n1 - n0, 1)
    return {
        "subscriber": name,
        "messages_per_s": round(n / (t1 - t0)),
        "cpu_us_per_message": round((c1 - c0) / n * 1e6, 2),
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }


async def take(name: str, url: str, count: int) -> None:
    """Only `name`, until it took `count` messages (for an instruction count: run it
    under callgrind with two counts; the publisher and redis-server are not traced)."""
    done = asyncio.get_running_loop().create_future()
    counter = [0]

    def heard(data: bytes) -> None:
        counter[0] += 1
        if counter[0] == count:
            done.set_result(None)

    task = asyncio.create_task(PARTS[name](url, heard))
    try:
        await done
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    print(f"{name}: took {count} messages", flush=True)


async def run(args: argparse.Namespace, url: str) -> list[dict[str, Any]]:
    names = [n for n in [*SUBSCRIBERS, *PARTS] if n not in skipped()]
    runs = []
    for rnd in range(args.rounds):
        k = rnd % len(names)
        for name in names[k:] + names[:k]:
            res = await measure(name, url, args.warmup, args.duration)
            res["round"] = rnd
            runs.append(res)
            print(res, flush=True)
    return runs


def skipped() -> dict[str, str]:
    """Subscribers whose library is not installed, and why."""
    out = {}
    for name, module in (("coredis", "coredis"), ("valkey-glide", "glide")):
        try:
            __import__(module)
        except ImportError as exc:
            out[name] = f"cannot import {module}: {exc}"
    return out


def medians(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per subscriber: median messages/s and CPU per message, ratio to redis-py's."""
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(r["subscriber"] for r in runs):
        mine = [r for r in runs if r["subscriber"] == name]
        cpu = [r["cpu_us_per_message"] for r in mine]
        out[name] = {
            "messages_per_s": statistics.median(r["messages_per_s"] for r in mine),
            "cpu_us_per_message": statistics.median(cpu),
            "cpu_range": [min(cpu), max(cpu)],
        }
    for m in out.values():
        m["cpu_ratio"] = round(m["cpu_us_per_message"] / out[BASE]["cpu_us_per_message"], 3)
        if OLD in out:
            old = out[OLD]["cpu_us_per_message"]
            m["cpu_ratio_to_get_message"] = round(m["cpu_us_per_message"] / old, 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--publish", help=argparse.SUPPRESS)
    parser.add_argument("--rate", type=float, default=20_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--out")
    parser.add_argument("--only", choices=list(PARTS), help="with --count: this one only")
    parser.add_argument("--count", type=int, default=0)
    args = parser.parse_args()
    if args.publish:
        publish(args.publish, args.rate, args.batch)
        return
    with (
        tempfile.TemporaryDirectory(prefix="ps-") as folder,
        EmbeddedRedis(Path(folder), appendonly=False) as server,
    ):
        pub = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--publish",
                server.url,
                "--rate",
                str(args.rate),
                "--batch",
                str(args.batch),
            ]
        )
        try:
            if args.only:
                asyncio.run(take(args.only, server.url, args.count))
                return
            runs = asyncio.run(run(args, server.url))
        finally:
            pub.terminate()
            pub.wait()
    report = {
        "bench": "bench/bench_redis_pubsub.py",
        "argv": sys.argv[1:],
        "rate": args.rate,
        "batch": args.batch,
        "duration_s": args.duration,
        "not_measured": skipped(),
        "medians": medians(runs),
        "runs": runs,
    }
    print(json.dumps(report["medians"], indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()
