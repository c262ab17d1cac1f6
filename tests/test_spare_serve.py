"""An instance dies while its player is to move: three real `moose serve` instances
over one Redis, raw frames from PROTOCOL.md alone. The turn is not played when its
deadline falls due while the player is reconnecting: it moves `MOOSE_OUTAGE_GRACE`
on, once; every other socket of the game, the other seat and a spectator on the
two instances left (so one of them on an instance that did not move it), is told
so by a `deadline` message that shows nothing hidden and changes nothing else. A
player who reconnects late in the turn finds the new deadline there
(`synced.deadline`); left unanswered, the turn then times out."""

from __future__ import annotations

import asyncio

from moose_server.storage.keys import GameKeys

from helpers import card_codes, open_store, serve_several, table_game

# A short turn; a heartbeat that shows a killed instance stale within a second.
ENV = {
    "MOOSE_TURN_TIME": "3",
    "MOOSE_ANSWER_TIME": "3",
    "MOOSE_INSTANCE_TTL": "1.5",
    "MOOSE_OUTAGE_GRACE": "4",
}
DEADLINE_FIELDS = {"type", "game", "seq", "to_act", "deadline", "server_time", "reason"}


async def test_a_turn_is_spared_while_its_player_reconnects_from_a_dead_instance(
    moose_serve, redis_url, ws_client
):
    procs = serve_several(moose_serve, redis_url, ENV, count=3)
    names = ("ann", "bob")
    clients = [await ws_client(p.url, name) for p, name in zip(procs, names, strict=False)]
    codes: list[str] = []
    game, seats = await table_game(clients, codes=codes)
    starts = [await c.expect(type="event", game=game) for c in clients]
    to_act = starts[0]["view"]["to_act"]
    mover = seats.index(to_act)  # the client (and instance) of the seat to act
    first = starts[mover]
    assert first["legal"] and first["deadline"], first
    # A spectator on the third instance.
    watcher = await ws_client(procs[2].url, "carol")
    assert (await watcher.request("watch", game=game, code=codes[0]))["type"] == "watching"
    watched = await watcher.expect(type="event", game=game)
    assert watched["seq"] == first["seq"], watched
    async with open_store(redis_url) as store:
        hash_key = GameKeys.of(game, store.buckets).game
        data = await store.redis.hget(hash_key, "data")
        procs[mover].kill()
        other = clients[1 - mover]
        async with asyncio.timeout(30):  # the deadline falls due: spared, not played
            while await store.redis.hget(hash_key, "spared") is None:
                await asyncio.sleep(0.05)
        loaded = await store.load(game)
        assert await store.redis.hget(hash_key, "data") == data  # the game is as it was
    assert loaded.version == first["seq"]
    assert loaded.deadline > first["deadline"]

    # The other seat and the spectator, each on an instance of its own, are told.
    told = [await c.expect(type="deadline", game=game) for c in (other, watcher)]
    for message in told:
        assert set(message) == DEADLINE_FIELDS, message  # no view, hand nor legal move
        assert not card_codes(message), message
        assert message["seq"] == first["seq"] and message["to_act"] == to_act, message
        assert message["deadline"] == loaded.deadline, message
        assert message["reason"] == "spared", message
        assert first["server_time"] < message["server_time"] < message["deadline"], message
    assert told[0] == told[1]
    for client in (other, watcher):  # no event came: the seq stays
        assert [m["seq"] for m in client.received if m.get("type") == "event"] == [first["seq"]]
    # The game as it is now: the same seq and view, the new deadline only.
    again = await other.request("sync", game=game)
    assert again["type"] == "synced" and again["seq"] == first["seq"], again
    state = await other.expect(type="event", game=game)
    assert state["event"]["kind"] == "state" and state["seq"] == first["seq"], state
    assert state["view"] == starts[1 - mover]["view"], state

    # Late in the turn the player reconnects, to an instance that is left.
    back = await ws_client(procs[1 - mover].url, None)
    welcome = await back.hello(token=clients[mover].token)
    assert welcome["type"] == "welcome" and welcome["player"] == clients[mover].player
    synced = await back.request("sync", game=game, since=first["seq"])
    assert synced["type"] == "synced" and synced["seq"] == first["seq"], synced
    assert synced["deadline"] == loaded.deadline > first["deadline"], synced
    # Unanswered, the same turn is not spared again: it times out.
    played = await back.expect(timeout=20, type="event", game=game)
    assert played["event"]["auto"] == "timeout" and played["event"]["seat"] == to_act, played
