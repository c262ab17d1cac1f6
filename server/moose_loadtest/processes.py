"""The processes a load test starts and measures: ports, readiness, stopping, CPU and memory.

- `free_port`, `wait_ready`, `stop_process`: a subprocess started, awaited and stopped;
- `ProcessProbe`: CPU and memory of a process by pid (psutil);
- `machine`: where the figures come from (cores, CPU model, Python, date).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Any

import psutil

__all__ = ["ProcessProbe", "free_port", "machine", "stop_process", "wait_ready"]

READY_TIMEOUT = 30.0


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
