"""Opening Redis: one node, or a Redis Cluster, and where pub/sub listens.

`open_redis(url, max_connections)` gives an instance its clients: one for
commands and scripts, a `Batcher` for the frequent calls (batch.py), and
a source of pub/sub connections for the hub (redis-py's `PubSub`).

- ``redis://``, ``rediss://``, ``unix://``: one node, unless the node says it is
  part of a cluster (``INFO cluster`` shows ``cluster_enabled:1``): then the
  cluster client, with that node as the seed.
- ``redis+cluster://host:port[,host:port...]`` (``rediss+cluster://`` for TLS):
  a cluster for sure, with every listed node as a seed (no probe).

The URL's query goes to redis-py: ``rediss://...?ssl_ca_certs=/path/ca.pem``
checks the server's certificate against that CA (`with_ca_certs` adds it from
MOOSE_REDIS_CA_CERTS). Only `moose.redact.redact_url` shows a URL in a log.

Commands on a cluster go through `redis.asyncio.cluster.RedisCluster`, which
sends each one to the node of its key's slot; every script of the server names
keys of one hash tag only (``{b7}``, ``{mm}``), so each runs on one node, and
the client refuses a cross-slot script before sending it. Pub/sub needs no
cluster client: in Redis 6.2 a PUBLISH on any node (a script's too) is
broadcast over the cluster bus to every node, so the hub subscribes on a plain
connection to one primary, and to the next primary after that one failed.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterNode, ClusterPipeline, RedisCluster

from moose_server.storage.batch import Batcher
from moose_server.storage.store import connect

__all__ = ["Backend", "NodePubSub", "PubSubSource", "open_bare", "open_redis", "with_ca_certs"]

log = logging.getLogger(__name__)

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
BATCH_CONNECTIONS = 8  # one batch in flight; a failed batch's commands go one by one
BATCH_TIMEOUT = 10.0  # seconds a batch's round trip may take (the other clients' per reply)


class PubSubSource(Protocol):
    """What the hub subscribes through: a new redis-py `PubSub` per (re)connection."""

    def pubsub(self) -> PubSub:
        """A PubSub on a connection of its own."""
        ...

    async def aclose(self) -> None:
        """Close every connection."""
        ...


@dataclass
class Backend:
    """An instance's Redis clients: `redis` for commands, `pubsub` for the hub.

    `batch` sends the frequent calls (see store.py): through a client of its own
    on one node (no per-reply timeout: it bounds each batch), through `redis` on a
    cluster.
    """

    redis: Any  # aioredis.Redis or RedisCluster: the same commands
    pubsub: PubSubSource
    cluster: bool
    batch: Batcher

    async def aclose(self) -> None:
        """Close every client."""
        await self.batch.aclose()
        if self.batch.redis is not self.redis:
            await self.batch.redis.aclose()
        await self.pubsub.aclose()
        await self.redis.aclose()


async def open_redis(url: str, max_connections: int) -> Backend:
    """The clients for `url`: a single node or a cluster (see the module docstring)."""
    parts = urlsplit(url)
    if parts.scheme in CLUSTER_SCHEMES:
        seeds = _seeds(parts.netloc)
        first = urlunsplit(
            (CLUSTER_SCHEMES[parts.scheme], _netloc(parts.netloc, seeds[0]), "", parts.query, "")
        )
        return await _open_cluster(first, seeds[1:], max_connections)
    if parts.scheme != "unix" and await _cluster_enabled(url):
        log.info("Redis at %s is a cluster node: using the cluster protocol", parts.hostname)
        return await _open_cluster(urlunsplit(parts._replace(path="")), [], max_connections)
    commands = connect(url, max_connections)
    pubsub = connect(url, 1, blocking=True)
    # The batcher's own client: one batch is in flight at a time, and it bounds
    # each batch's round trip itself, so its connections have no socket timeout.
    batched = connect(url, BATCH_CONNECTIONS, timeout=None)
    return Backend(commands, pubsub, cluster=False, batch=Batcher(batched, BATCH_TIMEOUT))


def open_bare(url: str, max_connections: int) -> tuple[aioredis.Redis, aioredis.Redis]:
    """One node's bare clients, for measuring Redis alone (play/ceiling.py), not serving:
    one whose pool waits up to 10 s for a free connection, and one for pub/sub."""
    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=max_connections, timeout=10
    )
    return aioredis.Redis(connection_pool=pool), aioredis.Redis.from_url(url)


def with_ca_certs(url: str, ca_certs: str) -> str:
    """`url` with ``ssl_ca_certs`` set to `ca_certs` in its query (unless empty)."""
    if not ca_certs:
        return url
    parts = urlsplit(url)
    query = [
        (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "ssl_ca_certs"
    ] + [("ssl_ca_certs", ca_certs)]
    return urlunsplit(parts._replace(query=urlencode(query, safe="/")))


async def _cluster_enabled(url: str) -> bool:
    probe = aioredis.Redis.from_url(url, socket_timeout=10)
    try:
        info: dict[str, Any] = await probe.info("cluster")
    finally:
        await probe.aclose()
    return bool(int(info.get("cluster_enabled", 0)))


async def _open_cluster(url: str, more: list[tuple[str, int]], max_connections: int) -> Backend:
    nodes = [ClusterNode(host, port) for host, port in more]
    cluster = _GatedCluster.from_url(
        url, startup_nodes=nodes or None, max_connections=max_connections, socket_timeout=10
    )
    try:
        await cluster.initialize()
    except BaseException:
        await cluster.aclose()
        raise
    batch = Batcher(cluster, BATCH_TIMEOUT)
    return Backend(cluster, NodePubSub(cluster, url), cluster=True, batch=batch)


def _seeds(netloc: str) -> list[tuple[str, int]]:
    """The host:port pairs of a cluster URL's netloc (credentials stripped)."""
    hosts = netloc.rpartition("@")[2]
    seeds = []
    for item in hosts.split(","):
        host, _, port = item.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"a cluster URL lists host:port pairs, not {item!r}")
        seeds.append((host.strip("[]"), int(port)))
    return seeds


def _netloc(netloc: str, seed: tuple[str, int]) -> str:
    """`netloc` with its host list replaced by one host:port (credentials kept)."""
    creds, at, _ = netloc.rpartition("@")
    host = f"[{seed[0]}]" if ":" in seed[0] else seed[0]
    return f"{creds}{at}{host}:{seed[1]}"


class _GatedCluster(RedisCluster):
    """A RedisCluster that waits for a free connection instead of failing.

    Its nodes raise MaxConnectionsError past `max_connections` at once; a
    semaphore of that size around every command and pipeline (each holds at
    most one connection per node) makes callers wait instead, as the
    BlockingConnectionPool of the single-node client does.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gate = asyncio.Semaphore(kwargs.get("max_connections", 100))

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        async with self.gate:
            return await super().execute_command(*args, **kwargs)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        # The Batcher's pipelines come here too: gated like every other command.
        if transaction or shard_hint:
            # The server uses no MULTI; redis-py refuses one whose keys span slots.
            return super().pipeline(transaction, shard_hint)
        return _GatedPipeline(self)  # type: ignore[abstract]  # as redis-py builds its own


class _GatedPipeline(ClusterPipeline):
    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> Any:
        gate = self.cluster_client.gate  # type: ignore[attr-defined]
        async with gate:
            return await super().execute(raise_on_error, allow_redirections)


class NodePubSub:
    """Pub/sub for a cluster: a plain connection to one primary, the next after a failure."""

    def __init__(self, cluster: RedisCluster, url: str) -> None:
        self.cluster = cluster
        self.url = urlsplit(url)
        self.node = ""  # "host:port" of the last connection handed out
        self._turn = 0
        self._clients: dict[str, aioredis.Redis] = {}

    def pubsub(self) -> PubSub:
        """A PubSub on the next primary (the hub asks again after a lost connection)."""
        nodes = self.cluster.get_primaries() or list(self.cluster.get_nodes())
        node = nodes[self._turn % len(nodes)]
        self._turn += 1
        self.node = node.name
        client = self._clients.get(node.name)
        if client is None:
            netloc = _netloc(self.url.netloc, (node.host, int(node.port)))
            url = urlunsplit(self.url._replace(netloc=netloc))
            client = self._clients[node.name] = connect(url, 1, blocking=True)
        return client.pubsub()

    async def aclose(self) -> None:
        """Close the connections to every node used."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()
