"""Challenges and rematches hold the limits of the queue and private tables: raw frames
from PROTOCOL.md alone (tests/helpers/sockets.py), against a real server and Redis.

An open challenge whose challenger sits at another table is refused naming the
challenger and never their join code; the cap of unfinished games holds for
accepting a challenge, for a challenge one sent being accepted and for accepting
a rematch (`too_many_games`, nothing started); a player seated by a challenge
leaves the queue.
"""

from __future__ import annotations

from typing import Any

import pytest

from helpers.sockets import RawClient

Message = dict[str, Any]
pytestmark = pytest.mark.slow  # a game abandoned by short turns: a few seconds


async def challenge(sender: RawClient, whom: RawClient, **fields: Any) -> Message:
    """`sender` challenges `whom`, who hears of it; the open offer."""
    sent = await sender.request("challenge", name=whom.player, **fields)  # a guest: by id
    assert sent["type"] == "challenge_offer" and sent["status"] == "open", sent
    await whom.expect(type="challenge_offer", challenge=sent["challenge"])
    return sent


async def test_a_refused_open_challenge_names_the_challenger_and_hides_their_code(
    moose_server, ws_client
):
    url = await moose_server(challenges_per_hour=100)
    alice, bob = await ws_client(url, "alice"), await ws_client(url, "bob")
    table = await alice.request("create_table", players=3)
    sent = await challenge(alice, bob, players=3, open=True)
    refused = await bob.request("challenge_accept", challenge=sent["challenge"])
    assert refused["type"] == "error" and refused["code"] == "already_seated", refused
    assert "alice" in refused["message"] and "you are" not in refused["message"], refused
    # Nothing changed: the challenge is still open (alice may cancel it), no table or
    # game came to bob, and no message to him ever held alice's join code.
    cancelled = await alice.request("challenge_cancel", challenge=sent["challenge"])
    assert cancelled["status"] == "cancelled", cancelled
    await bob.expect(type="challenge_offer", status="cancelled")
    assert table["code"] not in repr(bob.received)
    assert not [m for m in bob.received if m["type"] in ("table", "match")]


async def test_the_game_cap_holds_for_challenges_sent_accepted_and_rematches(
    moose_server, ws_client
):
    # One unfinished game each; short turns: an unrated game nobody plays is abandoned,
    # a rated one is played out by the server's bots (it stays unfinished a while).
    url = await moose_server(
        games_per_player=1, challenges_per_hour=100, turn_time=0.3, answer_time=0.3, auto_delay=0.2
    )
    alice, bob, carol = [await ws_client(url, n) for n in ("alice", "bob", "carol")]
    first = await challenge(alice, bob)
    assert (await bob.request("challenge_accept", challenge=first["challenge"]))["game"]
    old = (await alice.expect(type="match"))["game"]
    while (await alice.expect(timeout=60, type="event", game=old))["event"]["kind"] != "over":
        pass
    offer = await alice.request("rematch", game=old)
    assert offer["status"] == "open", offer
    busy = await challenge(carol, bob, rated=True)
    accepted = await bob.request("challenge_accept", challenge=busy["challenge"])
    assert accepted["status"] == "started", accepted  # bob now holds his one game
    # bob accepting a rematch, bob accepting a challenge, a challenge bob sent being
    # accepted: each refused, naming the right player, and nothing starts.
    again = await bob.request("rematch_accept", game=old)
    assert again["code"] == "too_many_games", again
    third = await challenge(alice, bob)
    mine = await bob.request("challenge_accept", challenge=third["challenge"])
    assert mine["code"] == "too_many_games" and "bob" not in mine["message"], mine
    fourth = await challenge(bob, alice)
    theirs = await alice.request("challenge_accept", challenge=fourth["challenge"])
    assert theirs["code"] == "too_many_games" and "bob" in theirs["message"], theirs
    for sent, by in ((third, alice), (fourth, bob)):  # both still open: they may be cancelled
        closed = await by.request("challenge_cancel", challenge=sent["challenge"])
        assert closed["status"] == "cancelled", closed
    matches = [m["game"] for m in bob.received if m["type"] == "match"]
    assert len(matches) == 2, matches  # the first game and carol's


@pytest.mark.parametrize("accepter", ["challenged", "challenger"])
async def test_a_player_seated_by_a_challenge_leaves_the_queue(moose_server, ws_client, accepter):
    url = await moose_server(challenges_per_hour=100)
    alice, bob = await ws_client(url, "alice"), await ws_client(url, "bob")
    queued = alice if accepter == "challenger" else bob
    answer = await queued.request("queue", min_players=6, max_players=6)
    assert answer["type"] == "queued", answer
    sent = await challenge(alice, bob)
    assert (await bob.request("challenge_accept", challenge=sent["challenge"]))["game"]
    await queued.expect(type="match")
    left = await queued.request("leave_queue")
    assert left["type"] == "error" and left["code"] == "not_queued", left


async def test_a_rematch_answered_after_it_expired_is_expired(moose_server, ws_client):
    url = await moose_server(turn_time=0.3, answer_time=0.3, auto_delay=0.2, rematch_wait=0.5)
    alice, bob = await ws_client(url, "alice"), await ws_client(url, "bob")
    table = await alice.request("create_table", players=2)
    assert (await bob.request("join_table", code=table["code"]))["type"] == "table"
    assert (await alice.request("start_table", code=table["code"]))["type"] == "table"
    old = (await alice.expect(type="match"))["game"]
    while (await alice.expect(timeout=60, type="event", game=old))["event"]["kind"] != "over":
        pass
    assert (await alice.request("rematch", game=old))["status"] == "open"
    await bob.expect(type="rematch_offer", status="expired", timeout=30)
    late = await bob.request("rematch_accept", game=old)
    assert late["type"] == "error" and late["code"] == "expired", late
