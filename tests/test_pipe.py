"""The pipelined Redis connection on real redis-servers: order, errors, NOSCRIPT, auth, loss."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from aiohttp import web
from redis.exceptions import (
    AuthenticationError,
    ConnectionError,
    DataError,
    RedisError,
    ResponseError,
    TimeoutError,
)

from moose_server.app import create_app
from moose_server.net.ws import SERVICES
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.embedded import EmbeddedRedis, free_port
from moose_server.storage.pipe import Pipe
from moose_server.storage.store import Store, connect

from helpers import table_game

Factory = Callable[..., EmbeddedRedis]


@pytest.fixture
async def pipes() -> AsyncIterator[Callable[..., Pipe]]:
    """``p = pipes(url, timeout=...)``: every pipe made is closed at the end."""
    made: list[Pipe] = []

    def make(url: str, **kwargs: Any) -> Pipe:
        made.append(Pipe(url, **kwargs))
        return made[-1]

    yield make
    for pipe in made:
        await pipe.aclose()


def test_supports_plain_tcp_and_unix_sockets_only() -> None:
    assert Pipe.supports("redis://127.0.0.1:6379/0") and Pipe.supports("unix:///tmp/r.sock")
    for url in ("rediss://h:6380", "redis+cluster://h:1,h:2", "http://h"):
        assert not Pipe.supports(url)
        with pytest.raises(ValueError):
            Pipe(url)


async def test_concurrent_calls_get_their_own_replies_in_order(private_redis, pipes):
    pipe = pipes(private_redis.url)
    big = bytes(range(256)) * 400  # 100 KB, every byte value
    calls: list[tuple[Any, ...]] = []
    expected: list[Any] = []
    for i in range(500):
        if i % 5 == 0:
            calls.append(("INCR", "counter"))
            expected.append(i // 5 + 1)
        elif i % 5 == 1:
            calls.append(("ECHO", f"payload {i} é"))
            expected.append(f"payload {i} é".encode())
        elif i % 5 == 2:
            calls.append((b"ECHO", big + str(i).encode()))
            expected.append(big + str(i).encode())
        elif i % 5 == 3:
            calls.append(("SET", f"k{i}", i))
            expected.append(b"OK")
        else:
            calls.append(("HMGET", "nohash", "a", "b"))
            expected.append([None, None])
    got = await asyncio.gather(*(pipe.call(*c) for c in calls))
    assert got == expected
    # Every caller shared one connection, opened once.
    ids = await asyncio.gather(*(pipe.call("CLIENT", "ID") for _ in range(50)))
    assert len(set(ids)) == 1
    assert await pipe.call("GET", "k3") == b"3"
    assert await pipe.call("MGET", "k3", "k8", "nope") == [b"3", b"8", None]


async def test_a_turn_s_first_command_goes_out_at_once_and_the_rest_when_it_ends(redis_url, pipes):
    """Redis gets a loop turn's first command while the turn still runs; the turn's
    later commands share one write when it ends. Replies come back in order."""
    pipe = pipes(redis_url)
    await pipe.call("PING")  # connected
    conn = pipe._conn
    assert conn is not None
    look = redis.Redis.from_url(redis_url)  # blocks this loop: no turn ends meanwhile
    try:
        first = conn.send(("SET", "first", "1"))
        second = conn.send(("SET", "second", "2"))
        # The first is in Redis (read until it is: the loop cannot write meanwhile).
        for _ in range(200):
            if look.get("first") == b"1":
                break
        assert look.get("first") == b"1"
        assert look.get("second") is None  # still in our buffer: the turn has not ended
    finally:
        look.close()
    assert await asyncio.gather(first, second) == [b"OK", b"OK"]
    assert await pipe.call("MGET", "first", "second") == [b"1", b"2"]


async def test_an_error_reply_fails_only_its_caller(redis_url, pipes):
    pipe = pipes(redis_url)
    await pipe.call("SET", "s", "text")
    replies = await asyncio.gather(
        pipe.call("INCR", "n"), pipe.call("INCR", "s"), pipe.call("INCR", "n"),
        pipe.call("NOSUCHCOMMAND"), pipe.call("GET", "s"),
        return_exceptions=True,
    )  # fmt: skip
    assert replies[0] == 1 and replies[2] == 2 and replies[4] == b"text"
    assert isinstance(replies[1], ResponseError) and "not an integer" in str(replies[1])
    assert isinstance(replies[3], ResponseError) and "unknown command" in str(replies[3])
    assert await pipe.call("INCR", "n") == 3  # the connection goes on


async def test_error_replies_raise_what_redis_py_raises(redis_factory, pipes):
    server = redis_factory(appendonly=False)
    url = f"redis://127.0.0.1:{server.port}/0"
    with redis.Redis(port=server.port) as r:
        r.set("s", "text")
        r.execute_command("ACL", "SETUSER", "reader", "on", ">pw", "~*", "+get")
    commands = [("INCR", "s"), ("SADD", "s", "x"), ("NOSUCHCOMMAND",), ("EVALSHA", "0" * 40, 0)]
    limited = f"redis://reader:pw@127.0.0.1:{server.port}/0"
    for source, command in [(url, c) for c in commands] + [(limited, ("SET", "s", "y"))]:
        with redis.Redis.from_url(source) as r, pytest.raises(RedisError) as theirs:
            r.execute_command(*command)
        with pytest.raises(RedisError) as ours:
            await pipes(source).call(*command)
        assert type(ours.value) is type(theirs.value), command
        assert str(ours.value) == str(theirs.value), command


async def test_call_many_sends_every_command_and_answers_in_order(redis_url, pipes):
    pipe = pipes(redis_url)
    replies = await pipe.call_many([("SADD", "k", "a"), ("SADD", "k", "b", "a"), ("SCARD", "k")])
    assert replies == [1, 1, 2]
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        await pipe.call_many([("SET", "t", "x"), ("SADD", "t", "y"), ("SET", "u", "z")])
    # The error failed the batch's answer only: every command reached Redis.
    assert await pipe.call_many([("GET", "t"), ("GET", "u")]) == [b"x", b"z"]
    assert await pipe.call_many([]) == []


async def test_an_argument_of_another_type_is_refused_before_anything_is_sent(redis_url, pipes):
    pipe = pipes(redis_url)
    before = asyncio.ensure_future(pipe.call("ECHO", "before"))
    with pytest.raises(DataError):
        await pipe.call("SET", "k", None)
    with pytest.raises(DataError):
        await pipe.call("SET", "k", True)
    assert await before == b"before"
    assert await pipe.call("SET", "k", 1.5) == b"OK" and await pipe.call("GET", "k") == b"1.5"


async def test_evalsha_survives_a_script_flush(redis_url, pipes):
    pipe = pipes(redis_url)
    script = "redis.call('INCR', KEYS[1]); return {ARGV[1], tonumber(redis.call('GET', KEYS[1]))}"
    assert await pipe.evalsha(script, ["c"], ["a"]) == [b"a", 1]
    assert await pipe.evalsha(script, ["c"], [b"b"]) == [b"b", 2]
    await pipe.call("SCRIPT", "FLUSH")
    got = await asyncio.gather(*(pipe.evalsha(script, ["c"], [i]) for i in range(20)))
    assert got == [[str(i).encode(), 3 + i] for i in range(20)]
    with redis.Redis.from_url(redis_url) as r:
        assert r.script_exists(redis.Redis().register_script(script).sha) == [True]
    await pipe.call("SET", "s", "x")
    with pytest.raises(ResponseError, match="not an integer"):  # a script's error is not NOSCRIPT
        await pipe.evalsha("return redis.call('INCR', KEYS[1])", ["s"], [])


async def test_the_url_gives_user_password_and_database(redis_factory, pipes):
    server = redis_factory(appendonly=False)
    with redis.Redis(port=server.port) as r:
        r.execute_command("ACL", "SETUSER", "moose", "on", ">s3cret", "~*", "&*", "+@all")
        r.config_set("requirepass", "pw")
    port = server.port
    default = pipes(f"redis://:pw@127.0.0.1:{port}/3")
    user = pipes(f"redis://moose:s3cret@127.0.0.1:{port}/3")
    await default.call("SET", "where", "db3")
    assert await user.call("GET", "where") == b"db3"
    assert await user.call("ACL", "WHOAMI") == b"moose"
    assert b" db=3 " in await default.call("CLIENT", "INFO")
    with redis.Redis(port=port, password="pw", db=0) as r:
        assert r.get("where") is None
    with pytest.raises(AuthenticationError):
        await pipes(f"redis://:wrong@127.0.0.1:{port}/0").call("PING")
    with pytest.raises(AuthenticationError):
        await pipes(f"redis://127.0.0.1:{port}/0").call("PING")  # NOAUTH


async def test_a_lost_server_fails_pending_calls_and_a_restart_is_picked_up(private_redis, pipes):
    pipe = pipes(private_redis.url)
    assert await pipe.call("SET", "k", "1") == b"OK"
    pending = [asyncio.ensure_future(pipe.call("BLPOP", "list", 0)) for _ in range(3)]
    await asyncio.sleep(0.1)
    private_redis.kill()
    for call in pending:
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(call, 5)
    with pytest.raises(ConnectionError):  # nobody listens: the reconnect fails
        await pipe.call("PING")
    await asyncio.to_thread(private_redis.start)
    assert await pipe.call("PING") == b"PONG"
    many = await asyncio.gather(*(pipe.call("ECHO", str(i)) for i in range(100)))
    assert many == [str(i).encode() for i in range(100)]


async def test_a_late_reply_times_out_every_pending_call(redis_url, pipes):
    pipe = pipes(redis_url, timeout=0.3)
    first = await pipe.call("CLIENT", "ID")
    loop = asyncio.get_running_loop()
    start = loop.time()
    stuck = asyncio.gather(
        pipe.call("BLPOP", "list", 10), pipe.call("PING"), return_exceptions=True
    )
    replies = await asyncio.wait_for(stuck, 5)  # well before the BLPOP's 10 s are up
    assert all(isinstance(r, TimeoutError) for r in replies), replies
    assert loop.time() - start >= 0.3  # not before the timeout
    assert await pipe.call("CLIENT", "ID") != first  # a new connection
    assert await pipe.call("PING") == b"PONG"


async def test_a_cancelled_caller_leaves_the_others_their_replies(redis_url, pipes):
    pipe = pipes(redis_url)
    await pipe.call("PING")
    slow = asyncio.ensure_future(pipe.call("BLPOP", "list", 0.3))
    after = asyncio.ensure_future(pipe.call("ECHO", "mine"))
    await asyncio.sleep(0.05)
    slow.cancel()
    assert await after == b"mine"
    assert await pipe.call("ECHO", "next") == b"next"


async def test_aclose_fails_pending_calls(redis_url, pipes):
    pipe = pipes(redis_url)
    await pipe.call("PING")
    pending = asyncio.ensure_future(pipe.call("BLPOP", "list", 0))
    await asyncio.sleep(0.05)
    await pipe.aclose()
    with pytest.raises(ConnectionError):
        await pending
    with pytest.raises(ConnectionError):
        await pipe.call("PING")


async def test_aclose_during_the_connect(redis_url, pipes):
    pipe = pipes(redis_url)
    calls = [asyncio.ensure_future(pipe.call("PING")) for _ in range(5)]
    await asyncio.sleep(0)
    await pipe.aclose()
    for call in calls:
        with pytest.raises(ConnectionError):
            await call


# -- the Store with a pipe ---------------------------------------------------------

EV = ({"kind": "move", "seat": 0}, {"turn": 1})


async def _scenario(store: Store, game: str) -> list[Any]:
    """Commits and loads covering ok, dup and stale; the parts that do not depend on time."""
    field = store.move_field_of("p_1", "m-1")
    out: list[Any] = []
    first = await store.commit(game, 0, "", {"n": 0}, [EV, EV], 60_000)
    out.append((first.status, first.seq, first.deadline - first.now))
    again = await store.commit(game, 2, field, {"n": 1}, [EV], -1)
    out.append((again.status, again.seq, again.deadline == first.deadline))
    for expected, data in ((2, {"n": 9}), (3, {"n": 9}), (0, b"\x80")):
        c = await store.commit(game, expected, field, data, [EV], 0)
        out.append((c.status, c.seq, c.now > 0 if c.status == "ok" else c.now, c.deadline))
    stale = await store.commit(game, 1, "", {"n": 5}, [(EV[0], b"\x81\xa1s\x01")], 0)
    out.append((stale.status, stale.seq, stale.now, stale.deadline))
    for name, move_field in ((game, ""), (game, field), (game, "m:p_2:x"), ("g_none", field)):
        loaded = await store.load(name, move_field or None)
        since = loaded.deadline - first.now if loaded.deadline else 0
        out.append(dataclasses.replace(loaded, deadline=since))
    out.append([(e.seq, e.event, e.state, e.deadline > 0) for e in await store.events(game)])
    return out


async def test_store_commit_and_load_match_with_and_without_the_pipe(redis_url, pipes):
    client = connect(redis_url, 8)
    try:
        plain = Store(client, 16)
        piped = Store(client, 16, pipes(redis_url))
        assert await _scenario(piped, "g_piped") == await _scenario(plain, "g_plain")
        result = await _scenario(plain, "g_plain2")
        assert [r[0] for r in result[:5]] == ["ok", "ok", "dup", "dup", "dup"]
        assert result[5][0] == "stale"
        # Both see the same game whichever path wrote it.
        assert await piped.load("g_plain") == await plain.load("g_plain")
    finally:
        await client.aclose()


async def test_store_falls_back_to_redis_py_when_the_pipe_fails(redis_url, pipes):
    client = connect(redis_url, 8)
    try:
        nowhere = pipes(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens there
        store = Store(client, 16, nowhere)
        c = await store.commit("g_1", 0, "", {"n": 1}, [EV], 0)
        assert (c.status, c.seq) == ("ok", 1)
        loaded = await store.load("g_1")
        assert (loaded.version, loaded.data) == (1, {"n": 1})
        # A pipe that times out: the same commit is sent again through redis-py.
        slow = pipes(redis_url, timeout=0.2)
        store = Store(client, 16, slow)
        blocker = asyncio.ensure_future(slow.call("BLPOP", "list", 5))
        c = await store.commit("g_1", 1, "m:p:1", {"n": 2}, [EV], 0)
        assert (c.status, c.seq) == ("ok", 2)
        with pytest.raises(TimeoutError):
            await blocker
        assert (await store.load("g_1", "m:p:1")).dup == 2
    finally:
        await client.aclose()


async def test_a_redis_py_client_and_the_pipe_agree_on_raw_replies(redis_url, pipes):
    pipe = pipes(redis_url)
    r = aioredis.Redis.from_url(redis_url)
    try:
        await r.hset("h", mapping={"v": 3, "data": b"\x00\xff", "dl": 0})
        assert await pipe.call("HMGET", "h", "v", "data", "dl", "x") == await r.hmget(
            "h", ["v", "data", "dl", "x"]
        )
    finally:
        await r.aclose()


# -- wiring: which backends get a pipe -------------------------------------------------


async def test_a_single_node_gets_a_pipe_unless_turned_off(redis_url, redis_cluster):
    backend = await open_redis(redis_url, 8, pipe=True)
    try:
        assert backend.pipe is not None and await backend.pipe.call("PING") == b"PONG"
    finally:
        await backend.aclose()
    with pytest.raises(ConnectionError):  # closed with the backend
        await backend.pipe.call("PING")
    off = await open_redis(redis_url, 8, pipe=False)
    cluster = await open_redis(redis_cluster.url, 8, pipe=True)
    try:
        assert off.pipe is None
        assert cluster.cluster and cluster.pipe is None  # the cluster path is redis-py's
    finally:
        await off.aclose()
        await cluster.aclose()


def test_the_setting_reads_the_environment() -> None:
    assert Settings().redis_pipe is True
    assert Settings.from_env({"MOOSE_REDIS_PIPE": "0"}).redis_pipe is False
    assert Settings.from_env({"MOOSE_REDIS_PIPE": "true"}).redis_pipe is True
    with pytest.raises(ValueError, match="MOOSE_REDIS_PIPE"):
        Settings.from_env({"MOOSE_REDIS_PIPE": "maybe"})


@pytest.mark.parametrize("on", [True, False])
async def test_a_server_commits_moves_through_its_pipe(redis_url, tmp_path, ws_client, on):
    port = free_port()
    settings = Settings(
        host="127.0.0.1", port=port, redis_url=redis_url, data_dir=str(tmp_path), redis_pipe=on
    )
    app = create_app(settings)
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
        url = f"ws://127.0.0.1:{port}/ws"
        clients = [await ws_client(url, "alice"), await ws_client(url, "bob")]
        game, _ = await table_game(clients)
        store = app[SERVICES].store
        assert (store.pipe is not None) is on
        if on:
            assert store.pipe._conn is not None  # connected on first use: it was used
        assert (await store.load(game)).version >= 1
    finally:
        await runner.cleanup()
    if on:
        with pytest.raises(ConnectionError):  # closed at shutdown
            await store.pipe.call("PING")
