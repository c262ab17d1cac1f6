"""A player's setting of who may challenge them (everyone, registered players, people
they follow, nobody): raw frames from PROTOCOL.md alone (tests/helpers/sockets.py),
against two server instances over one real Redis.
"""

from __future__ import annotations

from typing import Any

from helpers.sockets import RawClient

Message = dict[str, Any]
PASSWORD = "lantern moose quill 88"


async def setting(sock: RawClient, value: str | None = None) -> Message:
    """`sock`'s challenge setting, changed to `value` when given."""
    fields = {} if value is None else {"challenges": value}
    return await sock.request("challenge_setting", **fields)


async def test_the_challenged_player_says_who_may_challenge_them(moose_server, ws_client):
    one = await moose_server(challenges_per_hour=100)
    two = await moose_server(challenges_per_hour=100)
    alice, bob = await ws_client(one, "alice"), await ws_client(two, "bob")
    carol = await ws_client(one, "carol")
    assert (await carol.request("register", password=PASSWORD))["type"] == "registered"
    assert (await setting(bob))["challenges"] == "everyone"  # the default
    assert (await setting(bob, "registered"))["challenges"] == "registered"
    refused = await alice.request("challenge", name=bob.player)
    assert refused["code"] == "not_allowed" and "bob" in refused["message"], refused
    allowed = [await carol.request("challenge", name=bob.player)]  # carol has an account
    assert allowed[0]["status"] == "open", allowed
    assert (await setting(bob, "following"))["challenges"] == "following"
    assert (await carol.request("challenge", name=bob.player))["code"] == "not_allowed"
    assert (await bob.request("follow", player=alice.player))["type"] == "followed"
    allowed.append(await alice.request("challenge", name=bob.player))
    assert allowed[-1]["status"] == "open", allowed
    # A block under "nobody" answers as for anyone: the setting, never the block.
    assert (await bob.request("block", player=carol.player))["type"] == "blocked"
    assert (await setting(bob, "nobody"))["challenges"] == "nobody"
    answers = [await s.request("challenge", name=bob.player) for s in (alice, carol)]
    assert [a["code"] for a in answers] == ["not_allowed"] * 2, answers
    assert answers[0]["message"] == answers[1]["message"] == "bob accepts no challenges"
    bad = await setting(bob, "friends")
    assert bad["code"] == "bad_message", bad
    # Kept with the player: another socket of bob, on the other instance, reads it.
    again = await ws_client(one, None)
    assert (await again.hello(token=bob.token))["type"] == "welcome"
    assert (await setting(again))["challenges"] == "nobody"
    # Only the allowed challenges reached bob: a later one proves the moment passed.
    assert (await setting(bob, "everyone"))["challenges"] == "everyone"
    last = await alice.request("challenge", name=bob.player)
    await bob.expect(type="challenge_offer", challenge=last["challenge"])
    heard = [m["challenge"] for m in bob.received if m["type"] == "challenge_offer"]
    assert heard == [a["challenge"] for a in [*allowed, last]], heard
