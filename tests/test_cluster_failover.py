"""A Redis Cluster primary killed while bots play on two instances costs no turn.

A replicated cluster (three primaries, a replica each, `cluster-node-timeout`
2 s) and two `moose serve` instances on it; twelve bots (helpers/fleet.py: the
client library's public API, a move sent again with its move id while the
server says `unavailable`) play 2-player queue games with turns of 3 s. Once
every bot is busy, one primary is killed (SIGKILL): its replica takes its
slots over a few seconds later, and the bots play on.

What must hold, counted, not timed:
- no turn is played by a timeout: every bot is connected and wants to move
  whenever it is its turn, so a timeout is a turn lost (a seat not told of an
  event while the games' primary failed over, or told it only at the deadline);
- the deadlines of the healthy primaries' buckets are not held up: only
  buckets of the killed primary's slots are moved by an outage (claim.lua), a
  healthy one's claims going on while the dead one's stall (storage/shards.py);
- every game ends.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest
from redis.crc import key_slot

from moose.client import Client
from moose_server.storage.keys import deadlines_key

from helpers import open_store, serve_several
from helpers.cluster import ReplicatedCluster
from helpers.fleet import BOTS, ENV, FLAGS, Bot, Fleet

BUCKETS = 16  # the server's default (Settings.buckets)
MOVES_BEFORE = 40  # moves acknowledged before the kill: every bot is busy
MOVES_AFTER = 60  # ...and after it, once the replica took over: the games went on
TIMEOUT = 90.0
# The outage line of Store.claim: how many deadlines it moved, and in which buckets.
OUTAGE = re.compile(r"(\d+) deadlines moved to [\d.]+ s from now(?: \(buckets ([\d ]+)\))?")


def bucket_slot(bucket: int) -> int:
    """The cluster slot of a bucket's keys (their hash tag, storage/keys.py)."""
    return key_slot(deadlines_key(bucket).encode())


@pytest.mark.slow
async def test_a_killed_primary_costs_no_turn_and_holds_up_no_other_primary(
    moose_serve, tmp_path: Path
):
    cluster = ReplicatedCluster(tmp_path / "cluster")
    await asyncio.to_thread(cluster.start)
    try:
        procs = serve_several(moose_serve, cluster.cluster_url, ENV, flags=FLAGS)
        urls = [p.url for p in procs]
        fleet = Fleet()
        clients = [
            Client(urls[i % 2 :] + urls[: i % 2], name=f"bot{i}", reconnect_timeout=60.0)
            for i in range(BOTS)
        ]
        bots = [Bot(c, fleet, seed=i) for i, c in enumerate(clients)]
        # The primary of the most buckets in play: the one whose games the kill stalls.
        primary_of = {b: cluster.primary_of(bucket_slot(b)) for b in range(BUCKETS)}
        try:
            async with asyncio.timeout(TIMEOUT):
                for client in clients:
                    await client.open()
                tasks = [asyncio.create_task(b.run()) for b in bots]
                while len(fleet.acked) < MOVES_BEFORE or len(fleet.seated) < BOTS // 2:
                    assert not any(t.done() for t in tasks), [t.result() for t in tasks if t.done()]
                    await asyncio.sleep(0.02)
                victim = 1  # not the first node, whose plain URL a server may start from
                killed = time.time()
                cluster.nodes[victim].kill()
                while len(fleet.acked) < MOVES_BEFORE + MOVES_AFTER:
                    assert not any(t.done() for t in tasks), [t.result() for t in tasks if t.done()]
                    await asyncio.sleep(0.05)
                fleet.stopping = True  # finish the games under way, queue no more
                await asyncio.gather(*tasks)
        finally:
            for client in clients:
                await client.close()
        async with open_store(cluster.cluster_url) as store:
            timeouts = []
            for game in fleet.seated:
                for entry in await store.events(game):
                    if entry.event.get("auto") == "timeout":
                        timeouts.append(
                            f"{game} seq {entry.seq} at {entry.time / 1000:.3f}: {entry.event}\n"
                            + fleet.story(game)
                        )
                data = (await store.load(game)).data
                assert data is not None and data["state"]["over"], f"{game} did not end"
        logs = "".join(p.log.read_text() for p in procs)
        outages = OUTAGE.findall(logs)
        moved = [int(b) for _, found in outages for b in found.split()]
        healthy = sorted({b for b in moved if primary_of[b] != victim})
        after = sum(a.at > killed for a in fleet.acked)
        print(
            f"acked {len(fleet.acked)} ({after} after the kill), "
            f"games {len(fleet.seated)}, unavailable {fleet.unavailable}, "
            f"refused as behind {fleet.refused}, timeouts {len(timeouts)}, "
            f"deadlines moved by an outage {sum(int(n) for n, _ in outages)}, "
            f"in buckets {sorted(set(moved))} (of healthy primaries: {healthy})"
        )
        assert not timeouts, "\n".join(timeouts)
        assert not healthy, f"buckets of healthy primaries held up: {healthy}"
    finally:
        await asyncio.to_thread(cluster.stop)
