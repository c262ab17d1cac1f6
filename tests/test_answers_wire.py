"""A chat line can be reported after its speaker is blocked, and a connected guest by
id; start_table says whether its game is rated: raw frames from PROTOCOL.md alone
(tests/helpers/sockets.py), against a real server and Redis."""

from __future__ import annotations


async def test_a_blocked_speakers_line_can_still_be_reported(moose_server, ws_client):
    url = await moose_server()
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    table = await ann.request("create_table", players=2)
    assert (await bob.request("join_table", code=table["code"]))["type"] == "table"
    said = await bob.request("say", code=table["code"], text="rude words")
    assert said["type"] == "said", said
    await ann.expect(type="chat", line=said["line"])
    assert (await ann.request("block", player=bob.player))["type"] == "blocked"
    history = await ann.request("chat_history", code=table["code"])
    assert history["lines"] == []  # blocked: not shown to ann any more
    reported = await ann.request(
        "report", player="anyone", code=table["code"], chat=said["line"], reason="insults"
    )
    assert reported["type"] == "reported" and reported["player"] == bob.player, reported


async def test_start_tables_answer_says_whether_the_game_is_rated(moose_server, ws_client):
    url = await moose_server()
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    table = await ann.request("create_table", players=3, rated=True)
    assert (await bob.request("join_table", code=table["code"]))["type"] == "table"
    started = await ann.request("start_table", code=table["code"])
    assert started["type"] == "table" and started["rated"] is True, started
    assert started["players"] == 2 and len(started["seats"]) == 2, started


async def test_a_connected_guest_is_reported_by_id(moose_server, ws_client):
    url = await moose_server()
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    reported = await ann.request("report", player=bob.player, reason="rude name")
    assert reported["type"] == "reported" and reported["name"] == "bob", reported
    nobody = await ann.request("report", player="p_0000000000", reason="rude name")
    assert nobody["code"] == "no_such_player", nobody
