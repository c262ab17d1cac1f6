"""A player waiting in the public queue changes their range (`queue_range`) or asks
for bots in the empty seats (`queue_bots`), over raw sockets (PROTOCOL.md).

A refusal changes nothing: each refused request is followed by a positive event
showing the ticket as it was (a table of people formed from it, or its range).
"""

from __future__ import annotations

from typing import Any

from moose_server.matchmaking.matchmaker import Matchmaker, MatchOptions
from moose_server.storage.connection import open_redis

Message = dict[str, Any]


async def queued(client: Any, low: int, high: int) -> Message:
    """Queue the client for low..high seats; the `queued` answer."""
    answer = await client.request("queue", min_players=low, max_players=high)
    assert answer["type"] == "queued", answer
    return answer


async def test_asking_for_bots_seats_the_player_at_once_in_a_queue_game(moose_server, ws_client):
    url = await moose_server(queue_offer_after=0, match_wait=60, live_interval=0.1)
    ann = await ws_client(url, "ann")
    ticket = await queued(ann, 2, 4)
    assert ticket["queue_offer_after"] == 0 and ticket["bots"] is None
    answer = await ann.request("queue_bots", players=3)
    assert answer["type"] == "queued" and answer["bots"] == 3
    assert answer["server_time"] == ticket["server_time"]  # the same ticket
    match = await ann.expect(type="match")
    assert match["players"] == 3 and match["bots"].count(True) == 2
    assert match["bots"][match["seat"]] is False
    # A game of the public queue: listed among the live public games.
    listing = await ann.request("games", follow=True)
    while match["game"] not in [g["game"] for g in listing["games"]]:
        listing = await ann.expect(type="game_list", timeout=15)


async def test_bots_default_to_the_smallest_size_of_the_range(moose_server, ws_client):
    url = await moose_server(queue_offer_after=0, match_wait=60)
    ann = await ws_client(url, "ann")
    await queued(ann, 3, 5)
    assert (await ann.request("queue_bots"))["bots"] == 3
    assert (await ann.expect(type="match"))["players"] == 3


async def test_bots_asked_for_too_early_or_unqueued_are_refused_and_change_nothing(
    moose_server, ws_client
):
    url = await moose_server(queue_offer_after=600, match_wait=60)
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    refused = await ann.request("queue_bots")
    assert refused["type"] == "error" and refused["code"] == "not_queued"
    await queued(ann, 2, 2)
    early = await ann.request("queue_bots", players=2)
    assert early["type"] == "error" and early["code"] == "too_early"
    assert "600 s" in early["message"]
    for players in (3, 7, 1):  # outside her range, or outside 2..6
        bad = await ann.request("queue_bots", players=players)
        assert bad["type"] == "error" and bad["code"] == "bad_message", bad
    # Her ticket is as it was: bob's makes a table of two people with it.
    await queued(bob, 2, 2)
    match = await ann.expect(type="match")
    assert match["bots"] == [False, False] and sorted(match["names"]) == ["ann", "bob"]
    after = await ann.request("queue_bots")  # seated: no ticket any more
    assert after["type"] == "error" and after["code"] == "not_queued"


async def test_widening_the_range_forms_the_table_that_could_not_form(moose_server, ws_client):
    url = await moose_server(match_wait=0.2)
    ann, bob, cat = [await ws_client(url, name) for name in ("ann", "bob", "cat")]
    ticket = await queued(ann, 5, 6)
    await queued(bob, 3, 3)
    await queued(cat, 3, 3)
    # Nobody else waits for 5 or 6, and the 3s are 2: nothing forms however long they
    # wait. Asking for another range keeps her place and her ticket's time.
    widened = await ann.request("queue_range", min_players=3, max_players=6)
    assert widened["type"] == "queued", widened
    assert (widened["min_players"], widened["max_players"]) == (3, 6)
    assert widened["server_time"] == ticket["server_time"]
    match = await ann.expect(type="match")
    assert sorted(match["names"]) == ["ann", "bob", "cat"] and not any(match["bots"])


async def test_a_bad_range_or_no_ticket_is_refused_and_changes_nothing(moose_server, ws_client):
    url = await moose_server(match_wait=60)
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    refused = await ann.request("queue_range", min_players=2, max_players=6)
    assert refused["type"] == "error" and refused["code"] == "not_queued"
    await queued(ann, 2, 2)
    for low, high in ((4, 3), (1, 3), (2, 7)):
        bad = await ann.request("queue_range", min_players=low, max_players=high)
        assert bad["type"] == "error" and bad["code"] == "bad_message", bad
    wrong = await ann.request("queue_range", min_players="2", max_players=3)
    assert wrong["type"] == "error" and wrong["code"] == "bad_message"
    # Still waiting for a table of exactly 2: bob's ticket for 2 makes it.
    await queued(bob, 2, 2)
    match = await bob.expect(type="match")
    assert sorted(match["names"]) == ["ann", "bob"]


async def test_bots_asked_for_outside_a_narrowed_range_are_asked_no_more(redis_url):
    # The matchmaker alone (no dealer running rounds): nothing forms between the calls.
    backend = await open_redis(redis_url, 4)
    try:
        mm = Matchmaker(backend, MatchOptions(match_wait=60, offer_after=0))
        await mm.enqueue("p_ann", "ann", 2, 6)
        assert (await mm.ask_bots("p_ann", 5)).bots == 5
        narrowed = await mm.change_range("p_ann", 2, 3)
        assert narrowed.bots is None and narrowed.max_players == 3
        assert await mm.form_tables() == []  # alone, and no bots asked for any more
        assert (await mm.ask_bots("p_ann")).bots == 2
        [table] = await mm.form_tables()
        assert [s.player for s in table.seats] == ["p_ann", None] and table.source == "queue"
    finally:
        await backend.aclose()
