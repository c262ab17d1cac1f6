"""Redis goes away for a moment mid-turn: two real `moose serve` instances over one
Redis (AOF on), raw frames from PROTOCOL.md alone. When Redis is back, the deadline
claim that finds the gap moves the turn's deadline `MOOSE_OUTAGE_GRACE` from then,
and every socket of the game, both seats and a spectator, each instance's, is told
so by one `deadline` message of reason `outage` that shows nothing hidden and
changes nothing else in the game."""

from __future__ import annotations

import asyncio

import pytest

from moose_server.storage.keys import GameKeys

from helpers import card_codes, open_store, serve_several, table_game

# A short turn, a longer grace: the turn's deadline falls within the grace after
# Redis is back, and is moved (claim.lua), whether it fell due meanwhile or not.
ENV = {"MOOSE_TURN_TIME": "4", "MOOSE_ANSWER_TIME": "4", "MOOSE_OUTAGE_GRACE": "10"}
DEADLINE_FIELDS = {"type", "game", "seq", "to_act", "deadline", "server_time", "reason"}


@pytest.mark.slow
async def test_every_socket_is_told_the_deadline_an_outage_moved(
    moose_serve, redis_factory, ws_client
):
    redis_server = redis_factory(appendonly=True)
    procs = serve_several(moose_serve, redis_server.url, ENV, count=2)
    ann, bob = [await ws_client(p.url, name) for p, name in zip(procs, ("ann", "bob"), strict=True)]
    codes: list[str] = []
    game, _ = await table_game([ann, bob], codes=codes)
    starts = [await c.expect(type="event", game=game) for c in (ann, bob)]
    first = next(e for e in starts if e["legal"])
    to_act = first["view"]["to_act"]
    watcher = await ws_client(procs[1].url, "carol")  # a spectator, on bob's instance
    assert (await watcher.request("watch", game=game, code=codes[0]))["type"] == "watching"
    assert (await watcher.expect(type="event", game=game))["seq"] == first["seq"]
    async with open_store(redis_server.url) as store:
        hash_key = GameKeys.of(game, store.buckets).game
        before = await store.redis.hgetall(hash_key)

    await asyncio.to_thread(redis_server.stop)  # SIGTERM: the AOF is written out
    await asyncio.sleep(1.5)  # longer than the outage threshold (1 s without a claim)
    await asyncio.to_thread(redis_server.start)

    clients = (ann, bob, watcher)
    told = [await c.expect(timeout=20, type="deadline", game=game) for c in clients]
    async with open_store(redis_server.url) as store:
        after = await store.redis.hgetall(hash_key)
        loaded = await store.load(game)
    for message in told:
        assert set(message) == DEADLINE_FIELDS, message  # no view, hand nor legal move
        assert not card_codes(message), message
        assert message["reason"] == "outage", message
        assert message["seq"] == first["seq"] and message["to_act"] == to_act, message
        assert message["deadline"] == loaded.deadline > first["deadline"], message
        assert first["server_time"] < message["server_time"] < message["deadline"], message
    assert told[0] == told[1] == told[2]  # one message, the same for seats and spectator
    # The stored game is as it was but for its deadline (and what defer.lua holds).
    moved = {b"dl", b"held"}
    assert {k: v for k, v in after.items() if k not in moved} == {
        k: v for k, v in before.items() if k not in moved
    }
    assert int(after[b"dl"]) == loaded.deadline != int(before[b"dl"])
    # No event came, and each socket was told once (a `sync` answered after it).
    for client, start in zip(clients, [*starts, None], strict=True):
        synced = await client.request("sync", game=game)
        assert synced["type"] == "synced" and synced["seq"] == first["seq"], synced
        if start is first:  # the seat to act's deadline as it is now
            assert synced["deadline"] == loaded.deadline, synced
        got = [m for m in client.received if m.get("game") == game]
        assert next(m["seq"] for m in got if m.get("type") == "event") == first["seq"]
        assert all(m["seq"] == first["seq"] for m in got if m.get("type") == "event")
        assert [m for m in got if m.get("type") == "deadline"] == [told[0]]
