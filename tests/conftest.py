"""Shared fixtures: real redis-server processes from the bundled binary.

Tests never mock Redis and never touch a Redis they did not start: every server
here is started on a private loopback port in a temporary folder and stopped at
the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import redis

from moose_server.embedded import EmbeddedRedis, free_port


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
def redis_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., EmbeddedRedis]]:
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
