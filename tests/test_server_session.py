"""Sessions: reconnecting with the token mid-game (to another instance) and sync."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from moose_server.storage.connection import open_redis
from moose_server.storage.store import Store

from helpers import check_game, play_in_order, play_out, table_game

Message = dict[str, Any]


async def test_reconnect_with_token_and_sync_resumes_the_game(moose_server, ws_client):
    urls = [await moose_server(), await moose_server()]
    a, b = await ws_client(urls[0], "ann"), await ws_client(urls[0], "bob")
    game, (seat_a, seat_b) = await table_game([a, b])
    seen_a: list[Message] = []
    seen_b: list[Message] = []
    bob = asyncio.create_task(play_in_order(b, game, random.Random(2), seen_b))
    rng_a = random.Random(1)
    await play_in_order(a, game, rng_a, seen_a, stop=12)
    await a.close()  # mid-game; bob moves on until it is ann's turn again

    back = await ws_client(urls[1], None, binary=False)  # another instance, JSON this time
    welcome = await back.hello(token=a.token)
    assert welcome["player"] == a.player and welcome["games"] == [game]
    synced = await back.request("sync", game=game, since=seen_a[-1]["seq"])
    assert synced["type"] == "synced" and synced["seq"] > seen_a[-1]["seq"]
    await play_in_order(back, game, rng_a, seen_a)
    await bob
    await check_game(back, game, seat_a, seen_a)
    await check_game(b, game, seat_b, seen_b)


_NEWCOMER = {"rating": 540, "provisional": True}
_TWO_NEWCOMERS = {"bots": [False, False], "ratings": [_NEWCOMER, _NEWCOMER]}


def _seats(start: dict) -> dict:
    """The seats' names, bot flags and ratings a `start` event gives (a `state` repeats them)."""
    return {k: start[k] for k in ("names", "bots", "ratings")}


async def test_sync_without_since_sends_the_current_state(moose_server, ws_client):
    url = await moose_server()
    a, b = await ws_client(url, "ann"), await ws_client(url, "bob")
    game, (seat_a, _) = await table_game([a, b])
    first = await a.expect(type="event", game=game, seq=1)
    synced = await a.request("sync", game=game)
    state = await a.expect(type="event", game=game, seq=synced["seq"])
    assert state["event"] == {"kind": "state", **_seats(first["event"]), "away": [False, False]}
    assert state["view"] == first["view"] and state["view"]["seat"] == seat_a
    assert state["legal"] == first["legal"] and state["deadline"] == first["deadline"]


async def test_state_events_name_the_seats_for_spectators_and_resumed_seats(
    moose_server, ws_client
):
    url = await moose_server()
    a, b = await ws_client(url, "ann"), await ws_client(url, "bob")
    codes: list[str] = []
    game, seats = await table_game([a, b], codes=codes)
    names = ["", ""]
    names[seats[0]], names[seats[1]] = "ann", "bob"
    fan = await ws_client(await moose_server(), "fan", binary=False)
    watching = await fan.request("watch", game=game, code=codes[0])
    state = await fan.expect(type="event", game=game, seq=watching["seq"])
    assert state["event"] == {
        "kind": "state",
        "names": names,
        **_TWO_NEWCOMERS,
        "away": [False, False],
    }
    await a.close()  # ann comes back on a new socket and asks for the state
    back = await ws_client(url, None)
    assert (await back.hello(token=a.token))["games"] == [game]
    synced = await back.request("sync", game=game)
    state = await back.expect(type="event", game=game, seq=synced["seq"])
    assert state["event"] == {
        "kind": "state",
        "names": names,
        **_TWO_NEWCOMERS,
        "away": [False, False],
    }
    assert state["view"]["seat"] == seats[0]


async def test_a_token_gives_the_same_player_on_any_instance(moose_server, ws_client):
    first = await ws_client(await moose_server(), "cleo")
    again = await ws_client(await moose_server(), None)
    welcome = await again.hello(token=first.token)
    assert (welcome["player"], welcome["name"]) == (first.player, "cleo")


async def test_invisible_names_are_refused_and_the_socket_can_say_hello_again(
    moose_server, ws_client
):
    client = await ws_client(await moose_server(), None)
    for name in ["\u3164", "\u3164\u3164", "\u0301\u0301", "\u2800", "a\u200bb", " \u00a0 "]:
        answer = await client.request("hello", protocol=1, name=name)
        assert answer["code"] == "bad_message", (name, answer)
    assert (await client.request("ping"))["code"] == "hello_required"  # no session yet
    welcome = await client.hello("  Zoë\u3000K ")
    assert welcome["type"] == "welcome" and welcome["name"] == "Zoë K"


async def test_look_alike_names_at_a_table_get_their_seat_number(moose_server, ws_client):
    url = await moose_server()
    clients = [await ws_client(url, n) for n in ("alice", "bob", "ALICE", "\u0430lice")]
    host = clients[0]
    code = (await host.request("create_table", players=4))["code"]
    answers = [await c.request("join_table", code=code) for c in clients[1:]]
    assert [s["name"] for s in answers[1]["seats"][:3]] == ["alice #1", "bob", "ALICE #3"]
    assert (await host.request("start_table", code=code))["type"] == "table"
    match = await clients[1].expect(type="match")
    names = ["alice #1", "bob", "ALICE #3", "\u0430lice #4"]
    assert match["names"] == names
    start = await clients[1].expect(type="event", game=match["game"], seq=1)
    assert start["event"]["names"] == names


async def test_welcome_names_the_private_table_a_returning_player_sits_at(moose_server, ws_client):
    url = await moose_server()
    host, guest = await ws_client(url, "hana"), await ws_client(url, "gus")
    table = await host.request("create_table", players=3)
    await guest.request("join_table", code=table["code"])
    latest = await host.request("add_bot", code=table["code"], bot="random")
    await guest.close()
    back = await ws_client(url, None, binary=False)
    welcome = await back.hello(token=guest.token)
    assert welcome["table"] == {k: v for k, v in latest.items() if k not in ("type", "id")}
    assert [s["name"] for s in welcome["table"]["seats"]] == ["hana", "gus", "random-bot 1"]
    assert welcome["table"]["seats"][1]["player"] == guest.player
    stranger = await ws_client(url, None)
    assert (await stranger.hello("sid"))["table"] is None  # a new player sits nowhere
    await host.request("start_table", code=table["code"])
    await back.expect(type="match")
    again = await ws_client(url, None)
    assert (await again.hello(token=guest.token))["table"] is None  # the table has started


async def test_a_late_sync_of_a_finished_game_gets_its_events_then_its_final_state(
    moose_server, ws_client, redis_url
):
    url = await moose_server(game_grace=0.5)
    a, b = await ws_client(url, "ann"), await ws_client(url, "bob")
    codes: list[str] = []
    game, (seat_a, _) = await table_game([a, b], codes=codes)
    events, _ = await asyncio.gather(play_out(a, game, seed=1), play_out(b, game, seed=2))
    over = events[-1]
    synced = await a.request("sync", game=game, since=over["seq"] - 2)  # in the grace
    again = [await a.expect(type="event", game=game) for _ in range(2)]
    assert synced["seq"] == over["seq"] and [e["seq"] for e in again] == [
        over["seq"] - 1,
        over["seq"],
    ]
    assert again[-1] == over
    store = Store(await open_redis(redis_url, 2), 16)
    async with asyncio.timeout(30):  # the grace ends: Redis drops the game's events
        while await store.redis.exists(store.keys_of(game).events):
            await asyncio.sleep(0.05)
    await store.redis.aclose()
    synced = await a.request("sync", game=game, since=over["seq"] - 2)
    state = await a.expect(type="event", game=game, seq=synced["seq"])
    assert synced["seq"] == over["seq"] and state["event"]["kind"] == "state"
    assert state["view"] == over["view"] and state["view"]["seat"] == seat_a
    record = await a.request("record", game=game)
    moves = [e for e in events if e["event"]["kind"] == "move"]
    assert record["type"] == "record" and len(record["record"]["moves"]) == len(moves)
    # A spectator past the grace: the final public view, no hand, and nothing more.
    cat = await ws_client(url, "cat")
    watching = await cat.request("watch", game=game, code=codes[0])
    seen = await cat.expect(type="event", game=game, seq=watching["seq"])
    assert watching["seq"] == over["seq"] and seen["event"]["kind"] == "state"
    assert seen["view"]["over"] and seen["view"]["seat"] is None and seen["legal"] is None
    assert "hand" not in seen["view"]
