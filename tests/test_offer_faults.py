"""Answers to offers and reports that once went wrong: raw frames from PROTOCOL.md
alone (tests/helpers/sockets.py), against a real server and Redis.

Answering a rematch that already started is `offer_closed`; a refused challenge
accept (`already_seated`) leaves the challenge open for a second accept and the
challenger's cancel; `start_table` answers with the table's `rated`; a connected
guest with no rating can be reported by player id; a chat line can be reported
after its speaker was blocked.
"""

from __future__ import annotations

from typing import Any

import pytest

from helpers.sockets import RawClient

Message = dict[str, Any]
SHORT = {"turn_time": 0.3, "answer_time": 0.3, "auto_delay": 0.2, "challenges_per_hour": 100}


async def over(sock: RawClient, game: str) -> None:
    """Wait for the game's last event."""
    while (await sock.expect(timeout=60, type="event", game=game))["event"]["kind"] != "over":
        pass


@pytest.mark.slow
async def test_answering_a_started_rematch_is_offer_closed(moose_server, ws_client):
    url = await moose_server(**SHORT)
    alice, bob = await ws_client(url, "alice"), await ws_client(url, "bob")
    table = await alice.request("create_table", players=2)
    assert (await bob.request("join_table", code=table["code"]))["type"] == "table"
    started = await alice.request("start_table", code=table["code"])
    assert started["type"] == "table" and started["rated"] is False, started
    old = (await alice.expect(type="match"))["game"]
    await over(alice, old)
    assert (await alice.request("rematch", game=old))["status"] == "open"
    accepted = await bob.request("rematch_accept", game=old)
    assert accepted["status"] == "started", accepted
    for sock in (alice, bob):
        again = await sock.request("rematch_accept", game=old)
        assert again["type"] == "error" and again["code"] == "offer_closed", again
        assert again["next"] == accepted["next"], again
        declined = await sock.request("rematch_decline", game=old)
        assert declined["type"] == "error" and declined["code"] == "offer_closed", declined


async def test_a_refused_accept_leaves_the_challenge_open(moose_server, ws_client):
    url = await moose_server(challenges_per_hour=100)
    alice, bob = await ws_client(url, "alice"), await ws_client(url, "bob")
    table = await alice.request("create_table", players=3)
    sent = await alice.request("challenge", name=bob.player, players=3, open=True)
    await bob.expect(type="challenge_offer", challenge=sent["challenge"])
    refused = await bob.request("challenge_accept", challenge=sent["challenge"])
    assert refused["code"] == "already_seated", refused
    # alice leaves her table: bob's second accept starts the challenge's table.
    assert (await alice.request("leave_table", code=table["code"]))["type"] in ("left", "table")
    second = await bob.request("challenge_accept", challenge=sent["challenge"])
    assert second["type"] == "challenge_offer" and second["status"] == "started", second


async def test_a_guest_without_a_rating_is_reported_by_id(moose_server, ws_client):
    url = await moose_server()
    alice, bob = await ws_client(url, "alice"), await ws_client(url, "bob")
    answer = await alice.request("report", player=bob.player, reason="rude name")
    assert answer["type"] == "reported" and answer["player"] == bob.player, answer


async def test_a_chat_line_is_reported_after_its_speaker_is_blocked(moose_server, ws_client):
    url = await moose_server()
    alice, bob = await ws_client(url, "alice"), await ws_client(url, "bob")
    table = await alice.request("create_table", players=2)
    assert (await bob.request("join_table", code=table["code"]))["type"] == "table"
    said = await bob.request("say", code=table["code"], text="rude words")
    line = await alice.expect(type="chat", text="rude words")
    assert (await alice.request("block", player=bob.player))["type"] == "blocked"
    answer = await alice.request(
        "report", player=bob.player, code=table["code"], chat=line["line"], reason="insults"
    )
    assert answer["type"] == "reported" and answer["player"] == bob.player, (answer, said)
