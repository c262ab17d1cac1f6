"""Steps on a Redis Cluster: the other instance hears each one on its sharded channel.

Two `moose serve` processes over the session's Redis Cluster (three primaries);
two bot clients, one on each instance, play a 2-seat queue game to its end. A
commit publishes its step on the game's bucket channel, on the primary that
holds the game (lua/commit.lua), and each instance SSUBSCRIBEs its bucket
channels on one connection per primary (net/subscription.py): the instance that
did not commit a step gives it to its socket with no stream read (XRANGE, as
INFO commandstats counts it on every node), and each seat gets exactly the
views the rules give. A sharded connection killed mid-game (CLIENT KILL, as a
failover or a dropped link does) loses what was published meanwhile: it is made
again on the slot's primary and the game still ends with every view right. A
bucket's slot moved to another primary (the server pushes `sunsubscribe`) has
its channels subscribed on the new owner. (A primary killed and failed over:
tests/test_cluster_failover.py.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
import redis
from redis.crc import key_slot

from moose.client import Client
from moose_server.storage.keys import deadlines_key, steps_channel

from helpers import RedisClusterNodes, ServeProcess, check_views, play_seat, serve_several, until

FLAGS = ("--match-wait", "0.2", "--poll-interval", "0.05", "--turn-time", "5")
ENV = {"MOOSE_MATCH_INTERVAL": "0.05", "MOOSE_AUTO_DELAY": "0.05"}


def command_calls(cluster: RedisClusterNodes, command: str) -> int:
    """Calls of `command` on every node since the counters were reset."""
    total = 0
    for node in cluster.nodes:
        with redis.Redis(port=node.port) as r:
            stats = r.info("commandstats")
        total += int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))
    return total


def reset_stats(cluster: RedisClusterNodes) -> None:
    for node in cluster.nodes:
        with redis.Redis(port=node.port) as r:
            r.config_resetstat()


def kill_sharded_connections(cluster: RedisClusterNodes) -> int:
    """Kill every connection that holds sharded subscriptions only (CLIENT LIST's
    ssub > 0, sub = 0): the instances' per-primary step connections."""
    killed = 0
    for node in cluster.nodes:
        with redis.Redis(port=node.port) as r:
            for client in r.client_list(_type="pubsub"):
                if int(client.get("ssub", 0)) > 0 and int(client.get("sub", 0)) == 0:
                    r.client_kill_filter(_id=client["id"])
                    killed += 1
    return killed


async def play_one_game(
    procs: list[ServeProcess], during: Callable[[int], None] | None = None
) -> tuple[int, int]:
    """Two bots, one on each instance, play a game to its end; every view checked.
    `during(seq)` runs at each event of the first seat. Returns (events, moves)."""
    ann = Client([procs[0].url], name="ann")
    bob = Client([procs[1].url], name="bob")
    async with ann, bob:
        await ann.queue(2, 2)
        await bob.queue(2, 2)

        async def on_event(msg: dict[str, object]) -> None:
            if during is not None:
                during(int(msg["seq"]))  # type: ignore[call-overload]

        (game, seat_a, events_a), (_, seat_b, events_b) = await asyncio.wait_for(
            asyncio.gather(play_seat(ann, on_event=on_event), play_seat(bob)), 60
        )
        record = await ann.record(game)
        check_views(events_a, record, seat_a)
        check_views(events_b, record, seat_b)
        moves = sum(1 for m in events_a if m["event"]["kind"] == "move")
        return len(events_a), moves


@pytest.mark.slow
async def test_seats_on_two_instances_play_a_game_with_no_stream_read_on_a_cluster(
    moose_serve, redis_cluster: RedisClusterNodes
):
    procs = serve_several(moose_serve, redis_cluster.cluster_url, ENV, flags=FLAGS)
    reset_stats(redis_cluster)
    events, moves = await play_one_game(procs)
    assert moves >= 10
    assert command_calls(redis_cluster, "spublish") >= moves // 2  # each step of the other's
    # A socket's first read, as it joins the game, at most: no step is read back.
    assert command_calls(redis_cluster, "xrange") <= 2, events


@pytest.mark.slow
async def test_a_lost_sharded_connection_is_made_again_and_the_follower_catches_up(
    moose_serve, redis_cluster: RedisClusterNodes
):
    procs = serve_several(moose_serve, redis_cluster.cluster_url, ENV, flags=FLAGS)
    killed: list[int] = []

    def kill_at(seq: int) -> None:
        if seq >= 6 and not killed:
            killed.append(kill_sharded_connections(redis_cluster))

    _, moves = await play_one_game(procs, kill_at)
    assert killed and killed[0] >= 2  # each instance's, on the primaries it subscribed on
    assert moves >= 10
    logs = [p.log.read_text() for p in procs]
    assert all("sharded pub/sub on" in log for log in logs), logs
    # Each instance subscribed again: a second game plays with no stream read.
    await until(lambda: _ready(redis_cluster))
    reset_stats(redis_cluster)
    await play_one_game(procs)
    assert command_calls(redis_cluster, "xrange") <= 2


async def _ready(cluster: RedisClusterNodes) -> bool:
    """Every node holds sharded subscriptions again (both instances subscribed anew)."""
    nodes = 0
    for node in cluster.nodes:
        with redis.Redis(port=node.port) as r:
            if any(int(c.get("ssub", 0)) > 0 for c in r.client_list(_type="pubsub")):
                nodes += 1
    return nodes == len(cluster.nodes)


async def shard_channels(port: int, bucket: int) -> list[bytes]:
    """The steps channels of `bucket` subscribed on the node (PUBSUB SHARDCHANNELS)."""
    with redis.Redis(port=port) as r:
        found = r.execute_command("PUBSUB", "SHARDCHANNELS", steps_channel(bucket, b"") + b"*")
    return list(found)


@pytest.mark.slow
async def test_a_buckets_slot_moved_to_another_primary_has_its_channels_subscribed_there(
    moose_serve, tmp_path
):
    cluster = RedisClusterNodes(tmp_path / "cluster")
    await asyncio.to_thread(cluster.start)
    try:
        procs = serve_several(moose_serve, cluster.cluster_url, ENV, flags=FLAGS)
        bucket = 0
        slot = key_slot(deadlines_key(bucket).encode())
        source = cluster.owner_of(slot)
        target = (source + 1) % len(cluster.nodes)
        port = cluster.nodes[target].port
        await until(lambda: _count(cluster.nodes[source].port, bucket, 2))
        assert await shard_channels(port, bucket) == []
        cluster.move_slot(slot, source, target)
        # Both instances are told (`sunsubscribe`) and subscribe on the new owner.
        await until(lambda: _count(port, bucket, 2), timeout=20)
        assert await shard_channels(cluster.nodes[source].port, bucket) == []
        logs = [p.log.read_text() for p in procs]
        assert all("the server unsubscribed" in log for log in logs), logs
        _, moves = await play_one_game(procs)
        assert moves >= 10
    finally:
        cluster.stop()


async def _count(port: int, bucket: int, wanted: int) -> bool:
    return len(await shard_channels(port, bucket)) == wanted
