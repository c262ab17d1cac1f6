"""The lean subscriber of pipe.py on real redis-servers: order, bytes, loss, keepalive, close."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import redis
from redis.exceptions import ConnectionError

from moose_server.storage.connection import NodePubSub, open_redis
from moose_server.storage.embedded import EmbeddedRedis
from moose_server.storage.pipe import PipePubSub, PipeSubscriber
from moose_server.storage.store import GAMES_CHANNEL, PLAYERS_CHANNEL

from helpers import until

Factory = Callable[..., EmbeddedRedis]


@pytest.fixture
async def subscribers() -> AsyncIterator[Callable[..., PipeSubscriber]]:
    """``s = subscribers(url, keepalive=...)``: every subscriber made is closed at the end."""
    made: list[PipeSubscriber] = []

    def make(url: str, **kwargs: Any) -> PipeSubscriber:
        made.append(PipeSubscriber(url, **kwargs))
        return made[-1]

    yield make
    for sub in made:
        await sub.aclose()


def subscriber_count(url: str) -> int:
    """How many clients of the server are in subscribed mode (CLIENT LIST sub=)."""
    with redis.Redis.from_url(url) as r:
        return sum(1 for c in r.client_list() if int(c.get("sub", 0)) > 0)


async def take(sub: PipeSubscriber, n: int, timeout: float = 10.0) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    async with asyncio.timeout(timeout):
        async for message in sub.listen():
            got.append(message)
            if len(got) == n:
                return got
    raise AssertionError("listen() ended")


async def test_messages_of_two_channels_arrive_in_order_with_their_bytes(
    private_redis, subscribers
):
    sub = subscribers(private_redis.url)
    await sub.subscribe(GAMES_CHANNEL, PLAYERS_CHANNEL)
    big = bytes(range(256)) * 400  # 100 KB, every byte value
    expected: list[tuple[bytes, bytes]] = []
    with redis.Redis.from_url(private_redis.url) as r:
        pipe = r.pipeline(transaction=False)
        for i in range(2000):
            if i % 3 == 0:
                pipe.publish(GAMES_CHANNEL, b"g_%d %d" % (i, i))
                expected.append((GAMES_CHANNEL, b"g_%d %d" % (i, i)))
            elif i % 3 == 1:
                data = b"\x92\xa3p_1\x81\xa1t\xa4move" + bytes([i % 256]) + b"\r\n\x00"
                pipe.publish(PLAYERS_CHANNEL, data)
                expected.append((PLAYERS_CHANNEL, data))
            else:
                pipe.publish(b"moose:other", b"not for us %d" % i)
            if i % 500 == 7:
                pipe.publish(PLAYERS_CHANNEL, big + b"%d" % i)
                expected.append((PLAYERS_CHANNEL, big + b"%d" % i))
        pipe.publish(b"", b"")  # the empty channel: not subscribed either
        pipe.publish(GAMES_CHANNEL, b"")
        expected.append((GAMES_CHANNEL, b""))
        receivers = pipe.execute()
    assert receivers[0] == 1 and receivers[2] == 0  # ours, then moose:other
    got = await take(sub, len(expected))
    assert [(m["channel"], m["data"]) for m in got] == expected
    assert all(m["type"] == "message" and type(m["data"]) is bytes for m in got)
    # Nothing else was queued: the other channels never arrived.
    with redis.Redis.from_url(private_redis.url) as r:
        r.publish(GAMES_CHANNEL, b"last")
    [last] = await take(sub, 1)
    assert last["data"] == b"last"


async def test_a_later_subscribe_adds_channels_and_str_names_work(redis_url, subscribers):
    sub = subscribers(redis_url)
    await sub.subscribe("moose:games")
    with redis.Redis.from_url(redis_url) as r:
        assert r.publish(PLAYERS_CHANNEL, b"before") == 0
        await sub.subscribe(PLAYERS_CHANNEL)  # confirmed: a publish now reaches it
        assert r.publish(PLAYERS_CHANNEL, b"after") == 1
        r.publish(GAMES_CHANNEL, b"g 1")
    got = await take(sub, 2)
    assert [(m["channel"], m["data"]) for m in got] == [
        (PLAYERS_CHANNEL, b"after"), (GAMES_CHANNEL, b"g 1")
    ]  # fmt: skip


async def test_the_url_gives_password_and_database(redis_factory, subscribers):
    server = redis_factory(appendonly=False)
    with redis.Redis(port=server.port) as r:
        r.config_set("requirepass", "pw")
    sub = subscribers(f"redis://:pw@127.0.0.1:{server.port}/3")
    await sub.subscribe(GAMES_CHANNEL)
    with redis.Redis(port=server.port, password="pw") as r:
        r.publish(GAMES_CHANNEL, b"g 1")
    assert (await take(sub, 1))[0]["data"] == b"g 1"
    with pytest.raises(redis.exceptions.AuthenticationError):
        await subscribers(f"redis://:wrong@127.0.0.1:{server.port}/0").subscribe(GAMES_CHANNEL)


async def test_a_lost_server_ends_listen_and_a_fresh_subscriber_works_after_a_restart(
    private_redis, subscribers
):
    sub = subscribers(private_redis.url)
    await sub.subscribe(GAMES_CHANNEL)
    with redis.Redis.from_url(private_redis.url) as r:
        r.publish(GAMES_CHANNEL, b"g 1")
    assert (await take(sub, 1))[0]["data"] == b"g 1"
    listening = asyncio.ensure_future(take(sub, 1))
    await asyncio.sleep(0.1)
    private_redis.kill()
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(listening, 5)
    with pytest.raises(ConnectionError):  # the subscriber is done
        await take(sub, 1)
    with pytest.raises(ConnectionError):  # nobody listens: the connect fails
        await subscribers(private_redis.url).subscribe(GAMES_CHANNEL)
    await asyncio.to_thread(private_redis.start)
    fresh = subscribers(private_redis.url)
    await fresh.subscribe(GAMES_CHANNEL)
    with redis.Redis.from_url(private_redis.url) as r:
        r.publish(GAMES_CHANNEL, b"g 2")
    assert (await take(fresh, 1))[0]["data"] == b"g 2"


async def test_messages_received_before_the_loss_are_still_yielded(redis_url, subscribers):
    sub = subscribers(redis_url)
    await sub.subscribe(GAMES_CHANNEL)
    with redis.Redis.from_url(redis_url) as r:
        for i in range(3):
            r.publish(GAMES_CHANNEL, b"g %d" % i)
        r.client_kill_filter(_type="pubsub")
    got: list[bytes] = []
    with pytest.raises(ConnectionError):
        async with asyncio.timeout(5):
            async for message in sub.listen():
                got.append(message["data"])
    assert got == [b"g 0", b"g 1", b"g 2"]


async def test_the_keepalive_pings_a_quiet_server_and_notices_one_that_stopped(
    redis_factory, subscribers
):
    server = redis_factory(appendonly=False)
    sub = subscribers(server.url, keepalive=0.1, timeout=0.4)
    await sub.subscribe(GAMES_CHANNEL)
    loop = asyncio.get_running_loop()
    start = loop.time()
    listening = asyncio.ensure_future(take(sub, 1))

    def pings() -> int:
        with redis.Redis(port=server.port) as r:
            stats = r.info("commandstats").get("cmdstat_ping", {"calls": 0})
            return int(stats["calls"])

    # Quiet, but answering: PINGs go out (more than one: each answer came back),
    # nothing fails, and no faster than one per quiet interval.
    await until(lambda: asyncio.to_thread(lambda: pings() >= 3), timeout=30)
    assert pings() <= (loop.time() - start) / 0.1 + 1
    assert not listening.done()
    with redis.Redis(port=server.port) as r:
        [mine] = [c for c in r.client_list() if int(c.get("sub", 0)) > 0]
        assert mine["cmd"] == "ping"
    assert server.process is not None
    os.kill(server.process.pid, signal.SIGSTOP)
    try:  # stopped: the next PING goes unanswered; well before 5 s the listener knows
        with pytest.raises(ConnectionError, match="PING"):
            await asyncio.wait_for(listening, 5)
    finally:
        os.kill(server.process.pid, signal.SIGCONT)


async def test_leaving_the_context_closes_the_connection(redis_url):
    assert subscriber_count(redis_url) == 0
    async with PipeSubscriber(redis_url) as sub:
        await sub.subscribe(GAMES_CHANNEL, PLAYERS_CHANNEL)
        assert subscriber_count(redis_url) == 1
        listening = asyncio.ensure_future(take(sub, 1))
        await asyncio.sleep(0.05)
    with pytest.raises(ConnectionError):  # a listener still waiting is told
        await asyncio.wait_for(listening, 5)
    async with asyncio.timeout(5):
        while subscriber_count(redis_url):
            await asyncio.sleep(0.01)
    with pytest.raises(ConnectionError):
        await sub.subscribe(GAMES_CHANNEL)


async def test_the_source_gives_a_new_subscriber_each_time_and_closes_them(redis_url):
    source = PipePubSub(redis_url, keepalive=5)
    first, second = source.pubsub(), source.pubsub()
    assert first is not second
    await first.subscribe(GAMES_CHANNEL)
    await second.subscribe(GAMES_CHANNEL)
    async with source.pubsub() as third:
        await third.subscribe(GAMES_CHANNEL)
        assert subscriber_count(redis_url) == 3
    assert len(source.open) == 2  # the third closed itself
    await source.aclose()
    assert not source.open and not first.subscribed and not second.subscribed
    async with asyncio.timeout(5):
        while subscriber_count(redis_url):
            await asyncio.sleep(0.01)
    with pytest.raises(ValueError):
        PipePubSub("rediss://127.0.0.1:6380")


async def test_a_single_node_with_the_pipe_subscribes_through_it(redis_url, redis_cluster):
    backend = await open_redis(redis_url, 8, pipe=True)
    try:
        assert isinstance(backend.pubsub, PipePubSub)
        async with backend.pubsub.pubsub() as sub:
            await sub.subscribe(GAMES_CHANNEL)
            await backend.redis.publish(GAMES_CHANNEL, b"g_1 1")
            assert (await take(sub, 1))[0]["data"] == b"g_1 1"
        leftover = backend.pubsub.pubsub()
        await leftover.subscribe(GAMES_CHANNEL)
    finally:
        await backend.aclose()
    assert not leftover.subscribed  # closed with the backend
    off = await open_redis(redis_url, 8, pipe=False)
    cluster = await open_redis(redis_cluster.url, 8, pipe=True)
    try:
        assert not isinstance(off.pubsub, PipePubSub)  # redis-py's client
        assert isinstance(cluster.pubsub, NodePubSub)
    finally:
        await off.aclose()
        await cluster.aclose()


async def test_a_listener_far_behind_pauses_reading_and_still_gets_everything(
    redis_url, subscribers
):
    sub = subscribers(redis_url, keepalive=0.05, timeout=0.1)
    await sub.subscribe(GAMES_CHANNEL)
    n = 30_000
    with redis.Redis.from_url(redis_url) as r:
        pipe = r.pipeline(transaction=False)
        for i in range(n):
            pipe.publish(GAMES_CHANNEL, b"g_%d %d" % (i, i))
        pipe.execute()
    async with asyncio.timeout(10):
        while not sub._conn.paused:  # nobody takes them: reading stops past the backlog
            await asyncio.sleep(0.01)
    queued = len(sub._conn.messages)
    await asyncio.sleep(0.3)  # longer than keepalive + timeout: a paused socket is not dead
    assert len(sub._conn.messages) == queued and sub.subscribed
    got = await take(sub, n)
    assert [m["data"] for m in got] == [b"g_%d %d" % (i, i) for i in range(n)]
    assert not sub._conn.paused
