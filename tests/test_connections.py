"""connections.py: one Redis node or a Redis Cluster, found from the URL.

The cluster is real: three masters of the bundled binary joined by CLUSTER MEET (the
`redis_cluster` fixture). Tests taking `backend_url` run once per backend.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis
from redis.asyncio.client import PubSub
from redis.exceptions import ConnectionError, DataError, RedisClusterException

from moose_server.matchmaking.matchmaker import Matchmaker, MatchOptions
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import GAMES_CHANNEL, GameKeys
from moose_server.storage.scripts import CommitCall
from moose_server.storage.store import Store, connect

from helpers import check_game, play_out, table_game


async def test_a_plain_url_to_a_cluster_node_gets_the_cluster_client(redis_cluster):
    backend = await open_redis(redis_cluster.url, 8)
    try:
        assert backend.cluster
        # Keys of every slot answer through the one URL: no MovedError.
        for i in range(30):
            await backend.set(f"k{i}", i)
        assert [int(await backend.get(f"k{i}")) for i in range(30)] == list(range(30))
    finally:
        await backend.aclose()


async def test_the_explicit_cluster_url_lists_seed_nodes(redis_cluster):
    backend = await open_redis(redis_cluster.cluster_url, 8)
    try:
        assert backend.cluster
        assert len(backend.client.get_primaries()) == 3
    finally:
        await backend.aclose()


async def test_a_single_node_stays_a_single_node(redis_url):
    backend = await open_redis(redis_url, 8)
    try:
        assert not backend.cluster and await backend.ping()
    finally:
        await backend.aclose()


async def test_a_lost_subscription_ends_listen_instead_of_resubscribing_quietly(
    backend_url, request
):
    # The hub re-reads what it may have missed only when it hears of the loss.
    backend = await open_redis(backend_url, 8)
    cluster = request.getfixturevalue("redis_cluster") if backend.cluster else None
    urls = [f"redis://127.0.0.1:{n.port}" for n in cluster.nodes] if cluster else [backend_url]
    try:
        async with backend.pubsub.pubsub() as pubsub:
            assert isinstance(pubsub, PubSub)  # redis-py's, on every backend
            await pubsub.subscribe(GAMES_CHANNEL)
            await backend.publish(GAMES_CHANNEL, b"g 1")
            got = [m async for m in _messages(pubsub, 1)]
            assert got[0]["data"] == b"g 1"
            for url in urls:
                with redis.Redis.from_url(url) as admin:
                    admin.client_kill_filter(_type="pubsub")
            with pytest.raises(ConnectionError):
                async with asyncio.timeout(5):
                    async for _ in pubsub.listen():
                        pass
    finally:
        await backend.aclose()


async def _messages(pubsub: PubSub, n: int) -> Any:
    async with asyncio.timeout(5):
        async for message in pubsub.listen():
            if message["type"] == "message":
                yield message
                n -= 1
                if n == 0:
                    return


async def test_pubsub_hears_scripts_of_every_node_and_moves_on_after_a_failure(redis_cluster):
    backend = await open_redis(redis_cluster.url, 8)
    store = Store(backend, buckets=16)
    try:
        async with backend.pubsub.pubsub() as pubsub:
            await pubsub.subscribe(GAMES_CHANNEL)
            # Games in buckets on all three masters: each commit publishes on its own node.
            games = [f"g_{i}" for i in range(12)]
            nodes = {backend.client.get_node_from_key(store.keys_of(g).game).name for g in games}
            assert len(nodes) == 3
            for game in games:
                await store.commit(
                    CommitCall(
                        game=game,
                        expected=0,
                        data={},
                        events=[({"kind": "start"}, {})],
                        deadline_ms=0,
                    )
                )
            heard = set()
            async with asyncio.timeout(5):
                while len(heard) < len(games):
                    msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1)
                    if msg is not None:
                        heard.add(msg["data"].decode().split()[0])
            assert heard == set(games)
        first = backend.pubsub.node  # type: ignore[attr-defined]
        async with backend.pubsub.pubsub():  # what the hub asks for after a lost connection
            assert backend.pubsub.node != first  # type: ignore[attr-defined]
    finally:
        await backend.aclose()


async def test_every_game_and_matchmaking_script_stays_in_one_slot(redis_cluster):
    backend = await open_redis(redis_cluster.url, 8)
    try:
        store = Store(backend, buckets=16)
        await store.commit(
            CommitCall(
                game="g_x",
                expected=0,
                move_field="m:p:1",
                data={"a": 1},
                events=[({"kind": "start"}, {})],
                deadline_ms=1,
            )
        )
        async with asyncio.timeout(5):
            while not (due := await store.claim(1000)):
                await asyncio.sleep(0.01)
        assert [game for game, _ in due] == ["g_x"]
        mm = Matchmaker(backend, MatchOptions(match_wait=0, instance="i_a"))
        await mm.enqueue("p1", "ann", 2, 2)
        await mm.enqueue("p2", "bob", 2, 2)
        [table] = await mm.form_tables()
        assert sorted(s.player or "" for s in table.seats) == ["p1", "p2"]
        # The client itself refuses a script whose keys span two slots.
        with pytest.raises(RedisClusterException):
            one, two = GameKeys("x", "b1"), GameKeys("x", "b2")
            keys = [one.game, two.events, one.deadlines, one.unrated, one.record]
            await backend.run(CommitCall("x", 0, b"", [], 0), keys, [])
    finally:
        await backend.aclose()


async def test_many_commands_at_once_wait_for_a_connection(redis_cluster):
    backend = await open_redis(redis_cluster.url, 2)  # two connections per node at most
    try:
        # A command that cannot be encoded sends its batch again one command at a time:
        # 200 at once, through two connections per node.
        incrs = [backend.call("INCR", f"n{i % 5}") for i in range(200)]
        got = await asyncio.gather(*incrs, backend.call("SET", "x", None), return_exceptions=True)
        # (Some ran twice: a cluster's nodes ran their part of the batch before it failed.)
        assert all(isinstance(n, int) for n in got[:-1]) and isinstance(got[-1], DataError)
    finally:
        await backend.aclose()


@pytest.mark.parametrize("players", [2, 4])
async def test_a_game_over_two_instances_on_each_backend(
    backend_url, players, moose_server, ws_client
):
    urls = [await moose_server(redis_url=backend_url), await moose_server(redis_url=backend_url)]
    clients = [await ws_client(urls[i % 2], f"seat{i}", binary=i % 2 == 0) for i in range(players)]
    game, seats = await table_game(clients)
    all_events = await asyncio.gather(*(play_out(c, game, seed=i) for i, c in enumerate(clients)))
    for client, seat, events in zip(clients, seats, all_events, strict=True):
        await check_game(client, game, seat, events)


async def test_a_redis_restart_costs_no_command_an_error(redis_factory):
    # The pool keeps connections to the Redis that went away; each would fail
    # once ("Connection closed by server"): the command goes again on a new one.
    redis_server = redis_factory()
    client = connect(redis_server.url, 4)
    try:
        assert await asyncio.gather(*(client.ping() for _ in range(4))) == [True] * 4
        pool = client.connection_pool
        assert len(pool._available_connections) == 4  # type: ignore[attr-defined]
        await asyncio.to_thread(redis_server.stop)
        await asyncio.to_thread(redis_server.start)
        # Before: the first four of these failed, one on each stale connection.
        counts = await asyncio.gather(*(client.incr("n") for _ in range(8)))
        assert sorted(counts) == [*range(1, 9)]
    finally:
        await client.aclose()
