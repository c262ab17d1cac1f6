"""What a flood of `following` from one address costs another player.

    python bench/bench_following_flood.py [--attackers 8] [--follows 500] [--seconds 5] [--rounds 6]
        [--message following] [--pin]

Runs a real `moose serve` (its own valkey-server on a unix socket, loopback
trusted as a proxy so that clients say their address in X-Forwarded-For).
Every attacker, a guest of one address, follows `--follows` players: their
follow sets are written straight into Redis, as that address could build them
over hours within the follow budget (follows last half a year); each followed
player is online (a presence record) and sits in a real private game. Another
player, of another address, in a process of its own, sends `ping` ten times a
second: its round trips are
measured for `--seconds` idle, then for `--seconds` while every attacker sends
`following` at 19 a second (under the 20/s socket limit), `--rounds` times. Printed: the ping
p50/p99 idle and flooded, their ratio, the `following` answered and refused
(`rate_limited`), one answer's time alone, the Redis commands per answer
(INFO commandstats over the flood: a script's commands count each), and the CPU
time the server process, Redis and the flood's clients (this process) used per
second idle and flooded (/proc, INFO cpu, getrusage). `--message ping` floods
with `ping` instead, at the same rate: a control for what the clients' own load
on the machine does to the measure. `--pin` (Linux, two cores at least) puts the
server and its Redis on one core and the flood's clients and the other player's
process on another, as when the attacker's clients run on other machines; the load
average is printed at the start and the end, for the machine's other work.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import redis.asyncio as aioredis

from moose import protocol
from moose_server.storage.embedded import EmbeddedRedis, free_port
from moose_server.storage.keys import follows_key, player_games_key, presence_key

ATTACKER, VICTIM = "198.51.100.7", "203.0.113.5"
RATE = 19.0  # `following` a second per attacker socket: under the 20/s limit
PING_RATE = 10.0  # the other player's pings a second


class Sock:
    """A JSON WebSocket: requests by id, answers matched by id."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next_id = 0
        self.player = ""
        self.pushed: asyncio.Queue[dict[str, Any]] = asyncio.Queue()  # messages with no id
        self.reader = asyncio.create_task(self.read())

    async def read(self) -> None:
        async for raw in self.ws:
            msg = protocol.decode(raw.data)
            if "id" not in msg:
                self.pushed.put_nowait(msg)
                continue
            future = self.waiting.pop(msg["id"], None)
            if future is not None and not future.done():
                future.set_result(msg)

    async def request(self, mtype: str, **fields: Any) -> dict[str, Any]:
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = future
        frame = protocol.encode({"type": mtype, "id": self.next_id, **fields}, binary=False)
        await self.ws.send_str(str(frame))
        return await asyncio.wait_for(future, 60)


async def connect(session: aiohttp.ClientSession, url: str, name: str, address: str) -> Sock:
    ws = await session.ws_connect(url, headers={"X-Forwarded-For": address}, max_msg_size=0)
    sock = Sock(ws)
    welcome = await sock.request("hello", protocol=1, name=name)
    assert welcome["type"] == "welcome", welcome
    sock.player = welcome["player"]
    return sock


def cores_to_pin() -> tuple[set[int], set[int]]:
    """The core for the server and Redis, and the one for the clients; exits with a
    message where pinning is not possible."""
    if not hasattr(os, "sched_setaffinity"):
        sys.exit("--pin needs Linux (os.sched_setaffinity)")
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < 2:
        sys.exit(f"--pin needs two cores: this bench may use {len(usable)} ({usable})")
    return {usable[0]}, {usable[1]}


def pin(pid: int, cores: set[int]) -> int:
    """Every thread of process `pid` on `cores` (a thread started later inherits its
    starter's): the count of threads pinned."""
    tasks = list(Path(f"/proc/{pid}/task").iterdir())
    for task in tasks:
        os.sched_setaffinity(int(task.name), cores)
    return len(tasks)


def serve(redis_url: str, data: Path, port: int) -> subprocess.Popen[bytes]:
    """`moose serve` on `port`, ready; turns long enough that no game ends meanwhile."""
    cmd = [sys.executable, "-m", "moose", "serve", "--port", str(port), "--redis", redis_url]
    cmd += ["--data-dir", str(data), "--turn-time", "600"]
    env = {**os.environ, "MOOSE_TRUSTED_PROXIES": "127.0.0.1"}
    log = (data / "serve.log").open("ab")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    for _ in range(600):
        ready = f"http://127.0.0.1:{port}/readyz"
        with contextlib.suppress(OSError), urllib.request.urlopen(ready, timeout=1) as r:
            if r.status == 200:
                return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("moose serve did not start: see " + str(data / "serve.log"))


async def private_game(session: aiohttp.ClientSession, url: str) -> str:
    """A private table of a guest and a server bot, started: its game id."""
    host = await connect(session, url, "host", "192.0.2.1")
    table = await host.request("create_table", players=2)
    await host.request("add_bot", code=table["code"], bot="greedy")
    started = await host.request("start_table", code=table["code"])
    assert started["type"] == "table", started
    while (msg := await asyncio.wait_for(host.pushed.get(), 30))["type"] != "match":
        pass
    return str(msg["game"])


async def seed(redis: Any, attackers: list[Sock], follows: int, game: str) -> None:
    """Each attacker follows `follows` online players, each in `game`."""
    far = int(time.time() * 1000) + 3_600_000
    ids = [f"p_{n:010x}" for n in range(follows)]
    async with redis.pipeline(transaction=False) as pipe:
        for player in ids:
            pipe.hset(presence_key(player), mapping={"bench": far, "name": player})
            pipe.sadd(player_games_key(player), game)
        for sock in attackers:
            pipe.hset(follows_key(sock.player), mapping={p: p for p in ids})
        await pipe.execute()


async def pings(victim: Sock, seconds: float) -> list[float]:
    """Round trips of `ping` (ms), one every 1/PING_RATE s (or on the last answer) for `seconds`."""
    out: list[float] = []
    end = time.perf_counter() + seconds
    while (start := time.perf_counter()) < end:
        await victim.request("ping")
        out.append((time.perf_counter() - start) * 1000)
        await asyncio.sleep(max(0.0, start + 1 / PING_RATE - time.perf_counter()))
    return out


async def flood(
    attacker: Sock, message: str, stop: asyncio.Event, got: collections.Counter[str]
) -> None:
    """`message` at RATE a second (not waiting for answers) until stopped; counts the
    answers by type (following, error)."""
    gap = 1.0 / RATE

    async def ask() -> None:
        try:
            got[(await attacker.request(message))["type"]] += 1
        except TimeoutError:  # no answer within a minute
            got["unanswered"] += 1

    pending = []
    while not stop.is_set():
        pending.append(asyncio.create_task(ask()))
        await asyncio.sleep(gap)
    await asyncio.gather(*pending)


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


async def commands(redis: Any) -> int:
    stats = await redis.info("commandstats")
    return sum(int(v["calls"]) for v in stats.values())


async def cpu(redis: Any, pid: int) -> tuple[float, float, float]:
    """CPU seconds used so far by the server process (user + system), by Redis and by
    this process (the flood's clients)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    server = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    info = await redis.info("cpu")
    own = resource.getrusage(resource.RUSAGE_SELF)
    return (
        server,
        float(info["used_cpu_user"]) + float(info["used_cpu_sys"]),
        own.ru_utime + own.ru_stime,
    )


class Clock:
    """CPU ms per second of the server, Redis and the clients, over windows measured in turn."""

    def __init__(self) -> None:
        self.used = [0.0, 0.0, 0.0]  # server, Redis, clients: CPU s
        self.seconds = 0.0

    @contextlib.asynccontextmanager
    async def window(self, redis: Any, pid: int) -> Any:
        start, before = time.perf_counter(), await cpu(redis, pid)
        yield
        after = await cpu(redis, pid)
        self.used = [u + b - a for u, a, b in zip(self.used, before, after, strict=True)]
        self.seconds += time.perf_counter() - start

    def per_second(self) -> list[float]:
        return [u * 1000 / max(self.seconds, 1e-9) for u in self.used]


async def pinger(url: str, seconds: float) -> None:
    """The other player, in a process of its own (the flood's clients do not share its
    event loop): on each line of stdin, `seconds` of pings; their round trips as JSON."""
    loop = asyncio.get_running_loop()
    async with aiohttp.ClientSession() as session:
        victim = await connect(session, url, "victim", VICTIM)
        await pings(victim, 1.0)  # warm up
        print("ready", flush=True)
        while await loop.run_in_executor(None, sys.stdin.readline):
            print(json.dumps(await pings(victim, seconds)), flush=True)


async def measured(victim: asyncio.subprocess.Process) -> list[float]:
    """One window of the pinger's round trips (ms)."""
    assert victim.stdin is not None and victim.stdout is not None
    victim.stdin.write(b"go\n")
    await victim.stdin.drain()
    return list(json.loads(await victim.stdout.readline()))


async def main(args: argparse.Namespace, cores: tuple[set[int], set[int]] | None) -> None:
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="mflood") as tmp:
        data = Path(tmp)
        with EmbeddedRedis(data / "r", appendonly=False) as server:
            port = free_port()
            proc = serve(server.url, data, port)
            url = f"ws://127.0.0.1:{port}/ws"
            if cores is not None:  # this process, and so the pinger, already on cores[1]
                assert server.process is not None
                threads = pin(proc.pid, cores[0]), pin(server.process.pid, cores[0])
                print(
                    f"pinned: the server ({threads[0]} threads) and Redis ({threads[1]}) "
                    f"to core {min(cores[0])}; the flood's clients and the other player's "
                    f"process to core {min(cores[1])}"
                )
            redis = aioredis.Redis.from_url(server.url)
            me = [sys.executable, __file__, "--pinger", url, "--seconds", str(args.seconds)]
            pipe = asyncio.subprocess.PIPE
            victim = await asyncio.create_subprocess_exec(*me, stdin=pipe, stdout=pipe)
            try:
                assert victim.stdout is not None
                assert (await victim.stdout.readline()).strip() == b"ready"
                async with aiohttp.ClientSession() as session:
                    game = await private_game(session, url)
                    attackers = [
                        await connect(session, url, f"flood{n}", ATTACKER)
                        for n in range(args.attackers)
                    ]
                    await seed(redis, attackers, args.follows, game)
                    start = time.perf_counter()
                    one = await attackers[0].request("following")
                    alone = (time.perf_counter() - start) * 1000
                    assert len(one["players"]) == args.follows, one
                    idle: list[float] = []
                    busy: list[float] = []
                    got, used = collections.Counter[str](), 0
                    calm, flooded = Clock(), Clock()
                    for _ in range(args.rounds):  # windows interleaved: the machine's
                        async with calm.window(redis, proc.pid):  # other load falls on
                            idle += await measured(victim)  # both alike
                        stop = asyncio.Event()
                        before = await commands(redis)
                        async with flooded.window(redis, proc.pid):
                            floods = [
                                asyncio.create_task(flood(a, args.message, stop, got))
                                for a in attackers
                            ]
                            busy += await measured(victim)
                            stop.set()
                            await asyncio.gather(*floods)
                        used += await commands(redis) - before
            finally:
                if victim.returncode is None:
                    victim.kill()
                await victim.wait()
                await redis.aclose()
                proc.terminate()
                proc.wait(20)
    report(args, idle, busy, got, alone, used, (calm, flooded))
    print(f"load average (1 min): {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")


def report(
    args: argparse.Namespace,
    idle: list[float],
    busy: list[float],
    got: collections.Counter[str],
    alone: float,
    used: int,
    clocks: tuple[Clock, Clock],
) -> None:
    """Print the figures."""
    print(
        f"{args.attackers} guests of one address, {args.follows} follows each, "
        f"`{args.message}` at {RATE:.0f}/s each; {args.rounds} rounds of {args.seconds:g} s idle "
        f"then {args.seconds:g} s flooded"
    )
    print(f"ping idle:    p50 {statistics.median(idle):6.2f} ms  p99 {p99(idle):6.2f} ms")
    print(f"ping flooded: p50 {statistics.median(busy):6.2f} ms  p99 {p99(busy):6.2f} ms")
    print(f"p99 ratio flooded/idle: {p99(busy) / p99(idle):.2f}")
    answered = got[args.message if args.message != "ping" else "pong"]
    print(
        f"`{args.message}` sent {sum(got.values())}: {answered} answered, {got['error']} refused, "
        f"{got['unanswered']} unanswered within a minute; "
        f"one answer alone took {alone:.1f} ms"
    )
    print(
        f"Redis commands during the flood per answer (all the server's, pings included): "
        f"{used / max(1, answered):.0f}"
    )
    calm, flooded = (c.per_second() for c in clocks)
    print(
        "CPU ms/s idle -> flooded: "
        + ", ".join(
            f"{who} {a:.0f} -> {b:.0f} (+{b - a:.0f})"
            for who, a, b in zip(("server", "Redis", "clients"), calm, flooded, strict=True)
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attackers", type=int, default=8)
    parser.add_argument("--follows", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--message", default="following", choices=("following", "ping"))
    parser.add_argument(
        "--pin", action="store_true", help="server and Redis on one core, clients on another"
    )
    parser.add_argument("--pinger", help=argparse.SUPPRESS)  # the other player's process
    parsed = parser.parse_args()
    if parsed.pinger:
        asyncio.run(pinger(parsed.pinger, parsed.seconds))
    else:
        pinned = cores_to_pin() if parsed.pin else None
        if pinned is not None:  # before any thread: every later one, and the pinger, inherit
            os.sched_setaffinity(0, pinned[1])
        asyncio.run(main(parsed, pinned))
