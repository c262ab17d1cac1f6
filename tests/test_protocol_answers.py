"""What PROTOCOL.md answers plainly, checked with raw frames against a real server:
a rematch's `waiting` in seat order, a challenge's seats (challenger at 0), line
and paragraph separators in chat, refused reports that use none of the meter,
and the look-alike suffixes counted from 1 beside seats counted from 0.
"""

from __future__ import annotations

import pytest

from helpers.sockets import RawClient

SHORT = {"turn_time": 0.3, "answer_time": 0.3, "auto_delay": 0.2, "challenges_per_hour": 100}


async def started(host: RawClient, others: list[RawClient]) -> tuple[str, str]:
    """A private table of these players, started: its game id and code."""
    table = await host.request("create_table", players=len(others) + 1)
    for sock in others:
        assert (await sock.request("join_table", code=table["code"]))["type"] == "table"
    assert (await host.request("start_table", code=table["code"]))["type"] == "table"
    return (await host.expect(type="match"))["game"], table["code"]


@pytest.mark.slow
async def test_a_rematch_waits_for_its_seats_in_seat_order(moose_server, ws_client):
    url = await moose_server(**SHORT)
    socks = [await ws_client(url, n) for n in ("ann", "bob", "cat", "dan")]
    game, _ = await started(socks[0], socks[1:])
    match = next(m for m in socks[0].received if m["type"] == "match")
    while (await socks[0].expect(timeout=60, type="event", game=game))["event"]["kind"] != "over":
        pass
    offer = await socks[2].request("rematch", game=game)  # cat offers: the others wait
    assert offer["seats"] == match["names"], offer
    assert offer["waiting"] == [n for n in match["names"] if n != "cat"], offer


async def test_the_challenger_sits_at_seat_0_and_the_challenged_at_seat_1(moose_server, ws_client):
    url = await moose_server(challenges_per_hour=100)
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    sent = await ann.request("challenge", name=bob.player, players=3)
    await bob.expect(type="challenge_offer", challenge=sent["challenge"])
    assert (await bob.request("challenge_accept", challenge=sent["challenge"]))["game"]
    seats = [(await s.expect(type="match"))["seat"] for s in (ann, bob)]
    assert seats == [0, 1]


async def test_line_and_paragraph_separators_in_chat_become_spaces(moose_server, ws_client):
    url = await moose_server()
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    table = await ann.request("create_table", players=2)
    assert (await bob.request("join_table", code=table["code"]))["type"] == "table"
    said = await ann.request("say", code=table["code"], text="one\u2028two\u2029 three\u0085four")
    assert said["type"] != "error", said
    heard = await bob.expect(type="chat", code=table["code"])
    assert heard["text"] == "one two three four", heard


async def test_refused_reports_use_none_of_the_meter(moose_server, ws_client):
    url = await moose_server()
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    for n in range(8):  # more than the 5 at once the meter allows
        refused = await ann.request("report", player=f"p_000000000{n}", reason="spam")
        assert refused["code"] == "no_such_player", refused
        empty = await ann.request("report", player=bob.player, reason="\u2028 ")
        assert empty["code"] == "bad_message", empty
    for _ in range(5):
        taken = await ann.request("report", player=bob.player, reason="spam")
        assert taken["type"] == "reported", taken
    sixth = await ann.request("report", player=bob.player, reason="spam")
    assert sixth["code"] == "rate_limited", sixth


async def test_look_alike_names_are_told_apart_by_seat_counted_from_1(moose_server, ws_client):
    url = await moose_server()
    first, second = await ws_client(url, "alice"), await ws_client(url, "ALICE")
    table = await first.request("create_table", players=2)
    joined = await second.request("join_table", code=table["code"])
    assert joined["type"] == "table", joined
    await first.request("start_table", code=table["code"])
    match = await second.expect(type="match")
    assert match["seat"] == 1 and match["names"] == ["alice #1", "ALICE #2"], match
