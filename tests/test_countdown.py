"""After a restart mid-turn a seat is told its real deadline.

A server that was down while a seat's time ran out moves that deadline to the
outage grace after it is back (lua/claim.lua). A client that reconnects and
`sync`s must learn that new deadline from the protocol alone (`synced.deadline`,
PROTOCOL.md), or its countdown shows the old one: about 0 s, while the server
waits 15 s. Raw JSON frames against a real `moose serve`, stopped and started
again on the same port and data folder.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import moose
from moose_server.storage.keys import instance_key, polled_key

from helpers import make_due, open_store, table_game, until

slow = pytest.mark.slow  # runs `moose serve`

Message = dict[str, Any]


async def my_turn(client: Any, game: str) -> Message:
    """The first event that asks this seat for a move (`legal` and `deadline` set)."""
    while True:
        event = await client.expect(type="event", game=game, timeout=30)
        if event["legal"] is not None:
            return event


@slow
async def test_a_seat_that_syncs_after_a_restart_is_told_its_moved_deadline(
    moose_serve, ws_client, tmp_path
):
    flags = ("--data-dir", str(tmp_path / "data"), "--turn-time", "8", "--drain-grace", "0.5")
    server = moose_serve(*flags)
    ann = await ws_client(server.url, "ann", binary=False)
    game, _ = await table_game([ann], bots=("greedy",))
    asked = await my_turn(ann, game)
    old = asked["deadline"]
    assert old - asked["server_time"] > 0
    server.stop()
    # Her time runs out while the service is down (Redis' clock is this host's).
    await asyncio.sleep(max(0.0, (old - time.time() * 1000) / 1000) + 1.0)
    again = moose_serve(*flags, port=server.port)
    back = await ws_client(again.url, None, binary=False)
    assert (await back.hello(token=ann.token))["games"] == [game]
    synced = await back.request("sync", game=game, since=asked["seq"])
    assert synced["type"] == "synced", synced
    now = (await back.request("ping"))["server_time"]
    assert synced["seq"] == asked["seq"]  # nothing was played meanwhile
    told = synced.get("deadline")
    assert told is not None, f"synced carries no deadline: {synced}"
    assert told > old
    assert told - now >= 10_000, f"only {told - now} ms left: {synced}"
    # A page loaded afresh syncs without `since`: its `state` tells the same deadline.
    whole = await back.request("sync", game=game)
    state = await back.expect(type="event", game=game, seq=asked["seq"])
    assert state["event"]["kind"] == "state"
    assert state["deadline"] == whole["deadline"] == told


async def test_synced_tells_the_seat_to_act_its_deadline_and_the_others_none(
    moose_server, ws_client
):
    url = await moose_server(turn_time=30)
    ann, bob = await ws_client(url, "ann", binary=False), await ws_client(url, "bob")
    game, _ = await table_game([ann, bob])
    first = {c: await c.expect(type="event", game=game, seq=1) for c in (ann, bob)}
    mover = next(c for c in (ann, bob) if first[c]["legal"] is not None)
    other = bob if mover is ann else ann
    told = await mover.request("sync", game=game, since=1)
    assert told["deadline"] == first[mover]["deadline"] is not None
    assert (await other.request("sync", game=game, since=1))["deadline"] is None
    whole = await other.request("sync", game=game)  # without `since`: a state, then synced
    assert (whole["type"], whole["seq"], whole["deadline"]) == ("synced", 1, None)


async def my_turn_against_a_bot(client: moose.Client) -> dict[str, Any]:
    """A table of two with a bot, started: the first event that asks the client to move."""
    code = (await client.create_table(2))["code"]
    await client.add_bot(code)
    await client.start_table(code)
    async for msg in client.events():
        if msg["type"] == "event" and msg.get("legal"):
            return msg
    raise AssertionError("the events ended before our turn")


async def next_deadline(client: Any) -> dict[str, Any]:
    """The next `deadline` message the client hears (a deadline moved without an event)."""
    async with asyncio.timeout(10):
        async for msg in client.events():
            if msg["type"] == "deadline":
                return msg
    raise AssertionError("the events ended before a deadline message")


async def test_the_client_library_takes_the_deadline_a_sync_tells(url, redis_url):
    async with moose.connect(url, name="alice") as client:
        msg = await my_turn_against_a_bot(client)
        game, seq = msg["game"], msg["seq"]
        assert client.deadline(game, seq) == msg["deadline"]
        # The deadline moves in Redis with no event, as an outage moves it (claim.lua).
        async with open_store(redis_url) as store:
            (moved,) = await store.defer([game], 120_000)
        assert moved > msg["deadline"]
        client._abort()  # the client reconnects and syncs

        async def told() -> bool:
            return client.deadline(game, seq) == moved

        await until(told, timeout=10)
        assert client.reconnects == 1


async def test_the_client_library_takes_the_deadline_of_a_spared_turn(moose_server, redis_url):
    # Heartbeats a long way apart: the one the test makes stale stays so.
    url = await moose_server(turn_time=600, outage_grace=60, instance_ttl=600, instance_id="i_s")
    async with moose.connect(url, name="alice") as client:
        msg = await my_turn_against_a_bot(client)
        game, seq = msg["game"], msg["seq"]
        assert client.deadline(game, seq) == msg["deadline"]
        # Her instance's heartbeat is stale, as that of one that died, and her time is
        # up: the deadline loop spares her turn, and her socket is told.
        async with open_store(redis_url) as store:
            await store.redis.pexpire(instance_key("i_s"), 60_000)
        await make_due(redis_url, game)
        told = await next_deadline(client)
        assert (told["game"], told["seq"], told["reason"]) == (game, seq, "spared"), told
        assert told["to_act"] == msg["view"]["seat"], told
        assert told["deadline"] - told["server_time"] == 60_000, told
        assert client.deadline(game, seq) == told["deadline"]  # its turn timer counts to it


@slow  # the deadline loop tells a second after the claim that moved it (timers.py)
async def test_the_client_library_takes_the_deadline_an_outage_moved(moose_server, redis_url):
    url = await moose_server(turn_time=30, outage_grace=60)
    async with moose.connect(url, name="alice") as client:
        msg = await my_turn_against_a_bot(client)
        game, seq = msg["game"], msg["seq"]
        assert client.deadline(game, seq) == msg["deadline"]
        # The bucket's poll stamp goes back, as when Redis comes back without its last
        # writes (claim.lua): the next claim moves every deadline within the grace, the
        # 30 s turn's among them, and her socket is told.
        async with open_store(redis_url) as store:
            polled = polled_key(store.bucket(game))
            stamp = int(await store.redis.get(polled) or 0)
            await store.redis.set(polled, stamp - 1000)
        told = await next_deadline(client)
        assert (told["game"], told["seq"], told["reason"]) == (game, seq, "outage"), told
        assert told["to_act"] == msg["view"]["seat"], told
        assert told["deadline"] > msg["deadline"], told
        assert client.deadline(game, seq) == told["deadline"]  # its turn timer counts to it
