"""The store's scripts on a real Redis: commit (version, move id, stream, deadline) and claim."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot

from moose_server.limits.holdings import Holdings
from moose_server.limits.limiter import Limiter
from moose_server.limits.quotas import PRUNE_SLICE, Quotas
from moose_server.settings import Settings
from moose_server.storage import store as store_module
from moose_server.storage.codec import pack, pack_compressed
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import (
    GAMES_CHANNEL,
    deadlines_key,
    hold_key,
    move_field,
    polled_key,
)
from moose_server.storage.scripts import CommitCall
from moose_server.storage.store import Store, connect

from helpers import RedisClusterNodes


@pytest.fixture
async def store(redis_url: str) -> Any:
    """A Store over the test Redis, through a gateway of its own."""
    client = connect(redis_url, 8)
    gw = await open_redis(redis_url, 8)
    yield Store(gw, 16)
    await client.aclose()
    await gw.aclose()


EV = ({"kind": "move", "seat": 0}, {"turn": 1})


def step(game: str, expected: int, **fields: Any) -> CommitCall:
    """A commit of `game` over version `expected`: one event, no deadline, unless given."""
    fields = {"data": {}, "events": [EV], "deadline_ms": 0, **fields}
    return CommitCall(game=game, expected=expected, **fields)


async def test_keys_share_their_bucket_hash_tag(store):
    keys = store.keys_of("g_abc")
    bucket = store.bucket("g_abc")
    commit_keys, _ = step("g_abc", 0).build(keys)
    together = [*commit_keys, *keys.held(), deadlines_key(bucket), polled_key(bucket)]
    assert {key_slot(k.encode()) for k in together} == {key_slot(f"b{bucket}".encode())}


async def test_a_commit_takes_redis_time_from_the_last_claim_and_reads_no_clock(store):
    # Store.redis_now: a bucket's last deadline claim read Redis' clock; our monotonic
    # clock tells it on (within half the claim's round trip, at most CLOCK_TRIP / 2).
    client = store.redis.client

    async def times() -> int:
        stats = await client.info("commandstats")
        return int(stats.get("cmdstat_time", {}).get("calls", 0))

    assert store.redis_now("g_clock") == 0  # no claim yet: the script reads TIME
    first = await store.commit(step("g_clock", 0, deadline_ms=60_000))
    for _ in range(50):  # a claim slower than CLOCK_TRIP (a loaded machine) tells none
        await store.claim(60_000)
        if store.redis_now("g_clock"):
            break
    before = await store.now_ms()
    calls = await times()
    second = await store.commit(step("g_clock", 1, deadline_ms=60_000))
    assert await times() == calls  # no TIME in the commit
    after = await store.now_ms()
    half = int(store_module.CLOCK_TRIP * 1000 / 2)
    assert first.now <= before and before - half <= second.now <= after + half
    assert second.deadline == second.now + 60_000
    assert await client.zscore(deadlines_key(store.bucket("g_clock")), "g_clock") == (
        second.deadline
    )


async def test_the_clock_kept_is_the_closest_claims_until_another_clock_shows(store):
    # Store._clock: of the claims of one bucket, the one with the shortest round trip
    # tells Redis' time (half a round trip off at most), for half of CLOCK_KEPT; a
    # claim that disagrees with it by more than their round trips allow (another node
    # after a failover) replaces it; a round trip over CLOCK_TRIP tells nothing.
    game = "g_near"
    b = store.bucket(game)
    store._clock(b, 1_000_000, 10.000, 10.002)  # 2 ms there and back
    store._clock(b, 1_000_010, 10.005, 10.015)  # 10 ms: the 2 ms one is closer, kept
    assert store._clocks[b] == pytest.approx((1_000_000, 10.001, 0.002))
    store._clock(b, 1_000_200, 10.100, 10.150)  # over CLOCK_TRIP: nothing told
    assert store._clocks[b][0] == 1_000_000
    store._clock(b, 2_000_000, 10.200, 10.210)  # another clock: taken at once
    assert store._clocks[b][0] == 2_000_000
    later = 10.205 + store_module.CLOCK_KEPT / 2 + 0.1
    store._clock(b, 2_005_200, later - 0.005, later + 0.005)  # 10 ms but the kept one aged
    assert store._clocks[b] == pytest.approx((2_005_200, later, 0.01))


async def test_commit_checks_the_version_and_appends_events(store):
    first = await store.commit(step("g_1", 0, data={"n": 1}, events=[EV, EV]))
    assert (first.status, first.seq) == ("ok", 1)
    stale = await store.commit(step("g_1", 0, data={"n": 2}))
    assert (stale.status, stale.seq) == ("stale", 2)
    loaded = await store.load("g_1")
    assert (loaded.version, loaded.data) == (2, {"n": 1})
    entries = await store.events("g_1")
    assert [e.seq for e in entries] == [1, 2]
    assert entries[0].event == EV[0] and entries[0].state == EV[1]
    assert [e.seq for e in await store.events("g_1", since=1)] == [2]


async def test_a_repeated_move_id_returns_the_first_answer(store):
    await store.commit(step("g_2", 0, data={"n": 0}))
    field = move_field("p_1", "m-1")
    first = await store.commit(step("g_2", 1, move_field=field, data={"n": 1}))
    again = await store.commit(step("g_2", 1, move_field=field, data={"n": 99}))
    later = await store.commit(step("g_2", 2, move_field=field, data={"n": 99}))
    assert (first.status, first.seq) == ("ok", 2)
    assert (again.status, again.seq) == ("dup", 2) and (later.status, later.seq) == ("dup", 2)
    loaded = await store.load("g_2", field)
    assert (loaded.version, loaded.data, loaded.dup) == (2, {"n": 1}, 2)


async def test_a_move_id_of_a_stale_step_is_not_kept(store):
    """The script records a move id before it checks the version: a stale step
    takes it back, so the same move sent again on the right version is played."""
    await store.commit(step("g_4", 0, data={"n": 0}))
    field = move_field("p_1", "m-1")
    stale = await store.commit(step("g_4", 0, move_field=field, data={"n": 9}))
    assert (stale.status, stale.seq) == ("stale", 1)
    assert (await store.load("g_4", field)).dup is None
    again = await store.commit(step("g_4", 1, move_field=field, data={"n": 1}))
    assert (again.status, again.seq) == ("ok", 2)
    assert (await store.load("g_4", field)).dup == 2


async def test_deadlines_use_redis_time_and_can_be_kept_or_cleared(store):
    key = store.keys_of("g_3").deadlines
    set_ = await store.commit(step("g_3", 0, deadline_ms=60_000))
    assert set_.deadline == set_.now + 60_000
    assert await store.redis.zscore(key, "g_3") == set_.deadline
    kept = await store.commit(step("g_3", 1, deadline_ms=-1))
    assert kept.deadline == set_.deadline
    assert (await store.events("g_3"))[1].deadline == set_.deadline
    cleared = await store.commit(step("g_3", 2, ttl=100, grace_ms=30_000))
    assert cleared.deadline == 0 and await store.redis.zscore(key, "g_3") is None
    assert 0 < await store.redis.client.ttl(store.keys_of("g_3").game) <= 100
    assert 0 < await store.redis.client.pttl(store.keys_of("g_3").events) <= 30_000


async def test_a_finished_games_events_and_move_ids_last_its_grace_only(store):
    field = move_field("p_1", "m-9")
    await store.commit(step("g_5", 0, data={"n": 0}, deadline_ms=60_000))
    await store.commit(step("g_5", 1, move_field=field, data={"n": 1}, deadline_ms=60_000))
    # While the game goes on, its hash holds the move ids (no key of their own)...
    assert await store.redis.hget(store.keys_of("g_5").game, field) == b"2"
    assert not await store.redis.exists(store.keys_of("g_5").moves)
    await store.commit(step("g_5", 2, data={"n": 2}, ttl=3600, grace_ms=20_000))
    # ...and at its end they move to their own key, for the grace only.
    assert await store.redis.hget(store.keys_of("g_5").game, field) is None
    assert await store.redis.hget(store.keys_of("g_5").moves, field) == b"2"
    assert (await store.load("g_5", field)).dup == 2
    again = await store.commit(step("g_5", 1, move_field=field, data={"n": 1}))
    assert (again.status, again.seq) == ("dup", 2)
    for key in (store.keys_of("g_5").events, store.keys_of("g_5").moves):
        assert 0 < await store.redis.client.pttl(key) <= 20_000, key
    assert 3_000 < await store.redis.client.ttl(store.keys_of("g_5").game) <= 3600
    keys = store.keys_of("g_5")
    assert set(keys.held()) == {keys.game, keys.events, keys.moves, keys.record}


async def test_snapshots_are_kept_only_where_given_with_the_auto_flag_on_every_entry(store):
    await store.commit(step("g_6", 0, events=[(EV[0], {"turn": 1, "auto": True})], auto=True))
    await store.commit(step("g_6", 1, events=[(EV[0], None), (EV[0], None)]))
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
        await store.commit(step("g_4", 0, events=[EV, EV, EV]))
        async with asyncio.timeout(10):
            async for msg in pubsub.listen():
                if msg["type"] == "message":
                    assert msg["data"] == b"g_4 3"
                    break
    await listener.aclose()


async def test_claim_takes_due_deadlines_once_per_lease(store):
    await store.commit(step("g_5", 0, deadline_ms=1))
    await store.commit(step("g_6", 0, deadline_ms=3_600_000))
    for _ in range(1000):
        due = await store.claim(60_000)
        if due:
            break
    [(game, now)] = due
    assert game == "g_5" and now > 0
    assert await store.claim(60_000) == []  # leased: nobody else takes it
    key = store.keys_of("g_5").deadlines
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
        store = Store(backend, buckets=16)
        games = [f"g_{i}" for i in range(24)]
        where = {g: backend.client.get_node_from_key(store.keys_of(g).game).port for g in games}
        assert len(set(where.values())) == 3
        if warm:
            assert await store.claim(60_000) == []  # every node has the claim script now
            assert not store.claim_failed
        for game in games:
            await store.commit(step(game, 0, deadline_ms=1))
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


async def test_a_stalled_cluster_node_holds_up_no_other_buckets_claim_and_its_own_get_a_grace(
    redis_cluster,
):
    backend = await open_redis(redis_cluster.url, 8)
    try:
        store = Store(backend, buckets=16)
        games = [f"g_{i}" for i in range(24)]
        where = {g: backend.client.get_node_from_key(store.keys_of(g).game).port for g in games}
        paused = redis_cluster.nodes[0].port
        assert await store.claim(60_000) == []  # every node has the claim script now
        for game in games:
            await store.commit(step(game, 0, deadline_ms=1))
        await asyncio.sleep(0.01)  # every deadline is due
        async with aioredis.Redis(port=paused) as admin:
            await admin.execute_command("CLIENT", "PAUSE", 1500, "ALL")
        due = await store.claim(60_000, grace_ms=30_000)
        # The others' buckets are claimed while the paused node's wait.
        assert sorted(g for g, _ in due) == sorted(g for g in games if where[g] != paused)
        assert store.claim_failed  # its buckets' next claims judge the gap
        stalled = [g for g in games if where[g] == paused]
        async with asyncio.timeout(10):
            while store._claims:
                assert await store.claim(60_000, grace_ms=30_000) == []
                await asyncio.sleep(0.05)
        # Back over a second late: what it claimed is not played but held a grace on.
        for game in stalled:
            assert (await store.load(game)).deadline >= int(time.time() * 1000) + 20_000
    finally:
        await backend.aclose()


async def test_a_held_deadline_is_a_grace_from_now_and_a_timeout_claimed_before_waits(store):
    key = store.keys_of("g_held").deadlines
    set_ = await store.commit(step("g_held", 0, deadline_ms=1000))
    (held,) = await store.defer(["g_held"], 60_000)
    assert held >= set_.now + 60_000 and await store.redis.zscore(key, "g_held") == held
    assert (await store.load("g_held")).deadline == held  # what a `state` shows
    # A timeout claimed for the deadline before the hold (its commit names it):
    late = await store.commit(step("g_held", 1, due=set_.deadline))
    assert late.status == "stale"  # before: played over the hold
    assert (await store.commit(step("g_held", 1, due=held))).status == "ok"


async def test_a_hold_never_brings_a_deadline_nearer_and_skips_ended_games(store):
    set_ = await store.commit(step("g_far", 0, deadline_ms=600_000))
    await store.commit(step("g_over", 0, ttl=100))  # over: no deadline
    far, over, missing = await store.defer(["g_far", "g_over", "g_none"], 5000)
    assert far == set_.deadline == (await store.load("g_far")).deadline
    assert (over, missing) == (0, 0)
    assert await store.redis.zscore(store.keys_of("g_over").deadlines, "g_over") is None


async def test_a_held_game_sets_no_deadline_before_its_hold_ends(store):
    # Its seats send their lost moves again one after another: before, each replayed
    # turn had a turn's time only, and a seat slow to resend timed out.
    await store.commit(step("g_replay", 0, deadline_ms=1000))
    (held,) = await store.defer(["g_replay"], 60_000)
    replayed = await store.commit(step("g_replay", 1, deadline_ms=1000))
    assert replayed.deadline == held
    assert await store.redis.zscore(store.keys_of("g_replay").deadlines, "g_replay") == held
    later = await store.commit(step("g_replay", 2, deadline_ms=120_000))
    assert later.deadline == later.now + 120_000  # a turn longer than the hold: its own


async def test_a_compact_commit_leaves_the_stream_as_small_as_its_entries(store, redis_url):
    """A stream keeps room for entries to come in its newest node (Valkey 9); a
    compact commit (a game that now waits days) writes it anew without that room."""
    r = aioredis.Redis.from_url(redis_url)
    try:
        for game, compact in (("g_roomy", False), ("g_compact", True)):
            for v in range(3):
                events = [({"kind": "move", "n": "x" * 80}, {"turn": v, "s": "y" * 400})]
                await store.commit(step(game, v, events=events, deadline_ms=86_400_000))
            await store.commit(step(game, 3, events=[EV], deadline_ms=86_400_000, compact=compact))
        sizes = {}
        for game in ("g_roomy", "g_compact"):
            events = store.keys_of(game).events
            copy = events[:-1] + "~"  # as long a name: MEMORY USAGE counts it
            await r.restore(copy, 0, await r.dump(events))  # built at its size
            sizes[game] = [await r.memory_usage(k, samples=0) for k in (events, copy)]
            assert [e.seq for e in await store.events(game)] == [1, 2, 3, 4]
        assert abs(sizes["g_compact"][0] - sizes["g_compact"][1]) <= 64  # an allocation's rounding
        assert sizes["g_roomy"][0] > sizes["g_roomy"][1] + 1000
        after = await store.commit(step("g_compact", 4, events=[EV], deadline_ms=1000))
        assert after.status == "ok" and len(await store.events("g_compact", since=4)) == 1
        deadline = await r.zscore(store.keys_of("g_compact").deadlines, "g_compact")
        assert deadline == after.deadline
    finally:
        await r.aclose()


async def test_a_compressed_snapshot_is_read_as_a_packed_one(store):
    """formats.py: a later release may store a waiting game's snapshots compressed."""
    state = {"turn": 3, "hand": ["house"] * 40}
    events = [(EV[0], pack_compressed(state)), (EV[0], pack(state))]
    await store.commit(step("g_zs", 0, events=events))
    assert [e.state for e in await store.events("g_zs")] == [state, state]


async def test_ended_games_look_for_a_waiting_deal_only_where_no_deadline_field_is(
    store, redis_url
):
    await store.commit(step("g_on", 0, deadline_ms=600_000))
    await store.commit(step("g_done", 0, ttl=100))  # over: its deadline field is 0
    holdings, r = Holdings(store.redis, 16), aioredis.Redis.from_url(redis_url)
    try:
        before = (await r.info("commandstats")).get("cmdstat_exists", {}).get("calls", 0)
        assert await holdings.ended_games(["g_on", "g_done"], missing=True) == {"g_done"}
        after = (await r.info("commandstats")).get("cmdstat_exists", {}).get("calls", 0)
        assert after == before  # every game had its deadline field: no second read
        assert await holdings.ended_games(["g_on", "g_gone"], missing=True) == {"g_gone"}
        assert await holdings.ended_games(["g_gone"], missing=False) == set()
    finally:
        await r.aclose()


async def test_a_full_hold_is_pruned_oldest_first_a_slice_at_a_time(store, redis_url):

    limit = 3 * PRUNE_SLICE
    holdings = Holdings(store.redis, 16)
    quotas = Quotas(holdings, Limiter(store, Settings()), store, Settings())
    key = hold_key("games", "198.51.100.77")
    ended = [f"g_old{n:02d}" for n in range(PRUNE_SLICE)]
    going = [f"g_new{n:02d}" for n in range(limit - PRUNE_SLICE)]
    for game in ended:
        await store.commit(step(game, 0, ttl=100))  # over
    for game in going:
        await store.commit(step(game, 0, deadline_ms=600_000))
    await holdings.put(key, ended, 60_000)
    await asyncio.sleep(0.01)
    await holdings.put(key, going, 60_000)
    r = aioredis.Redis.from_url(redis_url)
    try:
        before = (await r.info("commandstats")).get("cmdstat_hget", {}).get("calls", 0)
        assert await quotas._room(key, limit, quotas._ended_games)
        after = (await r.info("commandstats")).get("cmdstat_hget", {}).get("calls", 0)
        assert await r.zcard(key) == len(going)  # the ended ones pruned
        if not store.redis.cluster:
            assert after - before == PRUNE_SLICE  # the oldest slice read, not every id
        assert not await quotas._room(key, len(going), quotas._ended_games)  # none ended
    finally:
        await r.aclose()
