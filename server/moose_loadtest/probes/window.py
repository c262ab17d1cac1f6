"""What a Redis does over a window: commands run, CPU, round trips by MONITOR, the slow
log, MEMORY USAGE of keys; over one node (`RedisProbe`) or every node of a URL
(`NodesProbe`)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from typing import Any

from moose_loadtest import deployment
from moose_loadtest.probes.urls import node_urls

__all__ = ["NodesProbe", "RedisProbe"]


class RedisProbe:
    """Command counts and CPU of a Redis over a window; round trips by MONITOR."""

    def __init__(self, url: str) -> None:
        import redis.asyncio as aioredis

        self.url = url
        self.redis = aioredis.Redis.from_url(url)
        self._stats0: dict[str, int] = {}
        self._cpu0 = 0.0
        self._reads0 = 0
        self._t0 = 0.0
        self.commands: Counter[str] = Counter()
        self.cpu_percent = 0.0
        self.reads = 0  # reads from its clients' sockets in the window: their batches

    async def _snapshot(self) -> tuple[dict[str, int], float, int]:
        stats = await self.redis.info("commandstats")
        cpu = await self.redis.info("cpu")
        reads = (await self.redis.info("stats")).get("total_reads_processed", 0)
        calls = {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}
        return calls, float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]), int(reads)

    async def start(self) -> None:
        """Begin the window."""
        self._stats0, self._cpu0, self._reads0 = await self._snapshot()
        self._t0 = time.monotonic()

    async def stop(self) -> None:
        """End the window: commands run (scripts' inner commands too), CPU share, reads."""
        stats, cpu, reads = await self._snapshot()
        wall = max(1e-9, time.monotonic() - self._t0)
        self.cpu_percent = 100 * (cpu - self._cpu0) / wall
        # Less the probe's own three INFO reads; 0 where Redis does not count reads.
        self.reads = max(0, reads - self._reads0 - 3)
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
        self.reads = 0
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
        self.reads = sum(p.reads for p in self.probes)

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


def _slow_name(args: list[bytes]) -> str:
    """A slow-log entry's command; a script by its SHA1 and what its first key is."""
    words = [a.decode(errors="replace") for a in args[:4]]
    if words and words[0].upper() == "EVALSHA" and len(words) > 1:
        on = f" on {deployment.key_kind(words[3])}" if len(words) > 3 else ""
        return f"EVALSHA {words[1][:8]}{on}"
    if words and words[0].upper() == "EVAL":
        return "EVAL (first run of a script)"
    return words[0].upper() if words else "?"
