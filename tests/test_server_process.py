"""`moose serve` as a real process: killed mid-game and restarted, or stopped cleanly."""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import sys
import urllib.request
from typing import Any

import psutil
import pytest
import redis

from moose_server.storage.embedded import free_port, redis_server_binary

from helpers import check_game, play_in_order, table_game

pytestmark = pytest.mark.slow  # each test runs `moose serve`

Message = dict[str, Any]


async def test_killed_server_restarts_and_the_game_goes_on(moose_serve, ws_client, tmp_path):
    data = str(tmp_path / "data")
    server = moose_serve("--data-dir", data)
    a, b = await ws_client(server.url, "ann"), await ws_client(server.url, "bob", binary=False)
    game, (seat_a, seat_b) = await table_game([a, b])
    seen = {a: [], b: []}
    rngs = {a: random.Random(1), b: random.Random(2)}
    # Both play until a few moves are in, then the server crashes.
    await asyncio.gather(*(play_in_order(c, game, rngs[c], seen[c], stop=8) for c in (a, b)))
    server.kill()  # SIGKILL: no drain, no goodbye; the bundled Redis keeps its AOF
    for client in (a, b):
        assert await client.closed() is not None

    again = moose_serve("--data-dir", data, port=server.port)
    resumed = {}
    for old, binary in ((a, True), (b, False)):
        new = await ws_client(again.url, None, binary=binary)
        welcome = await new.hello(token=old.token)
        assert welcome["games"] == [game]
        await new.request("sync", game=game, since=seen[old][-1]["seq"])
        resumed[old] = new
    await asyncio.gather(*(play_in_order(resumed[c], game, rngs[c], seen[c]) for c in (a, b)))
    await check_game(resumed[a], game, seat_a, seen[a])
    await check_game(resumed[b], game, seat_b, seen[b])


async def test_sigterm_drains_with_1012_and_exits_cleanly(moose_serve, ws_client, tmp_path):
    data = tmp_path / "data"
    server = moose_serve("--data-dir", str(data), "--drain-grace", "2")
    client = await ws_client(server.url, "ann")
    assert server.stop() == 0
    assert await client.closed() == 1012
    log = server.log.read_text()
    assert "listening on http://127.0.0.1" in log and "embedded valkey-server" in log
    assert "stopped" in log
    assert not (data / "redis" / "redis.sock").exists()  # the bundled Redis is gone too


def test_serve_help_lists_the_settings():
    out = subprocess.run(
        [sys.executable, "-m", "moose", "serve", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for flag in (
        "--redis",
        "--data-dir",
        "--turn-time",
        "--answer-time",
        "--away-after",
        "--match-wait",
        "--game-ttl",
        "--token-ttl",
        "--buckets",
        "--instance-ttl",
    ):
        assert flag in out.stdout
    assert "redis+cluster://" in out.stdout  # how to name a Redis Cluster


async def test_sigterm_closes_sockets_at_once_and_exits_within_the_grace(
    moose_serve, ws_client, redis_url
):
    # A grace far longer than the waits below: what happens within them happened
    # at once, not when the grace ran out, however busy the machine.
    grace = 120.0
    server = moose_serve("--redis", redis_url, "--drain-grace", str(grace))
    a, b = await ws_client(server.url, "ann"), await ws_client(server.url, "bob")
    await table_game([a, b])  # a game under way, with its deadline in Redis
    assert server.proc is not None
    server.proc.send_signal(signal.SIGTERM)
    assert await a.closed(timeout=30) == await b.closed(timeout=30) == 1012
    code = await asyncio.to_thread(server.proc.wait, 30)  # nothing held it
    assert code == 0


def _redis_child(server: Any) -> psutil.Process:
    """The embedded redis-server that `moose serve` started."""
    children = psutil.Process(server.proc.pid).children()
    (child,) = [c for c in children if c.exe() == redis_server_binary()]
    return child


def test_a_second_serve_on_the_same_data_dir_is_refused_and_the_first_keeps_redis(
    moose_serve, tmp_path
):
    data = str(tmp_path / "data")
    first = moose_serve("--data-dir", data)
    redis_pid = _redis_child(first).pid
    second = subprocess.run(
        [sys.executable, "-m", "moose", "serve", "--data-dir", data, "--port", str(free_port())],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 1, second.stdout + second.stderr
    assert f"is in use by another moose serve (pid {first.proc.pid})" in second.stderr
    assert "Traceback" not in second.stderr
    # Before, the second shut the first one's Redis down and started its own.
    assert _redis_child(first).pid == redis_pid
    with urllib.request.urlopen(f"{first.http}/readyz", timeout=5) as resp:
        assert resp.status == 200


def test_a_killed_serve_takes_its_embedded_redis_with_it(moose_serve, tmp_path):
    data = str(tmp_path / "data")
    server = moose_serve("--data-dir", data)
    redis = _redis_child(server)
    server.kill()  # SIGKILL: no cleanup of its own
    # The orphan used to run on until the next start shut it down.
    redis.wait(timeout=20)  # psutil.TimeoutExpired if it runs on
    assert not redis.is_running()
    assert "Received SIGTERM" in (tmp_path / "data" / "redis" / "redis.log").read_text()
    again = moose_serve("--data-dir", data, port=server.port)
    assert _redis_child(again).pid != redis.pid


def test_serve_runs_its_embedded_redis_with_the_appendfsync_asked_for(moose_serve, tmp_path):
    server = moose_serve("--data-dir", str(tmp_path / "data"), "--appendfsync", "always")
    sock = tmp_path / "data" / "redis" / "redis.sock"
    with redis.Redis(unix_socket_path=str(sock)) as r:
        assert r.config_get("appendfsync") == {"appendfsync": "always"}
    assert "appendfsync always" in server.log.read_text()
