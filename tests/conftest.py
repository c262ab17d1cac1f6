"""Shared fixtures: real redis-server processes and real Moose House servers.

The classes and functions the fixtures and tests share live in `helpers`.
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
- `serve`: ``instance = await serve(**settings)``, the same as an `Instance` that
  can be stopped (drained) mid-test and restarted on its port; `url`: one of them.
- `ws_client`: ``c = await ws_client(url, name="alice")``: a raw socket that
  has said hello (`RawClient`: send, request, expect, closed).
- `config_home` (every test): XDG_CONFIG_HOME is a folder of the test's own.
- `browser`: one headless Chromium per test module (helpers.browser), or a skip
  (`players`: ``p = players()`` opens a page on the module's own `server` fixture)
  with its reason where Chromium is missing (a failure when CI is set).
- `moose_serve`: ``proc = moose_serve("--data-dir", d)`` runs `moose serve` as a
  subprocess (``proc.url``, ``proc.kill()``, ``proc.stop()``); ``wait=False``
  starts several at once (then ``proc.wait_ready()`` each).

A test that takes `moose_serve`, `redis_factory`, `private_redis` or the cluster
is marked `slow` (`helpers.lanes`); any other test that starts a process must
carry the mark itself, or it fails.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis
from aiohttp import web
from aiosmtpd.controller import Controller

from moose_server.app import create_app
from moose_server.settings import Settings
from moose_server.storage.embedded import EmbeddedRedis, free_port

from helpers import Instance, RawClient, RedisClusterNodes, Serve, ServeProcess, cleanup
from helpers.browser import ARGS, CHROMIUM, Player
from helpers.lanes import LaneGuard
from helpers.mail import Inbox
from helpers.push import PushService


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private config folder per test: `moose play` keeps session tokens there (and
    game records in the data folder beside it), and tests (and the commands they
    start) must never touch the user's own."""
    folder = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    # A short data folder: `moose serve` puts its Redis' unix socket there, and a
    # socket's path is limited to about 100 bytes (tmp_path, under an xdist worker's
    # folder and named for the test, can be longer).
    data = Path(tempfile.mkdtemp(prefix="mh-"))
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    yield folder
    shutil.rmtree(data, ignore_errors=True)


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
    Redis. Timings default to short polls (a stopping instance waits for its loops'
    sleeps to end: the arena loop's default half second made every teardown that
    long); everything stops at the end of the test.
    """
    runners: list[web.AppRunner] = []

    async def start(**overrides: Any) -> str:
        port = free_port()
        settings = Settings(
            host="127.0.0.1",
            port=port,
            redis_url=redis_url,
            data_dir=str(tmp_path / "data"),
            match_wait=0.2,
            match_interval=0.05,
            poll_interval=0.05,
            arena_interval=0.05,
            drain_grace=0.5,
        ).replace(**overrides)
        runner = web.AppRunner(create_app(settings), shutdown_timeout=1.0)
        await runner.setup()
        runners.append(runner)
        await web.TCPSite(runner, "127.0.0.1", port).start()
        return f"ws://127.0.0.1:{port}/ws"

    yield start
    for runner in reversed(runners):
        await runner.cleanup()


@pytest.fixture
async def serve(redis_url: str, tmp_path: Path) -> AsyncIterator[Serve]:
    """Start server instances over the test Redis; all stopped at the end.

    Like `moose_server`, but an instance can be stopped (drained with 1012)
    mid-test and another started on its port, and teardown survives the
    cancellation issue described in `helpers.cleanup`.
    """
    started: list[Instance] = []

    async def start(port: int | None = None, **changes: Any) -> Instance:
        settings = Settings(
            redis_url=redis_url,
            data_dir=str(tmp_path),
            match_wait=0.2,
            match_interval=0.05,
            poll_interval=0.05,
            arena_interval=0.05,
            drain_grace=1.0,
        ).replace(**changes)
        runner = web.AppRunner(create_app(settings), shutdown_timeout=1.0)
        await runner.setup()
        port = port or free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        instance = Instance(f"ws://127.0.0.1:{port}/ws", port, runner)
        started.append(instance)
        return instance

    yield start
    for instance in started:
        await cleanup(instance.runner)


@pytest.fixture
async def url(serve: Serve) -> str:
    """The URL of one fresh server instance."""
    return (await serve()).url


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
        *args: str,
        port: int | None = None,
        wait: bool = True,
        env: dict[str, str] | None = None,
        log: str = "serve.log",
    ) -> ServeProcess:
        proc = ServeProcess(list(args), port or free_port(), tmp_path / log, env)
        started.append(proc)
        return proc.start(wait=wait)

    yield start
    for proc in started:
        proc.stop()


# -- a raw WebSocket client, for protocol-level tests ---------------------------------


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


# -- where notices go: a push service and an SMTP server on loopback -------------------


@pytest.fixture
async def push_service() -> AsyncIterator[PushService]:
    """A push service on loopback (helpers.push)."""
    async with PushService() as service:
        yield service


@pytest.fixture
async def inbox() -> AsyncIterator[tuple[Inbox, int]]:
    """An SMTP server on loopback (a thread of this process) and its port."""
    handler = Inbox()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield handler, controller.port
    finally:
        controller.stop()


# -- the fast lane (helpers.lanes) ------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    """Mark `slow` the tests that start processes; the others may not start one."""
    config.pluginmanager.register(LaneGuard(), "lane-guard")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module's tests."""
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("CI is set but Chromium is not installed (.ci/run installs chromium)")
        pytest.skip("Chromium is not installed (apt-get install chromium); CI runs these tests")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def players(browser: Any, server: Any) -> Iterator[Callable[..., Player]]:
    """``p = players()``: a new page (its own browser context) on the module's `server`."""
    made: list[Player] = []

    def make(**kwargs: Any) -> Player:
        made.append(Player(browser, server.http, **kwargs))
        return made[-1]

    yield make
    for player in made:
        player.close()
