"""The gateway and its Batcher on real redis-servers, one node and a cluster: batches, errors,
NOSCRIPT, loss."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis
from redis.crc import key_slot
from redis.exceptions import ConnectionError, DataError, NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from moose_server.storage.batch import Batcher
from moose_server.storage.connection import open_redis
from moose_server.storage.embedded import free_port
from moose_server.storage.gateway import Gateway
from moose_server.storage.scripts import CommitCall
from moose_server.storage.shards import Lane, Shards, key_of
from moose_server.storage.store import Store, connect

from helpers import RedisClusterNodes
from helpers.cluster import SLOTS
from helpers.relay import Relay

EV = ({"kind": "move", "seat": 0}, {"turn": 1})


@pytest.fixture
async def backend(backend_url: str) -> AsyncIterator[Gateway]:
    """The server's gateway on one redis-server, then on a Redis Cluster."""
    backend = await open_redis(backend_url, 8)
    yield backend
    await backend.aclose()


def tune(gateway: Gateway, window: float, busy: float) -> None:
    """Set the window and the busy time of the gateway's batcher, or of every lane
    of a cluster's (Shards: those made so far and those made later)."""
    batch = gateway.batch
    for one in [batch, *(batch.lanes if isinstance(batch, Shards) else [])]:
        one.window, one.busy = window, busy


def _script(source: str) -> tuple[str, str]:
    """(sha, source) of a script, as the gateway registers one."""
    return hashlib.sha1(source.encode()).hexdigest(), source


def admins(backend_url: str, cluster: RedisClusterNodes | None) -> list[redis.Redis]:
    """A plain client on every node of the backend."""
    if cluster is None:
        return [redis.Redis.from_url(backend_url)]
    return [redis.Redis(port=node.port) for node in cluster.nodes]


async def test_the_commands_of_one_turn_go_in_one_batch(backend):
    batch = backend
    got = await asyncio.gather(*(batch.call("INCR", "{t}n") for _ in range(50)))
    assert got == list(range(1, 51))  # in the order sent
    assert batch.batches == 1
    first = asyncio.ensure_future(batch.call("RPUSH", "{t}list", "a"))
    while batch.batches < 2:  # the first batch is on its way: the next two wait for it
        await asyncio.sleep(0)
    later = [batch.call("RPUSH", "{t}list", x) for x in "bc"]
    assert await first == 1 and await asyncio.gather(*later) == [2, 3]
    assert batch.batches == 3
    assert await batch.call("LRANGE", "{t}list", 0, -1) == [b"a", b"b", b"c"]


async def test_commands_of_later_turns_within_the_window_join_the_batch(backend):
    batch = backend
    # A wide window (a slow machine's loop turns stay inside it); the answer just
    # read makes the batcher (the key's lane on a cluster) busy.
    tune(batch, window=0.2, busy=60.0)

    async def incr() -> object:
        return await batch.call("INCR", "{t}w")

    assert await batch.call("GET", "{t}w") is None
    first = asyncio.ensure_future(incr())
    for _ in range(3):
        await asyncio.sleep(0)
    assert await asyncio.gather(first, batch.call("INCR", "{t}w")) == [1, 2]
    assert batch.batches == 2


async def test_an_idle_batchers_command_does_not_wait_for_the_window(backend):
    batch = backend
    tune(batch, window=3600.0, busy=0.0)  # idle: no answer counts as recent; a wait
    # would outlast the test's bound

    async def incr() -> object:
        return await batch.call("INCR", "{t}i")

    async with asyncio.timeout(30):
        assert await asyncio.ensure_future(incr()) == 1
        assert await asyncio.ensure_future(incr()) == 2


async def test_a_chain_of_round_trips_of_one_task_does_not_wait_for_the_window(backend):
    batch = backend
    assert await batch.call("INCR", "{t}c") == 1
    tune(batch, window=3600.0, busy=3600.0)  # busy: a wait would outlast the test's bound
    async with asyncio.timeout(30):
        for n in range(2, 5):
            assert await batch.call("INCR", "{t}c") == n
    assert batch.batches == 4


async def test_one_batch_is_one_connection_on_one_node(redis_url):
    backend = await open_redis(redis_url, 8)
    try:
        ids = await asyncio.gather(*(backend.call("CLIENT", "ID") for _ in range(20)))
        assert len(set(ids)) == 1 and backend.batches == 1
    finally:
        await backend.aclose()


async def test_an_error_reaches_only_its_caller(backend):
    batch = backend
    await batch.call("SET", "{t}s", "text")
    # Commands sent again one by one run side by side, in no set order: one key each.
    calls = [
        ("INCR", "{t}n"),
        ("INCR", "{t}s"),
        ("INCRBY", "{t}m", 2),
        ("NOSUCHCOMMAND",),
        ("SET", "{t}k", None),
        ("GET", "{t}s"),
    ]
    got = await asyncio.gather(*(batch.call(*c) for c in calls), return_exceptions=True)
    assert got[0] == 1 and got[2] == 2 and got[5] == b"text"
    assert isinstance(got[1], ResponseError)  # an error reply
    # A command no node knows (a cluster cannot even route it), and one that
    # cannot be encoded: the batch is sent again command by command.
    assert isinstance(got[3], Exception) and isinstance(got[4], DataError)
    with pytest.raises(ResponseError):
        await batch.all([batch.set("{t}a", "x"), batch.sadd("{t}a", "y"), batch.set("{t}b", "z")])
    assert await batch.all([batch.get("{t}a"), batch.get("{t}b")]) == [b"x", b"z"]
    assert await batch.all([]) == []


async def test_a_script_unknown_to_its_node_is_sent_with_eval(backend):
    batch = backend.batch
    script = _script("return {ARGV[1], redis.call('INCR', KEYS[1])}")
    assert await batch.script(*script, ["{t}c"], ["a"]) == [b"a", 1]
    await backend.client.script_flush()  # every primary of a cluster
    got = await asyncio.gather(*(batch.script(*script, [f"{{{i}}}c"], [i]) for i in range(20)))
    assert got == [[str(i).encode(), 1] for i in range(20)]
    before = batch.batches
    assert await batch.script(*script, ["{t}c"], ["b"]) == [b"b", 2]
    assert batch.batches == before + 1  # known again where the EVAL ran: no second try
    await backend.set("{t}s", "x")
    with pytest.raises(ResponseError) as caught:
        await batch.script(*_script("return redis.call('INCR', KEYS[1])"), ["{t}s"], [])
    assert not isinstance(caught.value, NoScriptError)


async def test_lost_connections_cost_no_command_an_error(backend, backend_url, request):
    cluster = request.getfixturevalue("redis_cluster") if backend.cluster else None
    batch = backend
    assert await batch.all([batch.call("INCR", f"{{{i}}}n") for i in range(12)]) == [1] * 12
    for admin in admins(backend_url, cluster):
        with admin:
            admin.client_kill_filter(_type="normal")  # every connection of the batcher
    got = await asyncio.gather(*(batch.call("INCR", f"{{{i}}}n") for i in range(12)))
    assert got == [2] * 12


async def test_a_redis_restart_costs_no_command_an_error(redis_factory):
    server = redis_factory()
    backend = await open_redis(server.url, 4)
    try:
        assert await backend.ping() == b"PONG"
        await asyncio.to_thread(server.stop)
        await asyncio.to_thread(server.start)
        counts = await asyncio.gather(*(backend.call("INCR", "n") for _ in range(8)))
        assert counts == [*range(1, 9)]
    finally:
        await backend.aclose()


async def test_a_failed_batch_fails_every_caller_in_it():
    client = connect(f"redis://127.0.0.1:{free_port()}/0", 4)  # nobody listens there
    batch = Batcher(client)
    try:
        got = await asyncio.gather(
            *(batch.send(("PING",)) for _ in range(3)), return_exceptions=True
        )
        assert all(isinstance(e, ConnectionError) for e in got) and batch.batches == 1
    finally:
        await client.aclose()


async def test_a_batch_without_a_reply_in_time_fails_its_callers_and_no_late_reply_is_read(
    redis_url,
):
    # The client has no socket timeout, as the server's batcher (connection.py):
    # the batch's own bound is all there is.
    client = connect(redis_url, 4, timeout=None)
    batch = Batcher(client, timeout=0.1)
    admin = redis.Redis.from_url(redis_url)
    try:
        assert await batch.send(("PING",)) == b"PONG"  # replies as Redis gives them
        admin.client_pause(500, all=True)  # Redis answers nobody for 0.5 s
        got = await asyncio.gather(
            batch.send(("ECHO", "late")), batch.send(("INCR", "n")), return_exceptions=True
        )
        assert [type(e) for e in got] == [RedisTimeoutError] * 2, got
        assert "no reply from Redis in 0.1 s" in str(got[0])
        # The next batch leaves at once, while Redis still holds the late replies: on
        # the same connection, "late" and the INCR's count would be read as its own.
        # (Whether the late commands ran is not known: as after any lost connection,
        # every command the server sends is safe to send twice.)
        batch.timeout = 30.0
        next_ones = [batch.send(("ECHO", "next")), batch.send(("ECHO", "after"))]
        assert await asyncio.gather(*next_ones) == [b"next", b"after"]
    finally:
        admin.close()
        await batch.aclose()
        await client.aclose()


async def test_the_bound_is_each_batchs_own(redis_url):
    # The watchdog set for an earlier batch cuts no later one short, and still times
    # out a batch that comes after many.
    client = connect(redis_url, 4, timeout=None)
    batch = Batcher(client, timeout=0.1)
    admin = redis.Redis.from_url(redis_url)
    try:
        loop = asyncio.get_running_loop()
        began, n = loop.time(), 0
        while loop.time() < began + 0.25:  # past two bounds, batch after batch
            n += 1
            assert await batch.send(("INCR", "n")) == n
        admin.client_pause(200, all=True)
        with pytest.raises(RedisTimeoutError):
            await batch.send(("INCR", "n"))
        batch.timeout = 30.0
        assert await batch.send(("ECHO", "next")) == b"next"
    finally:
        admin.close()
        await batch.aclose()
        await client.aclose()


async def test_an_error_reply_reaches_its_caller_and_the_connection_stays(redis_url):
    client = connect(redis_url, 4, timeout=None)
    batch = Batcher(client)
    unknown = _script("return redis.call('INCR', KEYS[1])")
    try:
        conn = await batch.send(("CLIENT", "ID"))
        await batch.send(("SET", "s", "text"))
        got = await asyncio.gather(
            batch.send(("INCR", "n")),
            batch.send(("INCR", "s")),
            batch.script(*unknown, ["m"], []),  # NOSCRIPT, then EVAL in the next batch
            batch.send(("HGET", "s", "f")),
            batch.send(("INCR", "n")),
            return_exceptions=True,
        )
        assert got[0] == 1 and got[2] == 1 and got[4] == 2
        assert isinstance(got[1], ResponseError) and "not an integer" in str(got[1])
        assert isinstance(got[3], ResponseError) and "WRONGTYPE" in str(got[3])
        assert await batch.send(("CLIENT", "ID")) == conn  # error replies drop no connection
    finally:
        await batch.aclose()
        await client.aclose()


async def test_a_batch_whose_connection_is_killed_is_sent_once_more(redis_url):
    client = connect(redis_url, 4, timeout=None)
    batch = Batcher(client)
    admin = aioredis.Redis.from_url(redis_url)

    async def kill_blocked(times: int) -> None:
        """Kill the connection of the batch's BLPOP while it waits, `times` times."""
        for _ in range(times):
            while not (found := [c for c in await admin.client_list() if c["cmd"] == "blpop"]):
                await asyncio.sleep(0.005)
            await admin.client_kill_filter(_id=found[0]["id"])

    def blocked_batch() -> asyncio.Future[list[object]]:
        # Redis runs the INCR only after the BLPOP: a killed connection never ran it.
        return asyncio.gather(
            batch.send(("BLPOP", "q", 0.2)),
            batch.send(("INCR", "n")),
            batch.send(("CLIENT", "ID")),
            return_exceptions=True,
        )

    try:
        first = await batch.send(("CLIENT", "ID"))
        pending = blocked_batch()
        await kill_blocked(1)
        popped, n, conn = await pending
        assert popped is None and n == 1 and conn != first  # sent again on a new one
        assert batch.batches == 2
        pending = blocked_batch()
        await kill_blocked(2)  # the second connection too: no third try
        assert [type(e) for e in await pending] == [ConnectionError] * 3
        assert await batch.send(("INCR", "n")) == 2  # and the next batch goes on
    finally:
        await admin.aclose()
        await batch.aclose()
        await client.aclose()


async def test_a_cancelled_caller_leaves_the_others_their_replies(redis_url):
    client = connect(redis_url, 4)
    batch = Batcher(client)
    try:
        slow = asyncio.ensure_future(
            batch.send(
                (
                    "BLPOP",
                    "list",
                    0.3,
                )
            )
        )
        after = asyncio.ensure_future(
            batch.send(
                (
                    "ECHO",
                    "mine",
                )
            )
        )
        await asyncio.sleep(0.05)
        slow.cancel()
        assert await after == b"mine"
        assert (
            await batch.send(
                (
                    "ECHO",
                    "next",
                )
            )
            == b"next"
        )
    finally:
        await client.aclose()


async def test_aclose_lets_queued_commands_finish_and_refuses_new_ones(redis_url):
    client = connect(redis_url, 4)
    batch = Batcher(client)
    try:
        pending = asyncio.ensure_future(
            batch.send(
                (
                    "BLPOP",
                    "list",
                    0.2,
                )
            )
        )
        queued = asyncio.ensure_future(
            batch.send(
                (
                    "ECHO",
                    "queued",
                )
            )
        )
        await asyncio.sleep(0.05)
        await batch.aclose()
        assert await pending is None and await queued == b"queued"
        with pytest.raises(ConnectionError):
            await batch.send(("PING",))
    finally:
        await client.aclose()


async def test_a_store_sends_its_frequent_calls_through_the_batcher(backend):
    store = Store(backend, 16)
    c = await store.commit(
        CommitCall(game="g_1", expected=0, data={"n": 1}, events=[EV, EV], deadline_ms=0)
    )
    before = backend.batches
    assert before >= 1  # the commit (and its EVAL, where Redis had no script yet)
    loaded, events = await asyncio.gather(store.load("g_1"), store.events("g_1"))
    assert (c.status, loaded.version, [e.seq for e in events]) == ("ok", 2, [1, 2])
    assert events[0].event == EV[0] and events[0].state == EV[1]
    assert backend.batches == before + 1  # the load and the read together


# -- TLS (the bundled redis-server has none: a relay speaks it) --------------------------


@pytest.fixture
def tls_context(tmp_path: Path) -> ssl.SSLContext:
    """A server context with a self-signed certificate made by openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    command = [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        str(key),
        "-out",
        str(cert),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


@pytest.mark.slow  # tls_context runs openssl
async def test_a_store_over_tls_batches_its_calls(redis_server, redis_url, tls_context):
    async with Relay(redis_server.port, tls_context) as relay:
        url = f"rediss://127.0.0.1:{relay.port}/0?ssl_cert_reqs=none"
        backend = await open_redis(url, 4)
        try:
            assert not backend.cluster
            store = Store(backend, 16)
            await store.commit(
                CommitCall(game="g_tls", expected=0, data={"n": 1}, events=[EV], deadline_ms=0)
            )
            assert (await store.load("g_tls")).version == 1 and backend.batches >= 2
        finally:
            await backend.aclose()


def test_a_command_is_laned_by_its_first_key():
    assert key_of(("GET", "{b1}g")) == "{b1}g"
    assert key_of(("EVALSHA", "abc", 2, "{b1}g", "{b1}h", "x")) == "{b1}g"
    assert key_of(("EVALSHA", "abc", 0, "x")) is None
    assert key_of(("TIME",)) is None and key_of((b"publish", "c", "m")) is None


async def test_a_stalled_primary_holds_up_only_its_own_slots_commands(redis_cluster):
    gateway = await open_redis(redis_cluster.url, 8)
    assert isinstance(gateway.batch, Shards)
    # Node i holds the slots from SLOTS * i // 3 on: one key on each node.
    keys = [next(f"{{k{n}}}" for n in itertools.count() if _on(f"{{k{n}}}", i)) for i in range(3)]
    try:
        assert await gateway.all([gateway.call("INCR", k) for k in keys]) == [1, 1, 1]
        with redis.Redis(port=redis_cluster.nodes[0].port) as admin:
            admin.execute_command("CLIENT", "PAUSE", 1500, "ALL")
        stalled = asyncio.ensure_future(gateway.call("INCR", keys[0]))
        others = await gateway.all([gateway.call("INCR", k) for k in keys[1:]])
        assert others == [2, 2] and not stalled.done()  # answered while node 0 is paused
        assert await stalled == 2
    finally:
        await gateway.aclose()


async def test_a_primarys_batch_goes_to_its_node_on_a_plain_pipeline(redis_cluster):
    gateway = await open_redis(redis_cluster.url, 8)
    keys = [next(f"{{k{n}}}" for n in itertools.count() if _on(f"{{k{n}}}", i)) for i in range(3)]
    try:
        assert await gateway.all([gateway.call("INCR", k) for k in keys]) == [1, 1, 1]
        shards = gateway.batch
        assert isinstance(shards, Shards) and len(shards.lanes) == 3
        assert all(isinstance(lane, Lane) for lane in shards.lanes)
        assert shards.rerouted == 0  # every command answered by the node of its lane
    finally:
        await gateway.aclose()


@pytest.mark.slow
async def test_a_slot_moving_or_moved_to_another_primary_loses_no_command(tmp_path):
    cluster = RedisClusterNodes(tmp_path / "cluster")
    await asyncio.to_thread(cluster.start)
    gateway = await open_redis(cluster.url, 8)
    key = next(f"{{k{n}}}" for n in itertools.count() if _on(f"{{k{n}}}", 0))
    slot, other = key_slot(key.encode()), key + "b"  # one slot, on node 0
    try:
        shards = gateway.batch
        assert isinstance(shards, Shards)
        assert await gateway.call("INCR", key) == 1 and shards.rerouted == 0
        # Being moved to node 1: a key already there is served by node 0 still; one
        # that node 0 does not hold is sent on (ASK) to node 1 by the cluster client.
        cluster.migrating(slot, 0, 1)
        assert await gateway.all([gateway.call("INCR", key), gateway.call("INCR", other)]) == [2, 1]
        assert shards.rerouted == 1
        with redis.Redis(port=cluster.nodes[1].port) as admin:
            assert admin.execute_command("ASKING") and admin.get(other) == b"1"
        # Moved (MOVED): both commands go through the cluster client, which learns
        # the slot's new primary; the next ones go to that primary's lane.
        cluster.move_slot(slot, 0, 1)
        assert await gateway.all([gateway.call("INCR", key), gateway.call("GET", other)]) == [
            3,
            b"1",
        ]
        assert shards.rerouted == 3
        assert await gateway.all([gateway.call("INCR", key), gateway.call("GET", other)]) == [
            4,
            b"1",
        ]
        assert shards.rerouted == 3 and len(shards.lanes) == 2
    finally:
        await gateway.aclose()
        await asyncio.to_thread(cluster.stop)


def _on(key: str, node: int) -> bool:
    """Whether the key's slot is on the cluster fixture's node `node` (of three)."""
    return SLOTS * node // 3 <= key_slot(key.encode()) < SLOTS * (node + 1) // 3
