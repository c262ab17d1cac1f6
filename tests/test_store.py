"""The store's scripts on a real Redis: commit (version, move id, stream, deadline) and claim."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis

from moose_server.storage.connection import open_redis
from moose_server.storage.store import GAMES_CHANNEL, Store, connect

from helpers import RedisClusterNodes


@pytest.fixture
async def store(redis_url: str) -> Any:
    """A Store over the test Redis with a BlockingConnectionPool (and its own Batcher)."""
    client = connect(redis_url, 8)
    yield Store(client, 16)
    await client.aclose()


EV = ({"kind": "move", "seat": 0}, {"turn": 1})


async def test_keys_share_their_bucket_hash_tag(store):
    tag = f"{{b{store.bucket('g_abc')}}}"
    assert store.game_key("g_abc").startswith(tag + ":game:")
    assert store.events_key("g_abc").startswith(tag + ":events:")
    assert store.deadlines_key(store.bucket("g_abc")) == tag + ":deadlines"


async def test_commit_checks_the_version_and_appends_events(store):
    first = await store.commit("g_1", 0, "", {"n": 1}, [EV, EV], 0)
    assert (first.status, first.seq) == ("ok", 1)
    stale = await store.commit("g_1", 0, "", {"n": 2}, [EV], 0)
    assert (stale.status, stale.seq) == ("stale", 2)
    loaded = await store.load("g_1")
    assert (loaded.version, loaded.data) == (2, {"n": 1})
    entries = await store.events("g_1")
    assert [e.seq for e in entries] == [1, 2]
    assert entries[0].event == EV[0] and entries[0].state == EV[1]
    assert [e.seq for e in await store.events("g_1", since=1)] == [2]


async def test_a_repeated_move_id_returns_the_first_answer(store):
    await store.commit("g_2", 0, "", {"n": 0}, [EV], 0)
    field = store.move_field_of("p_1", "m-1")
    first = await store.commit("g_2", 1, field, {"n": 1}, [EV], 0)
    again = await store.commit("g_2", 1, field, {"n": 99}, [EV], 0)
    later = await store.commit("g_2", 2, field, {"n": 99}, [EV], 0)
    assert (first.status, first.seq) == ("ok", 2)
    assert (again.status, again.seq) == ("dup", 2) and (later.status, later.seq) == ("dup", 2)
    loaded = await store.load("g_2", field)
    assert (loaded.version, loaded.data, loaded.dup) == (2, {"n": 1}, 2)


async def test_deadlines_use_redis_time_and_can_be_kept_or_cleared(store):
    key = store.deadlines_key(store.bucket("g_3"))
    set_ = await store.commit("g_3", 0, "", {}, [EV], 60_000)
    assert set_.deadline == set_.now + 60_000
    assert await store.redis.zscore(key, "g_3") == set_.deadline
    kept = await store.commit("g_3", 1, "", {}, [EV], -1)
    assert kept.deadline == set_.deadline
    assert (await store.events("g_3"))[1].deadline == set_.deadline
    cleared = await store.commit("g_3", 2, "", {}, [EV], 0, ttl=100, grace_ms=30_000)
    assert cleared.deadline == 0 and await store.redis.zscore(key, "g_3") is None
    assert 0 < await store.redis.ttl(store.game_key("g_3")) <= 100
    assert 0 < await store.redis.pttl(store.events_key("g_3")) <= 30_000


async def test_a_finished_games_events_and_move_ids_last_its_grace_only(store):
    field = store.move_field_of("p_1", "m-9")
    await store.commit("g_5", 0, "", {"n": 0}, [EV], 60_000)
    await store.commit("g_5", 1, field, {"n": 1}, [EV], 60_000)
    assert await store.redis.hget(store.ledger_key("g_5"), field) == b"2"
    assert await store.redis.pttl(store.ledger_key("g_5")) == -1  # the game goes on
    await store.commit("g_5", 2, "", {"n": 2}, [EV], 0, ttl=3600, grace_ms=20_000)
    for key in (store.events_key("g_5"), store.ledger_key("g_5")):
        assert 0 < await store.redis.pttl(key) <= 20_000, key
    assert 3_000 < await store.redis.ttl(store.game_key("g_5")) <= 3600
    assert set(store.game_keys("g_5")) == {
        store.game_key("g_5"),
        store.events_key("g_5"),
        store.ledger_key("g_5"),
        store.record_key("g_5"),
    }


async def test_snapshots_are_kept_only_where_given_with_the_auto_flag_on_every_entry(store):
    await store.commit("g_6", 0, "", {}, [(EV[0], {"turn": 1, "auto": True})], 0, auto=True)
    await store.commit("g_6", 1, "", {}, [(EV[0], None), (EV[0], None)], 0)
    rows = await store.events("g_6")
    assert [(r.seq, r.state, r.auto) for r in rows] == [
        (1, {"turn": 1, "auto": True}, True),
        (2, None, False),
        (3, None, False),
    ]


async def test_commit_publishes_a_wake_up(store, redis_url):
    listener = aioredis.Redis.from_url(redis_url)
    async with listener.pubsub() as pubsub:
        await pubsub.subscribe(GAMES_CHANNEL)
        await store.commit("g_4", 0, "", {}, [EV, EV, EV], 0)
        async with asyncio.timeout(10):
            async for msg in pubsub.listen():
                if msg["type"] == "message":
                    assert msg["data"] == b"g_4 3"
                    break
    await listener.aclose()


async def test_claim_takes_due_deadlines_once_per_lease(store):
    await store.commit("g_5", 0, "", {}, [EV], 1)
    await store.commit("g_6", 0, "", {}, [EV], 3_600_000)
    for _ in range(1000):
        due = await store.claim(60_000)
        if due:
            break
    [(game, now)] = due
    assert game == "g_5" and now > 0
    assert await store.claim(60_000) == []  # leased: nobody else takes it
    key = store.deadlines_key(store.bucket("g_5"))
    # Each bucket's script reads TIME itself: a later bucket may be a millisecond on.
    assert now + 60_000 <= await store.redis.zscore(key, "g_5") < now + 61_000


async def test_the_shared_secret_is_set_once(store):
    assert await store.shared_secret("first") == "first"
    assert await store.shared_secret("second") == "first"


@pytest.mark.slow
@pytest.mark.parametrize("warm", [True, False], ids=["scripts-loaded", "fresh-start"])
async def test_a_failing_cluster_node_delays_only_its_own_deadlines(tmp_path, warm):
    # A private cluster: one master is killed, and the session's cluster must live on.
    nodes = RedisClusterNodes(tmp_path)
    await asyncio.to_thread(nodes.start)
    backend = await open_redis(nodes.url, 8)
    try:
        store = Store(backend.redis, buckets=16)
        games = [f"g_{i}" for i in range(24)]
        where = {g: backend.redis.get_node_from_key(store.game_key(g)).port for g in games}
        assert len(set(where.values())) == 3
        if warm:
            assert await store.claim(60_000) == []  # every node has the claim script now
            assert not store.claim_failed
        for game in games:
            await store.commit(game, 0, "", {}, [EV], 1)
        await asyncio.sleep(0.01)  # every deadline is due
        dead = nodes.nodes[0]
        dead.kill()
        due = await store.claim(60_000)
        # Before: one failed bucket threw every other claim away (each then waited
        # out its lease).
        assert sorted(g for g, _ in due) == sorted(g for g in games if where[g] != dead.port)
        assert store.claim_failed  # so the timers judge the gap of its buckets when it is back
    finally:
        await backend.aclose()
        await asyncio.to_thread(nodes.stop)
