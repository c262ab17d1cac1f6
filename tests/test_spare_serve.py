"""An instance dies while its player is to move: two real `moose serve` instances
over one Redis, raw frames from PROTOCOL.md alone. The turn is not played when its
deadline falls due while the player is reconnecting: it moves `MOOSE_OUTAGE_GRACE`
on, once, and a player who reconnects to the other instance late in the turn
finds it there (`synced.deadline`); left unanswered, the turn then times out."""

from __future__ import annotations

import asyncio

from moose_server.storage.keys import GameKeys

from helpers import open_store, serve_several, table_game

# A short turn; a heartbeat that shows a killed instance stale within a second.
ENV = {
    "MOOSE_TURN_TIME": "3",
    "MOOSE_ANSWER_TIME": "3",
    "MOOSE_INSTANCE_TTL": "1.5",
    "MOOSE_OUTAGE_GRACE": "4",
}


async def test_a_turn_is_spared_while_its_player_reconnects_from_a_dead_instance(
    moose_serve, redis_url, ws_client
):
    procs = serve_several(moose_serve, redis_url, ENV)
    clients = [await ws_client(p.url, name) for p, name in zip(procs, ("ann", "bob"), strict=True)]
    game, seats = await table_game(clients)
    starts = [await c.expect(type="event", game=game) for c in clients]
    to_act = starts[0]["view"]["to_act"]
    mover = seats.index(to_act)  # the client (and instance) of the seat to act
    first = starts[mover]
    assert first["legal"] and first["deadline"], first
    procs[mover].kill()
    other = clients[1 - mover]
    async with open_store(redis_url) as store:
        hash_key = GameKeys.of(game, store.buckets).game
        async with asyncio.timeout(30):  # the deadline falls due: spared, not played
            while await store.redis.hget(hash_key, "spared") is None:
                await asyncio.sleep(0.05)
        loaded = await store.load(game)
    assert loaded.version == first["seq"]
    assert loaded.deadline > first["deadline"]
    assert not [m for m in other.received if m.get("event", {}).get("auto") == "timeout"]

    # Late in the turn the player reconnects, to the instance that is left.
    back = await ws_client(procs[1 - mover].url, None)
    welcome = await back.hello(token=clients[mover].token)
    assert welcome["type"] == "welcome" and welcome["player"] == clients[mover].player
    synced = await back.request("sync", game=game, since=first["seq"])
    assert synced["type"] == "synced" and synced["seq"] == first["seq"], synced
    assert synced["deadline"] == loaded.deadline > first["deadline"], synced
    # Unanswered, the same turn is not spared again: it times out.
    played = await back.expect(timeout=20, type="event", game=game)
    assert played["event"]["auto"] == "timeout" and played["event"]["seat"] == to_act, played
