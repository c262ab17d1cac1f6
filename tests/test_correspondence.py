"""Correspondence games over the wire: raw protocol clients against a real server.

A private table or a challenge with `days` deals a game whose turn lasts that many
days (read from the seat's `deadline`, never waited for); a `days` outside the
list is refused and changes nothing; a deadline made due in Redis still plays for
the seat, and a seat that keeps timing out is away until its player sends
anything.
"""

from __future__ import annotations

from typing import Any

import pytest

import moose
from moose import rules

from helpers import make_due, open_games, stacked_deck

Message = dict[str, Any]
DAY_MS = 86_400_000


async def days_game(host: Any, guest: Any, days: int) -> tuple[Message, Message]:
    """A two-seat private table of `days` per move, started: each seat's `match`."""
    table = await host.request("create_table", players=2, days=days)
    assert table["type"] == "table" and table["days"] == days, table
    joined = await guest.request("join_table", code=table["code"])
    assert joined["days"] == days, joined
    assert (await host.request("start_table", code=table["code"]))["days"] == days
    return await host.expect(type="match"), await guest.expect(type="match")


async def state_of(client: Any, game: str) -> tuple[Message, Message]:
    """`sync` with no `since`: the `synced` answer and the `state` event sent before it."""
    synced = await client.request("sync", game=game)
    assert synced["type"] == "synced", synced
    while (event := await client.expect(type="event", game=game))["event"]["kind"] != "state":
        pass
    return synced, event


@pytest.mark.parametrize("days", [3, 14])
async def test_a_days_table_s_turn_lasts_that_many_days(url, ws_client, days):
    host, guest = await ws_client(url, "ann", binary=False), await ws_client(url, "bob")
    match, _ = await days_game(host, guest, days)
    assert match["days"] == days
    start = await host.expect(type="event", game=match["game"])
    assert start["event"]["kind"] == "start" and start["event"]["days"] == days
    seen = [await state_of(c, match["game"]) for c in (host, guest)]
    assert all(state["event"]["days"] == days for _, state in seen)
    ((synced, state),) = [(s, e) for s, e in seen if e["deadline"] is not None]  # to act
    assert synced["deadline"] == state["deadline"]
    assert abs(state["deadline"] - state["server_time"] - days * DAY_MS) < 60_000


async def test_a_real_time_table_has_no_days(url, ws_client):
    host = await ws_client(url, "ann")
    table = await host.request("create_table", players=2)
    assert table["type"] == "table" and "days" not in table


@pytest.mark.parametrize("days", [0, 4, 15, -1, 1.5, "3", True])
async def test_days_outside_the_list_are_refused_and_change_nothing(url, ws_client, days):
    host, other = await ws_client(url, "ann"), await ws_client(url, "bob")
    refused = await host.request("create_table", players=2, days=days)
    assert refused["type"] == "error" and refused["code"] == "bad_message", refused
    challenged = await host.request("challenge", name=other.player, days=days)
    assert challenged["type"] == "error" and challenged["code"] == "bad_message"
    table = await host.request("create_table", players=2, days=1)  # not seated before
    assert table["type"] == "table" and table["days"] == 1


async def next_event(client: Any, game: str, **fields: Any) -> Message:
    """The client's next event of the game whose `event` has these fields."""
    while True:
        msg = await client.expect(type="event", game=game)
        if all(msg["event"].get(k) == v for k, v in fields.items()):
            return msg


async def test_a_seat_out_of_days_is_played_for_then_away_until_it_is_back(
    url, redis_url, ws_client
):
    host, guest = await ws_client(url, "ann"), await ws_client(url, "bob")
    match, guest_match = await days_game(host, guest, 1)
    game, seats = match["game"], {match["seat"]: host, guest_match["seat"]: guest}
    timeouts: list[int] = []
    async with open_games(redis_url) as games:  # reads the game: no player sends anything
        for _ in range(20):  # the seats time out in turn until one is away
            stored = await games.load(game)
            if any(stored.away):
                break
            seat = rules.to_act(stored.state)
            await make_due(redis_url, game)
            played = await next_event(host, game, kind="move", seat=seat)
            assert played["event"]["auto"] == "timeout" and played["seq"] > stored.version
            timeouts.append(seat)
            last = played["seq"]
    (away,) = [i for i, gone in enumerate(stored.away) if gone]
    assert timeouts.count(away) == 2  # its second timeout: away, as in real time
    present = seats[1 - away]
    turn = await next_event(present, game)  # the away seat is played at once: then ours
    while turn["seq"] < last or turn["deadline"] is None:
        turn = await next_event(present, game)
    assert abs(turn["deadline"] - turn["server_time"] - DAY_MS) < 60_000
    assert (await seats[away].request("ping"))["type"] == "pong"  # anything brings it back
    back = await next_event(present, game, kind="back")
    assert back["event"]["seat"] == away


async def bot_game(host: Any, days: int | None) -> Message:
    """A table of the host and a bot (`days` per move, or real time), started: the answer
    to `start_table`, or the refusal of the first request refused."""
    table = await host.request("create_table", players=2, **({"days": days} if days else {}))
    if table["type"] == "error":
        return table
    assert (await host.request("add_bot", code=table["code"], bot="random"))["type"] == "table"
    return await host.request("start_table", code=table["code"])


async def test_correspondence_games_have_a_cap_of_their_own(serve, ws_client):
    url = (await serve(correspondence_games=2, games_per_player=1, turn_time=3600)).url
    ann = await ws_client(url, "ann")
    for _ in range(2):
        assert (await bot_game(ann, 7))["type"] == "table"
    refused = await ann.request("create_table", players=2, days=7)
    assert refused["type"] == "error" and refused["code"] == "too_many_games", refused
    assert "correspondence" in refused["message"]
    assert (await bot_game(ann, None))["type"] == "table"  # real time: its own cap of 1
    refused = await ann.request("create_table", players=2)
    assert refused["code"] == "too_many_games" and "correspondence" not in refused["message"]
    assert (await ann.request("queue"))["code"] == "too_many_games"


async def test_a_days_challenge_deals_a_correspondence_game_within_its_cap(serve, ws_client):
    url = (await serve(correspondence_games=1)).url
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    offer = await ann.request("challenge", name=bob.player, days=5)
    assert offer["type"] == "challenge_offer" and offer["days"] == 5, offer
    heard = await bob.expect(type="challenge_offer")
    assert heard["days"] == 5
    accepted = await bob.request("challenge_accept", challenge=offer["challenge"])
    assert accepted["status"] == "started", accepted
    match = await bob.expect(type="match")
    assert match["days"] == 5
    again = await ann.request("challenge", name=bob.player, days=5)
    refused = await bob.request("challenge_accept", challenge=again["challenge"])
    assert refused["type"] == "error" and refused["code"] == "too_many_games", refused
    real_time = await ann.request("challenge", name=bob.player)
    started = await bob.request("challenge_accept", challenge=real_time["challenge"])
    assert started["status"] == "started" and "days" not in started


async def table_of(host: Any, guest: Any, days: int | None) -> str:
    """A two-seat table of host (seat 0) and guest (seat 1), started: its game id."""
    table = await host.request("create_table", players=2, **({"days": days} if days else {}))
    assert (await guest.request("join_table", code=table["code"]))["type"] == "table"
    assert (await host.request("start_table", code=table["code"]))["type"] == "table"
    game = (await host.expect(type="match"))["game"]
    assert (await guest.expect(type="match"))["game"] == game
    return str(game)


async def test_my_games_lists_your_moves_first_then_by_time_left(serve, ws_client):
    # Every game dealt from one deck, dealer seat 0: seat 1 (the guest) moves first.
    deck = ",".join(stacked_deck(2, [[], []], dealer=0))
    url = (await serve(test_deck=deck, turn_time=3600)).url
    ann, bob = await ws_client(url, "ann", binary=False), await ws_client(url, "bob")
    week = await table_of(bob, ann, 7)  # ann's move, 7 days
    day = await table_of(bob, ann, 1)  # ann's move, 1 day
    bobs_day = await table_of(ann, bob, 1)  # bob's move, 1 day
    bobs_hour = await table_of(ann, bob, None)  # bob's move, real time (an hour)
    mine = await ann.request("my_games")
    assert mine["type"] == "my_games", mine
    assert [g["game"] for g in mine["games"]] == [day, week, bobs_hour, bobs_day]
    assert [g["your_move"] for g in mine["games"]] == [True, True, False, False]
    assert [g["days"] for g in mine["games"]] == [1, 7, None, 1]
    first = mine["games"][0]
    assert first["opponents"] == ["bob"] and first["seat"] == 1 and first["to_act"] == 1
    assert abs(first["deadline"] - mine["server_time"] - DAY_MS) < 60_000
    theirs = await bob.request("my_games")
    assert [g["game"] for g in theirs["games"]] == [bobs_hour, bobs_day, day, week]
    assert [g["opponents"] for g in theirs["games"]] == [["ann"]] * 4


async def test_a_correspondence_ticket_waits_apart_and_outlives_its_socket(url, ws_client):
    ann = await ws_client(url, "ann")
    assert (await ann.request("queue", max_players=2))["type"] == "queued"  # real time
    ticket = await ann.request("queue", days=2)
    assert ticket["type"] == "queued" and ticket["days"] == 2 and not ticket["matched"]
    assert (await ann.request("leave_queue", days=5))["code"] == "not_queued"
    token = ann.token
    await ann.close()  # her last socket: the correspondence ticket stays
    bob = await ws_client(url, "bob")
    paired = await bob.request("queue", days=2)
    assert paired["type"] == "queued" and paired["matched"], paired
    match = await bob.expect(type="match")
    assert match["days"] == 2 and match["names"] == ["ann", "bob"] and match["seat"] == 1
    back = await ws_client(url, None)
    assert match["game"] in (await back.hello(token=token))["games"]
    again = await back.request("queue", days=2)  # nobody waits: queued, then withdrawn
    assert not again["matched"]
    left = await back.request("leave_queue", days=2)
    assert left["type"] == "left" and left["days"] == 2
    carol = await ws_client(url, "carol")
    assert not (await carol.request("queue", days=2))["matched"]  # ann's ticket was gone


async def test_the_rematch_of_a_correspondence_game_keeps_its_days(url, redis_url, ws_client):
    ann = await ws_client(url, "ann")
    assert (await bot_game(ann, 5))["days"] == 5
    game = (await ann.expect(type="match"))["game"]
    async with open_games(redis_url) as games:  # ann never moves: away, then abandoned
        while not (stored := await games.load(game)).finished:
            if rules.to_act(stored.state) == stored.seat_of(ann.player) and not any(stored.away):
                await make_due(redis_url, game)
            await ann.expect(type="event", game=game)  # whatever comes next
    offer = await ann.request("rematch", game=game)
    assert offer["type"] == "rematch_offer" and offer["status"] == "started", offer
    assert offer["days"] == 5
    match = await ann.expect(type="match", game=offer["next"])
    assert match["days"] == 5


async def test_a_four_seat_correspondence_game_across_two_instances_and_a_restart(serve, ws_client):
    one, two = await serve(), await serve()
    host = await ws_client(one.url, "ann")
    guests = [await ws_client(two.url, name) for name in ("bob", "cy", "dee")]
    table = await host.request("create_table", players=4, days=2)
    for guest in guests:
        assert (await guest.request("join_table", code=table["code"]))["days"] == 2
    assert (await host.request("start_table", code=table["code"]))["days"] == 2
    game = (await host.expect(type="match"))["game"]
    for guest in guests:
        assert (await guest.expect(type="match"))["days"] == 2
    await one.stop()  # ann's instance goes; she comes back on the other one
    ann = await ws_client(two.url, None)
    assert game in (await ann.hello(token=host.token))["games"]
    clients = [ann, *guests]
    seen = [await state_of(c, game) for c in clients]
    assert all(state["event"]["days"] == 2 for _, state in seen)
    pairs = zip(clients, seen, strict=True)
    ((client, state),) = [(c, state) for c, (synced, state) in pairs if synced["deadline"]]
    assert abs(state["deadline"] - state["server_time"] - 2 * DAY_MS) < 60_000
    move = {"game": game, "seq": state["seq"], "move": state["legal"][0]}
    assert (await client.request("move", **move))["type"] == "moved"


async def test_an_address_holds_its_correspondence_games_apart(serve, ws_client):
    url = (await serve(correspondence_games_per_address=2, games_per_address=1)).url
    ann, bob, cy = [await ws_client(url, name) for name in ("ann", "bob", "cy")]  # one address
    assert (await bot_game(ann, 3))["type"] == "table"
    assert (await bot_game(bob, 3))["type"] == "table"
    refused = await cy.request("create_table", players=2, days=3)
    assert refused["code"] == "too_many_games", refused
    assert (
        refused["message"]
        == "your address has too many unfinished correspondence games; finish one first"
    )
    assert (await bot_game(cy, None))["type"] == "table"  # real time: the address' own 1
    refused = await cy.request("queue")
    assert refused["message"].startswith("your address has too many unfinished games")


async def test_a_vacation_holds_the_clocks_within_the_year_s_allowance(serve, ws_client):
    url = (await serve(vacation_days=10)).url
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    match, _ = await days_game(ann, bob, 3)
    game, clients = match["game"], [ann, bob]
    assert (await ann.request("vacation", days=0))["code"] == "bad_message"
    away = await ann.request("vacation", days=7)
    assert away == {"type": "vacation", "days": 7, "games": [game], "left": 3, "id": away["id"]}
    seen = [await state_of(c, game) for c in clients]
    ((client, state),) = [(c, s) for c, (y, s) in zip(clients, seen, strict=True) if y["deadline"]]
    assert abs(state["deadline"] - state["server_time"] - 10 * DAY_MS) < 60_000  # 7 + a turn
    move = {"game": game, "seq": state["seq"], "move": state["legal"][0]}
    assert (await client.request("move", **move))["type"] == "moved"
    other = bob if client is ann else ann
    turn = await next_event(other, game)
    while turn["seq"] <= state["seq"] or turn["deadline"] is None:
        turn = await next_event(other, game)
    assert abs(turn["deadline"] - turn["server_time"] - 10 * DAY_MS) < 60_000  # still held
    refused = await ann.request("vacation", days=4)
    assert refused["code"] == "not_allowed" and "3 vacation days left" in refused["message"]
    assert (await ann.request("vacation", days=3))["left"] == 0  # the refusal took none


async def test_the_client_library_plays_correspondence_games(url):
    async with moose.connect(url, name="ann") as ann, moose.connect(url, name="bob") as bob:
        table = await ann.create_table(2, days=3)
        assert table["days"] == 3
        await bob.join_table(table["code"])
        await ann.start_table(table["code"])
        offer = await ann.challenge(bob.player, days=7)
        assert offer["days"] == 7
        await bob.challenge_accept(offer["challenge"])
        mine = await ann.my_games()
        assert sorted(g["days"] for g in mine) == [3, 7]
        held = await bob.vacation(1)
        assert sorted(held["games"]) == sorted(g["game"] for g in mine)
