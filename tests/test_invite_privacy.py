"""Blocks and private games keep their secrets: raw frames from PROTOCOL.md alone
(tests/helpers/sockets.py), against a real server and Redis.

A challenge to a player who blocks you is answered as one to a player who
ignores it; their rematch offers never reach the blocker either; a repeated
`rematch` pushes the other seats one offer; a stranger who knows a private
game's id cannot learn its players' ids by naming them with `follow`, `block`,
`unfollow`, `unblock` or `report`.
"""

from __future__ import annotations

from typing import Any

import pytest

from helpers.sockets import RawClient

Message = dict[str, Any]
# Short turns: a private unrated game nobody plays is abandoned (over) in seconds.
SHORT = {"turn_time": 0.3, "answer_time": 0.3, "auto_delay": 0.2, "challenges_per_hour": 100}

pytestmark = pytest.mark.slow  # a game abandoned by short turns: a few seconds


async def started_table(host: RawClient, others: list[RawClient]) -> tuple[str, str]:
    """A private table of these players, started: its game id and join code."""
    table = await host.request("create_table", players=len(others) + 1)
    for sock in others:
        assert (await sock.request("join_table", code=table["code"]))["type"] == "table"
    assert (await host.request("start_table", code=table["code"]))["type"] == "table"
    return (await host.expect(type="match"))["game"], table["code"]


async def over(sock: RawClient, game: str) -> None:
    """Wait for the game's last event."""
    while (await sock.expect(timeout=60, type="event", game=game))["event"]["kind"] != "over":
        pass


async def test_a_challenge_to_a_blocker_looks_ignored(moose_server, ws_client):
    url = await moose_server(**SHORT)
    alice, bob, carol = [await ws_client(url, n) for n in ("alice", "bob", "carol")]
    assert (await bob.request("block", player=alice.player))["type"] == "blocked"
    to_bob = await alice.request("challenge", name=bob.player)
    to_carol = await alice.request("challenge", name=carol.player)
    # The same answer for a blocker as for someone who will ignore it.
    for sent in (to_bob, to_carol):
        assert sent["type"] == "challenge_offer" and sent["status"] == "open", sent
    assert set(to_bob) == set(to_carol)
    await carol.expect(type="challenge_offer", challenge=to_carol["challenge"])
    for sent in (to_bob, to_carol):
        closed = await alice.request("challenge_cancel", challenge=sent["challenge"])
        assert closed["status"] == "cancelled", closed
    # Once bob unblocks her, her next challenge reaches him: the earlier one never did.
    assert (await bob.request("unblock", player=alice.player))["type"] == "unblocked"
    later = await alice.request("challenge", name=bob.player)
    await bob.expect(type="challenge_offer", challenge=later["challenge"])
    heard = [m for m in bob.received if m["type"] == "challenge_offer"]
    assert [m["challenge"] for m in heard] == [later["challenge"]], heard


async def test_rematch_offers_skip_a_blocker_and_are_pushed_once(moose_server, ws_client):
    url = await moose_server(**SHORT)
    alice, bob, carol = [await ws_client(url, n) for n in ("alice", "bob", "carol")]
    old, _ = await started_table(alice, [bob, carol])
    await over(alice, old)
    assert (await bob.request("block", player=alice.player))["type"] == "blocked"
    for _ in range(3):
        offer = await alice.request("rematch", game=old)
        assert offer["type"] == "rematch_offer" and offer["status"] == "open", offer
    # A later push to each proves the offers' pushes, had there been more, came first.
    assert (await bob.request("unblock", player=alice.player))["type"] == "unblocked"
    for sock in (bob, carol):
        sent = await alice.request("challenge", name=sock.player)
        await sock.expect(type="challenge_offer", challenge=sent["challenge"])
    pushed = {s.name: [m for m in s.received if m["type"] == "rematch_offer"] for s in (bob, carol)}
    assert pushed["bob"] == [], pushed
    assert len(pushed["carol"]) == 1 and pushed["carol"][0]["from"] == "alice", pushed


@pytest.mark.parametrize("kind", ["follow", "block", "unfollow", "unblock", "report"])
async def test_a_stranger_cannot_name_the_players_of_a_private_game(moose_server, ws_client, kind):
    url = await moose_server()
    alice, bob, erin = [await ws_client(url, n) for n in ("alice", "bob", "erin")]
    game, code = await started_table(alice, [bob])
    extra = {"reason": "spam"} if kind == "report" else {}
    refused = await erin.request(kind, player="alice", game=game, **extra)
    assert refused["type"] == "error" and refused["code"] == "not_in_game", refused
    assert alice.player not in repr(erin.received)
    assert (await erin.request("following"))["players"] == []
    assert (await erin.request("blocks"))["players"] == []
    # With the code she may watch it, and then name its players.
    assert (await erin.request("watch", game=game, code=code))["type"] == "watching"
    named = await erin.request(kind, player="alice", game=game, **extra)
    assert named["type"] != "error" and named["player"] == alice.player, named


@pytest.mark.parametrize("kind", ["say", "chat_history"])
async def test_chat_by_join_code_pays_the_guess_limit(moose_server, ws_client, kind):
    url = await moose_server(code_guesses=3, code_guess_interval=3600)
    alice, bob, erin = [await ws_client(url, n) for n in ("alice", "bob", "erin")]
    table = await alice.request("create_table", players=3)
    assert (await bob.request("join_table", code=table["code"]))["type"] == "table"
    fields = {"text": "hi"} if kind == "say" else {}
    real = await erin.request(kind, code=table["code"], **fields)
    wrong = await erin.request(kind, code="ZZZZZZZZ", **fields)
    # The same answer for a real table's code as for one no table has.
    assert real["code"] == wrong["code"] == "bad_code", (real, wrong)
    assert real["message"].replace(table["code"], "X") == wrong["message"].replace("ZZZZZZZZ", "X")
    # A seated player's line costs no guess; erin's never reached the table.
    assert (await bob.request("say", code=table["code"], text="ok"))["type"] == "said"
    await alice.expect(type="chat", code=table["code"])
    assert [m["name"] for m in alice.received if m["type"] == "chat"] == ["bob"]
    assert (await erin.request(kind, code="YYYYYYYY", **fields))["code"] == "bad_code"
    limited = await erin.request(kind, code=table["code"], **fields)
    assert limited["code"] == "rate_limited" and limited["retry_after"] > 0, limited
