"""Follows and blocks name real players only, and one address adds a bounded number:
raw frames from PROTOCOL.md alone (tests/helpers/sockets.py), against a real server
and Redis.
"""

from __future__ import annotations


async def test_ids_that_never_were_are_refused_and_nothing_is_kept(moose_server, ws_client):
    url = await moose_server()
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    for kind in ("follow", "block"):
        refused = await ann.request(kind, player="p_0000000000")
        assert refused["type"] == "error" and refused["code"] == "no_such_player", refused
    assert (await ann.request("following"))["players"] == []
    assert (await ann.request("blocks"))["players"] == []
    # A guest who is connected is a player: found by id.
    followed = await ann.request("follow", player=bob.player)
    assert followed["type"] == "followed" and followed["name"] == "bob", followed


async def test_one_address_adds_follows_and_blocks_within_its_hour(moose_server, ws_client):
    url = await moose_server(social_adds_per_hour=3)
    ann, bob, cat, dan = [await ws_client(url, n) for n in ("ann", "bob", "cat", "dan")]
    assert (await ann.request("follow", player=bob.player))["type"] == "followed"
    assert (await ann.request("block", player=cat.player))["type"] == "blocked"
    assert (await bob.request("follow", player=cat.player))["type"] == "followed"  # same address
    limited = await ann.request("block", player=dan.player)
    assert limited["code"] == "rate_limited" and limited["retry_after"] > 0, limited
    assert [p["name"] for p in (await ann.request("blocks"))["players"]] == ["cat"]
    # Taking one back is always allowed.
    assert (await ann.request("unblock", player=cat.player))["type"] == "unblocked"
