"""Shared fixtures: real redis-server processes and real Moose House servers.

Tests never mock Redis and never touch a Redis they did not start: every server
here is started on a private loopback port in a temporary folder and stopped at
the end.

- `redis_url`: the session's redis-server, emptied for each test.
- `redis_factory`: start extra redis-servers.
- `private_redis`: one of them, parametrized: on a loopback port, then on a unix socket.
- `redis_cluster`: the session's Redis Cluster (three masters, no replicas),
  emptied for each test; `backend_url` is parametrized over "single" (the
  `redis_url` server) and "cluster" (a node of it: the server detects the cluster),
  so one test body runs against every backend.
- `moose_server`: ``url = await moose_server(**settings)`` runs a server instance
  in the test's event loop and returns its ``ws://127.0.0.1:PORT/ws``.
- `ws_client`: ``c = await ws_client(url, name="alice")``: a raw socket that
  has said hello (`RawClient`: send, request, expect, closed).
- `moose_serve`: ``proc = moose_serve("--data-dir", d)`` runs `moose serve` as a
  subprocess (``proc.url``, ``proc.kill()``, ``proc.stop()``); ``wait=False``
  starts several at once (then ``proc.wait_ready()`` each).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis
from aiohttp import web

from moose import protocol
from moose_server.app import create_app
from moose_server.embedded import EmbeddedRedis, free_port, redis_server_binary
from moose_server.settings import Settings

Message = dict[str, Any]


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    """One redis-server for the whole session (AOF off: tests do not need it)."""
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"), port=free_port(), appendonly=False)
    with server:
        yield server


@pytest.fixture
def redis_url(redis_server: EmbeddedRedis) -> str:
    """The session server's URL, emptied before the test."""
    with redis.Redis.from_url(redis_server.url) as r:
        r.flushall()
    return redis_server.url


@pytest.fixture
def redis_factory(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., EmbeddedRedis]]:
    """Start extra redis-servers (own folder, own port); all stopped at the end."""
    started: list[EmbeddedRedis] = []

    def start(**kwargs: object) -> EmbeddedRedis:
        kwargs.setdefault("port", free_port())
        server = EmbeddedRedis(tmp_path_factory.mktemp("redis"), **kwargs)  # type: ignore[arg-type]
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(params=["tcp", "unix"])
def private_redis(
    request: pytest.FixtureRequest, redis_factory: Callable[..., EmbeddedRedis]
) -> EmbeddedRedis:
    """A private redis-server (no AOF) on a loopback port, then on a unix socket."""
    port = free_port() if request.param == "tcp" else None
    return redis_factory(port=port, appendonly=False)


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
    """Three cluster-enabled redis-servers joined into one Redis Cluster."""

    def __init__(self, folder: Path) -> None:
        extra = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                 "--cluster-node-timeout", "2000"]  # fmt: skip
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
        cli = str(Path(redis_server_binary()).with_name("redis-cli"))
        addresses = [f"127.0.0.1:{n.port}" for n in self.nodes]
        subprocess.run(
            [cli, "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes"],
            check=True, capture_output=True, timeout=30,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while any(not self._ok(n) for n in self.nodes):
            if time.monotonic() > deadline:
                raise RuntimeError("the Redis Cluster did not reach cluster_state:ok")
            time.sleep(0.05)

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


@pytest.fixture(scope="session")
def redis_cluster_nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterNodes]:
    """One Redis Cluster for the whole session."""
    cluster = RedisClusterNodes(tmp_path_factory.mktemp("cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def redis_cluster(redis_cluster_nodes: RedisClusterNodes) -> RedisClusterNodes:
    """The session's Redis Cluster, emptied before the test."""
    redis_cluster_nodes.flush()
    return redis_cluster_nodes


@pytest.fixture(params=["single", "cluster"])
def backend_url(request: pytest.FixtureRequest) -> str:
    """A Redis URL of each backend in turn: one redis-server, then a Redis Cluster."""
    if request.param == "single":
        return str(request.getfixturevalue("redis_url"))
    cluster: RedisClusterNodes = request.getfixturevalue("redis_cluster")
    return cluster.url


# -- Moose House servers ----------------------------------------------------------


@pytest.fixture
async def moose_server(
    redis_url: str, tmp_path: Path
) -> AsyncIterator[Callable[..., Awaitable[str]]]:
    """Start server instances (in this event loop) over the test Redis.

    ``url = await moose_server(turn_time=0.2)`` starts one instance with those
    Settings overrides on a free loopback port and returns its WebSocket URL,
    ``ws://127.0.0.1:PORT/ws``. Call it again for more instances sharing the same
    Redis. Timings default to short polls; everything stops at the end of the test.
    """
    runners: list[web.AppRunner] = []

    async def start(**overrides: Any) -> str:
        port = free_port()
        settings = Settings(
            host="127.0.0.1", port=port, redis_url=redis_url, data_dir=str(tmp_path / "data"),
            match_wait=0.2, match_interval=0.05, poll_interval=0.05, drain_grace=0.5,
        ).replace(**overrides)  # fmt: skip
        runner = web.AppRunner(create_app(settings), shutdown_timeout=1.0)
        await runner.setup()
        runners.append(runner)
        await web.TCPSite(runner, "127.0.0.1", port).start()
        return f"ws://127.0.0.1:{port}/ws"

    yield start
    for runner in reversed(runners):
        await runner.cleanup()


def http_base(ws_url: str) -> str:
    """The HTTP base URL of the server whose WebSocket is at `ws_url`."""
    return ws_url.replace("ws://", "http://").removesuffix("/ws")


async def play_match(
    client: Any, progress: dict[str, int], on_turn: Callable[[str, Message], Awaitable[None]]
) -> tuple[str, int, list[Message]]:
    """Follow the next match of `client` (a `moose.client.Client`) to its end.

    `progress[game]` keeps the highest seq seen; `on_turn(game, msg)` is awaited on
    each event where it is our seat's turn with legal moves. Returns the game, our
    seat and every event of the game delivered, the last one the end.
    """
    game, seat, events = "", -1, []
    async for msg in client.events():
        if msg["type"] == "match":
            game, seat = msg["game"], msg["seat"]
            continue
        if msg["type"] != "event" or msg["game"] != game:
            continue
        events.append(msg)
        progress[game] = max(progress.get(game, 0), msg["seq"])
        if msg["view"]["over"]:
            return game, seat, events
        if msg.get("legal") and msg["view"]["to_act"] == seat:
            await on_turn(game, msg)
    raise AssertionError("the events ended before the game did")


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


@pytest.fixture
def moose_serve(tmp_path: Path) -> Iterator[Callable[..., ServeProcess]]:
    """Run `moose serve` as a subprocess: ``proc = moose_serve("--data-dir", d)``.

    Returns a started, ready `ServeProcess` on a free port (pass ``port=`` to
    reuse one after a restart); every process is stopped at the end of the test.
    Without ``--redis`` the server runs its bundled Redis in ``--data-dir``.
    ``env=`` adds environment variables (MOOSE_* settings without a flag);
    ``log=`` names the log file in the test's folder (default serve.log).
    """
    started: list[ServeProcess] = []

    def start(
        *args: str, port: int | None = None, wait: bool = True,
        env: dict[str, str] | None = None, log: str = "serve.log",
    ) -> ServeProcess:  # fmt: skip
        proc = ServeProcess(list(args), port or free_port(), tmp_path / log, env)
        started.append(proc)
        return proc.start(wait=wait)

    yield start
    for proc in started:
        proc.stop()


# -- a raw WebSocket client, for protocol-level tests ---------------------------------


class RawClient:
    """A bare WebSocket speaking PROTOCOL.md frames; keeps every message it receives."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, binary: bool) -> None:
        self.ws, self.binary = ws, binary
        self.received: list[dict[str, Any]] = []  # everything, in order (for leak checks)
        self._unread: list[dict[str, Any]] = []
        self._arrived = asyncio.Event()
        self._ids = itertools.count(1000)
        self.player = self.token = self.name = ""
        self.close_code: int | None = None
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.ws:
            if raw.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
                msg = protocol.decode(raw.data)
                self.received.append(msg)
                self._unread.append(msg)
                self._arrived.set()
        self.close_code = self.ws.close_code
        self._arrived.set()

    async def send(self, msg: dict[str, Any], *, binary: bool | None = None) -> None:
        """Send one message in our encoding (or the one given)."""
        await self.send_frame(
            protocol.encode(msg, binary=self.binary if binary is None else binary)
        )

    async def send_frame(self, frame: bytes | str) -> None:
        """Send a raw frame, valid or not."""
        if isinstance(frame, bytes):
            await self.ws.send_bytes(frame)
        else:
            await self.ws.send_str(frame)

    async def expect(self, timeout: float = 10.0, **match: Any) -> dict[str, Any]:
        """The first unread message whose fields equal `match` (others stay unread)."""
        async with asyncio.timeout(timeout):
            while True:
                for i, msg in enumerate(self._unread):
                    if all(msg.get(k) == v for k, v in match.items()):
                        return self._unread.pop(i)
                if self._reader.done():
                    raise ConnectionError(f"closed ({self.close_code}) waiting for {match}")
                self._arrived.clear()
                await self._arrived.wait()

    async def request(self, mtype: str, **fields: Any) -> dict[str, Any]:
        """Send a request with a fresh id and return its answer (or error)."""
        msg_id = next(self._ids)
        await self.send({"type": mtype, "id": msg_id, **fields})
        return await self.expect(id=msg_id)

    async def hello(self, name: str = "", token: str = "") -> dict[str, Any]:
        """Say hello; remember the player, name and token of the welcome."""
        fields: dict[str, Any] = {"token": token} if token else {"name": name}
        answer = await self.request("hello", protocol=1, **fields)
        if answer["type"] == "welcome":
            self.player, self.token, self.name = answer["player"], answer["token"], answer["name"]
        return answer

    async def closed(self, timeout: float = 10.0) -> int | None:
        """Wait until the server closes the socket; its close code."""
        async with asyncio.timeout(timeout):
            await asyncio.shield(self._reader)
        return self.close_code

    async def close(self) -> None:
        """Close our side and stop reading."""
        await self.ws.close()
        self._reader.cancel()
        await asyncio.gather(self._reader, return_exceptions=True)


@pytest.fixture
async def ws_client() -> AsyncIterator[Callable[..., Awaitable[RawClient]]]:
    """``c = await ws_client(url, name="alice", binary=True)``: a raw socket, hello said.

    With ``name=None`` no hello is sent. All sockets are closed at the end.
    """
    session = aiohttp.ClientSession()
    clients: list[RawClient] = []

    async def connect(url: str, name: str | None = "", *, binary: bool = True) -> RawClient:
        ws = await session.ws_connect(url, max_msg_size=0)
        client = RawClient(ws, binary)
        clients.append(client)
        if name is not None:
            welcome = await client.hello(name or f"p{len(clients)}")
            assert welcome["type"] == "welcome", welcome
        return client

    yield connect
    for client in clients:
        await client.close()
    await session.close()
