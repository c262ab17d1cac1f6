"""Whole games over real sockets: private tables, the queue, bots, several instances.

Raw aiohttp WebSockets (msgpack and JSON mixed), a real redis-server. Every test
also checks what each seat received: seqs without gaps, views equal to
`rules.view` of the replayed record, and no card a seat may not see.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis

from moose_server.storage.keys import mm_key

from helpers import (
    card_codes,
    check_game,
    check_no_leak,
    keys_of,
    play_out,
    replay_states,
    table_game,
)

Message = dict[str, Any]


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
async def test_full_private_table_game_over_two_instances(players, moose_server, ws_client):
    urls = [await moose_server(), await moose_server()]
    clients = [await ws_client(urls[i % 2], f"seat{i}", binary=i % 2 == 0) for i in range(players)]
    game, seats = await table_game(clients)
    all_events = await asyncio.gather(*(play_out(c, game, seed=i) for i, c in enumerate(clients)))
    for client, seat, events in zip(clients, seats, all_events, strict=True):
        record = await check_game(client, game, seat, events)
    assert record["names"] == [f"seat{i}" for i in range(players)]
    for client in clients:  # every other frame a seat got keeps the secrets too
        for msg in client.received:
            assert msg["type"] != "error", msg
            if msg["type"] not in ("event", "record"):  # events: checked above
                assert not card_codes(msg) and not {"hands", "deck", "draw"} & set(keys_of(msg))


async def test_humans_and_bots_play_to_the_end(moose_server, ws_client):
    url = await moose_server()
    clients = [await ws_client(url, "ann"), await ws_client(url, "bea", binary=False)]
    game, seats = await table_game(clients, bots=("greedy", "random"))
    all_events = await asyncio.gather(*(play_out(c, game, seed=7) for c in clients))
    for client, seat, events in zip(clients, seats, all_events, strict=True):
        record = await check_game(client, game, seat, events)
    assert record["names"][2:] == ["greedy-bot 1", "random-bot 2"] or len(record["names"]) == 4
    autos = {e["event"]["auto"] for e in all_events[0] if e["event"]["kind"] == "move"}
    assert "bot" in autos


async def test_public_queue_seats_players_and_they_play(moose_server, ws_client):
    url = await moose_server(match_wait=0.1)
    clients = [await ws_client(url, "q1"), await ws_client(url, "q2", binary=False)]
    for client in clients:
        queued = await client.request("queue", min_players=2, max_players=2)
        assert queued["type"] == "queued" and queued["max_players"] == 2
    matches = [await c.expect(type="match") for c in clients]
    game = matches[0]["game"]
    assert {m["seat"] for m in matches} == {0, 1}
    all_events = await asyncio.gather(*(play_out(c, game, seed=3) for c in clients))
    for client, match, events in zip(clients, matches, all_events, strict=True):
        await check_game(client, game, match["seat"], events)


async def test_leave_queue_and_not_queued(moose_server, ws_client):
    client = await ws_client(await moose_server())
    assert (await client.request("queue", min_players=3, max_players=3))["type"] == "queued"
    again = await client.request("queue", min_players=3, max_players=3)
    assert again["code"] == "already_queued"
    assert (await client.request("leave_queue"))["type"] == "left"
    assert (await client.request("leave_queue"))["code"] == "not_queued"


async def test_a_queued_player_whose_socket_closes_leaves_the_queue(
    redis_url, moose_server, ws_client
):
    url = await moose_server()
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    assert (await ann.request("queue", min_players=3, max_players=3))["type"] == "queued"
    redis = aioredis.Redis.from_url(redis_url)
    try:
        assert await redis.hexists(mm_key("tickets"), ann.player)
        await ann.close()
        await bob.close()  # never queued: the server finds no ticket, and leaves it so
        async with asyncio.timeout(10):
            while await redis.hexists(mm_key("tickets"), ann.player):
                await asyncio.sleep(0.02)
        assert await redis.hlen(mm_key("tickets")) == 0
    finally:
        await redis.aclose()


async def test_spectator_sees_public_views_only(moose_server, ws_client):
    url = await moose_server()
    clients = [await ws_client(url, "pa"), await ws_client(url, "pb")]
    codes: list[str] = []
    game, _ = await table_game(clients, codes=codes)
    fan = await ws_client(await moose_server(), "fan", binary=False)
    watching = await fan.request("watch", game=game, code=codes[0])
    assert watching["type"] == "watching"
    first = await fan.expect(type="event", game=game)
    newcomer = {"rating": 540, "provisional": True}
    assert first["event"] == {
        "kind": "state",
        "names": ["pa", "pb"],
        "bots": [False, False],
        "ratings": [newcomer, newcomer],
        "away": [False, False],
    }
    assert first["seq"] == watching["seq"]
    player_events = await asyncio.gather(*(play_out(c, game, seed=5) for c in clients))
    seen = [first]
    while seen[-1]["event"]["kind"] != "over":
        seen.append(await fan.expect(type="event", game=game))
    assert [e["seq"] for e in seen] == list(range(first["seq"], seen[-1]["seq"] + 1))
    record = (await fan.request("record", game=game, code=codes[0]))["record"]
    states = replay_states(record, player_events[0])
    for msg in seen:
        check_no_leak(msg, None, states[msg["seq"] - 1])
        assert msg["deadline"] is None
    assert (await fan.request("unwatch", game=game))["type"] == "unwatched"


async def test_players_of_a_game_dealt_here_get_its_first_events_without_a_stream_read(
    redis_url, moose_server, ws_client
):
    """The dealing instance keeps a new game's events for its players' first delivery.

    (With bots at the table the kept events grow with the bots' moves: the test
    above plays such a game on one instance.)
    """
    url = await moose_server()
    clients = [await ws_client(url, "cid"), await ws_client(url, "dot", binary=False)]
    redis = aioredis.Redis.from_url(redis_url)
    await redis.config_resetstat()
    game, seats = await table_game(clients)
    first = [await c.expect(type="event", game=game) for c in clients]
    stats = await redis.info("commandstats")
    await redis.aclose()
    assert "cmdstat_xrange" not in stats, stats.get("cmdstat_xrange")
    assert [e["seq"] for e in first] == [1, 1] and first[0]["event"]["kind"] == "start"
    rests = await asyncio.gather(
        *(play_out(c, game, seed=s, first=f) for c, s, f in zip(clients, seats, first, strict=True))
    )
    for client, seat, events in zip(clients, seats, rests, strict=True):
        await check_game(client, game, seat, events)


async def test_a_private_game_is_watched_by_its_players_and_with_its_code(moose_server, ws_client):
    url = await moose_server()
    a, b, eve = [await ws_client(url, n) for n in ("ann", "bob", "eve")]
    codes: list[str] = []
    game, _ = await table_game([a, b], codes=codes)
    code = codes[0]
    # A stranger with the game id alone sees nothing; a wrong code neither.
    assert (await eve.request("watch", game=game))["code"] == "not_in_game"
    assert (await eve.request("record", game=game))["code"] == "not_in_game"
    wrong = "".join(sorted(code)) if "".join(sorted(code)) != code else code[::-1]
    assert (await eve.request("watch", game=game, code=wrong))["code"] == "bad_code"
    assert not [m for m in eve.received if m["type"] == "event"]
    # Its seated players, and whoever holds the join code (any case, dashes), may.
    assert (await b.request("watch", game=game))["type"] == "watching"
    dashed = f"{code[:4]}-{code[4:]}".lower()
    assert (await eve.request("watch", game=game, code=dashed))["type"] == "watching"
    state = await eve.expect(type="event", game=game)
    assert state["view"]["seat"] is None and "hand" not in state["view"]
    assert (await eve.request("record", game=game, code=code))["code"] == "not_over"


async def test_a_queue_game_is_watched_by_anyone(moose_server, ws_client):
    url = await moose_server()
    a, b, eve = [await ws_client(url, n) for n in ("ann", "bob", "eve")]
    for c in (a, b):
        assert (await c.request("queue", min_players=2, max_players=2))["type"] == "queued"
    game = (await a.expect(type="match"))["game"]
    assert (await eve.request("watch", game=game))["type"] == "watching"
    assert (await eve.request("record", game=game))["code"] == "not_over"


# -- abandoned games ---------------------------------------------------------------------


async def idle_until_over(client: Any, game: str) -> list[Message]:
    """Every event of the game until its `over`, without ever moving."""
    events = []
    while not events or events[-1]["event"]["kind"] != "over":
        events.append(await client.expect(type="event", game=game, timeout=30))
    return events


async def test_a_private_game_every_player_left_ends_abandoned(moose_server, ws_client):
    url = await moose_server(turn_time=0.3, answer_time=0.3)
    host = await ws_client(url, "host")
    game, [seat] = await table_game([host], bots=("greedy",))
    events = await idle_until_over(host, game)
    over = events[-1]["event"]
    assert over["abandoned"] is True and over["winners"] == [], over
    assert len(over["scores"]) == 2 and not events[-1]["view"]["over"]
    assert events[-1]["legal"] is None and events[-1]["deadline"] is None
    # Ended once the host's seat was away: not played out by the server.
    kinds = [e["event"]["kind"] for e in events]
    assert kinds.count("away") == 1 and kinds.index("away") == len(kinds) - 2
    timeouts = [e for e in events if e["event"].get("auto") == "timeout"]
    assert len(timeouts) == 2 and all(e["event"]["seat"] == seat for e in timeouts)
    # Its record replays as far as it went (no result: the rules never ended it).
    record = (await host.request("record", game=game))["record"]
    assert "result" not in record and len(record["moves"]) == len(kinds) - 3
    assert (await host.request("move", game=game, move={"action": "pass"}))["code"] == "game_over"
    # A state of it (sync, watch, a reconnect) says it ended.
    await host.request("sync", game=game)
    state = await host.expect(type="event", game=game)
    assert state["event"]["abandoned"] is True and state["event"]["scores"] == over["scores"]
    back = await ws_client(url, None)
    assert (await back.hello(token=host.token))["games"] == []


@pytest.mark.slow
async def test_a_rated_game_of_two_players_is_played_out_when_both_leave(moose_server, ws_client):
    url = await moose_server(turn_time=0.3, answer_time=0.3)
    a, b = await ws_client(url, "a"), await ws_client(url, "b")
    table = await a.request("create_table", players=2, rated=True)
    await b.request("join_table", code=table["code"])
    await a.request("start_table", code=table["code"])
    game = (await a.expect(type="match"))["game"]
    await b.expect(type="match")
    over = (await idle_until_over(a, game))[-1]
    assert "abandoned" not in over["event"] and over["view"]["over"]
    assert len(over["event"]["ratings"]) == 2  # walking away loses as before
