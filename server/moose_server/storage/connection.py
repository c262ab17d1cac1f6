"""Opening Redis: one node, or a Redis Cluster, and where pub/sub listens.

`open_redis(url, max_connections)` gives an instance its `Gateway`
(gateway.py): the one redis-py client every command and script goes through
(one batch per loop turn, batch.py), and a source of pub/sub connections for
the hub (redis-py's `PubSub`).

- ``redis://``, ``rediss://``, ``unix://``: one node, unless the node says it is
  part of a cluster (``INFO cluster`` shows ``cluster_enabled:1``): then the
  cluster client, with that node as the seed.
- ``redis+cluster://host:port[,host:port...]`` (``rediss+cluster://`` for TLS):
  a cluster for sure, with every listed node as a seed (no probe).

The URL's query goes to redis-py: ``rediss://...?ssl_ca_certs=/path/ca.pem``
checks the server's certificate against that CA (`with_ca_certs` adds it from
MOOSE_REDIS_CA_CERTS). Only `moose.redact.redact_url` shows a URL in a log.

Commands on a cluster go to the node of their key's slot, as the slot table of
`redis.asyncio.cluster.RedisCluster` says: each primary's batch on a plain
client to that node, and through the cluster client what the node does not
answer (shards.py); every script of the server names keys of one hash tag only
(``{b7}``, ``{mm}``), so each runs on one node, and a cross-slot script is
refused (the cluster client's error). Pub/sub needs no
cluster client: in Redis 6.2 a PUBLISH on any node (a script's too) is
broadcast over the cluster bus to every node, so the hub subscribes on a plain
connection to one primary, and to the next primary after that one failed. A
sharded channel (SSUBSCRIBE, SPUBLISH) lives on the nodes of its slot's shard
only: `NodePubSub.shard` gives a connection to one primary for the channels its
slots hold (`owners`), and net/subscription.py keeps one to each.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from moose_server.storage.gateway import Gateway
from moose_server.storage.store import connect

__all__ = ["NodePubSub", "open_bare", "open_node", "open_redis", "with_ca_certs"]

log = logging.getLogger(__name__)

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
TIMEOUT = 10.0  # seconds a batch's round trip may take (a cluster's, each reply too)


async def open_redis(url: str, max_connections: int) -> Gateway:
    """The gateway for `url`: a single node or a cluster (see the module docstring)."""
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
    return open_node(url, max_connections)


def open_node(url: str, max_connections: int) -> Gateway:
    """The gateway for one node, as `url` says (no probe: it connects when first used)."""
    # The batcher bounds each batch's round trip itself: no socket timeout, so
    # redis-py does not arm one asyncio timeout per reply (batch.py).
    client = connect(url, max_connections, timeout=None)
    pubsub = connect(url, 1, blocking=True)
    return Gateway(client, pubsub, cluster=False, timeout=TIMEOUT, connections=max_connections)


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


async def _open_cluster(url: str, more: list[tuple[str, int]], max_connections: int) -> Gateway:
    nodes = [ClusterNode(host, port) for host, port in more]
    cluster = RedisCluster.from_url(
        url, startup_nodes=nodes or None, max_connections=max_connections, socket_timeout=TIMEOUT
    )
    try:
        await cluster.initialize()
    except BaseException:
        await cluster.aclose()
        raise
    pubsub = NodePubSub(cluster, url)
    return Gateway(cluster, pubsub, cluster=True, timeout=TIMEOUT, connections=max_connections)


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


class NodePubSub:
    """Pub/sub for a cluster: a plain connection to one primary, the next after a failure;
    and a connection to each primary for the sharded channels of its slots (`shard`)."""

    def __init__(self, cluster: RedisCluster, url: str) -> None:
        self.cluster = cluster
        self.url = urlsplit(url)
        self.node = ""  # "host:port" of the last connection handed out
        self._turn = 0
        self._clients: dict[str, aioredis.Redis] = {}
        self._shards: dict[str, aioredis.Redis] = {}

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

    def owners(self, channels: Iterable[bytes]) -> dict[str, tuple[bytes, ...]]:
        """The sharded channels by the primary ("host:port") that holds each one's slot,
        as the client's slot table says; a channel of a slot it has no primary for is
        under ""."""
        by: dict[str, list[bytes]] = {}
        for channel in channels:
            try:
                slot = self.cluster.keyslot(channel)
                name = str(self.cluster.nodes_manager.get_node_from_slot(slot).name)
            except (RedisError, AttributeError, IndexError):  # a slot uncovered, no table
                name = ""
            by.setdefault(name, []).append(channel)
        return {name: tuple(sorted(found)) for name, found in by.items()}

    async def refresh(self) -> None:
        """Read the cluster's slot table again (after a failover or a slot move)."""
        request = getattr(self.cluster, "_request_refresh", None)
        if request is None:  # redis-py before 8: no refresh on request, read it now
            await self.cluster.nodes_manager.initialize()
            return
        request()  # redis-py 8: asked for, run once due (not twice within its interval)
        await self.cluster.initialize()

    def shard(self, name: str) -> PubSub:
        """A PubSub on the primary `name` for sharded channels. Its connection is never
        made anew behind the caller's back (redis-py would, subscribing again, and what
        was published meanwhile would be lost unseen): a lost one is an error."""
        client = self._shards.get(name)
        if client is None:
            host, _, port = name.rpartition(":")
            netloc = _netloc(self.url.netloc, (host, int(port)))
            url = urlunsplit(self.url._replace(netloc=netloc))
            client = aioredis.Redis.from_url(url, socket_timeout=None, retry=Retry(NoBackoff(), 0))
            self._shards[name] = client
        return client.pubsub()

    async def aclose(self) -> None:
        """Close the connections to every node used."""
        clients = [*self._clients.values(), *self._shards.values()]
        self._clients, self._shards = {}, {}
        for client in clients:
            await client.aclose()
