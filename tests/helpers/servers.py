"""Moose House servers for tests: `moose serve` subprocesses and in-process instances."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from moose_server.play.games import Games
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.store import Store


@contextlib.asynccontextmanager
async def open_store(redis_url: str) -> AsyncIterator[Store]:
    """A Store on a test's Redis (one node or a cluster), closed at the end."""
    redis = await open_redis(redis_url, 8)
    try:
        yield Store(redis, buckets=16)
    finally:
        await redis.aclose()


@contextlib.asynccontextmanager
async def open_games(redis_url: str, **settings: Any) -> AsyncIterator[Games]:
    """The server's `Games` over a test's Redis (16 buckets), with these settings."""
    redis = await open_redis(redis_url, 8)
    games = Games(Store(redis, 16), Settings(redis_url=redis_url, **settings))
    try:
        yield games
    finally:
        await games.close()
        await redis.aclose()


def http_base(ws_url: str) -> str:
    """The HTTP base URL of the server whose WebSocket is at `ws_url`."""
    return ws_url.replace("ws://", "http://").removesuffix("/ws")


class LoopbackPort:
    """The URLs of a server on loopback port `port` (set by the subclass)."""

    port: int

    @property
    def url(self) -> str:
        """The WebSocket URL."""
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http(self) -> str:
        """The HTTP base URL."""
        return f"http://127.0.0.1:{self.port}"


class ServeProcess(LoopbackPort):
    """`moose serve` as a real subprocess: start, wait until ready, kill or stop."""

    def __init__(
        self, args: list[str], port: int, log: Path, env: dict[str, str] | None = None
    ) -> None:
        self.args, self.port, self.log, self.env = args, port, log, env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0, *, wait: bool = True) -> ServeProcess:
        """Start the process and (unless `wait` is false) wait until /readyz answers 200."""
        cmd = [sys.executable, "-m", "moose", "serve", "--port", str(self.port), *self.args]
        env = None if self.env is None else {**os.environ, **self.env}
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        return self.wait_ready(timeout) if wait else self

    def wait_ready(self, timeout: float = 30.0) -> ServeProcess:
        """Wait until /readyz answers 200."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"moose serve exited: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(OSError):
                ready = f"{self.http}/readyz"
                with urllib.request.urlopen(ready, timeout=1) as resp:
                    if resp.status == 200:
                        return self
            time.sleep(0.05)
        raise RuntimeError(f"moose serve not ready: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait for a clean exit; returns the exit code."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@dataclass
class Instance:
    """One server instance running in the test's event loop (the `serve` fixture)."""

    url: str
    port: int
    runner: web.AppRunner

    async def stop(self) -> None:
        """Shut down as `moose serve` does on SIGTERM: drain with close 1012."""
        await self.runner.shutdown()
        await cleanup(self.runner)


async def cleanup(runner: web.AppRunner) -> None:
    """`runner.cleanup()`, cancelling again any task that outlived its cancellation.

    redis-py 8.1 now and then swallows a cancellation that lands inside
    `pipeline.execute()`; a server loop cancelled there runs on, and the
    cleanup would wait for it forever.
    """
    task = asyncio.ensure_future(runner.cleanup())
    while not task.done():
        await asyncio.wait({task}, timeout=0.5)
        for other in asyncio.all_tasks():
            if other.cancelling() and not other.done():
                other.cancel()
    task.result()


Serve = Callable[..., Awaitable[Instance]]


def serve_several(
    moose_serve: Callable[..., ServeProcess],
    redis_url: str,
    env: dict[str, str],
    count: int = 2,
    flags: Sequence[str] = (),
) -> list[ServeProcess]:
    """`count` instances over `redis_url` (ids i_0, i_1, ...), started at once, each
    with the command-line `flags`; each logs to serve<n>.log."""
    procs = [
        moose_serve(
            "--redis",
            redis_url,
            *flags,
            "--instance-id",
            f"i_{n}",
            wait=False,
            env=env,
            log=f"serve{n}.log",
        )
        for n in range(count)
    ]
    return [p.wait_ready() for p in procs]
