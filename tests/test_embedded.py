"""The bundled redis-server starts, persists with AOF, and stops cleanly."""

from __future__ import annotations

import redis

from moose_server.embedded import EmbeddedRedis, redis_server_binary


def test_bundled_binary_is_found():
    assert redis_server_binary().endswith("redis-server")


def test_unix_socket_server_keeps_data_across_restart(tmp_path):
    with EmbeddedRedis(tmp_path / "data") as server:
        assert server.url.startswith("unix://")
        with redis.Redis.from_url(server.url) as r:
            r.set("k", "v")
    with EmbeddedRedis(tmp_path / "data") as server, redis.Redis.from_url(server.url) as r:
        assert r.get("k") == b"v"


def test_session_server_is_private_and_empty(redis_url):
    with redis.Redis.from_url(redis_url) as r:
        assert r.dbsize() == 0  # the fixture empties it: the next two lines make it private
        assert r.config_get("bind") == {"bind": "127.0.0.1"}
        assert r.config_get("protected-mode") == {"protected-mode": "yes"}
        assert r.ping()
