"""A challenge to a player who blocked you is answered as one to a player who leaves it
unanswered, and never reaches them (the block list wired into challenges in app.py):
JSON frames from PROTOCOL.md alone (aiohttp and json, no project client code) against two server
instances over one Redis."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from helpers.wire import Wire

pytestmark = pytest.mark.slow  # two server instances, a few seconds under load

Message = dict[str, Any]
PASSWORD = "lantern moose quill 88"


async def hello(session: aiohttp.ClientSession, url: str, name: str) -> tuple[Wire, str]:
    """A socket of a new account called `name`: it and the player id."""
    wire = Wire(await session.ws_connect(url))
    welcome = await wire.ask("hello", protocol=1, name=name)
    assert welcome["type"] == "welcome", welcome
    assert (await wire.ask("register", password=PASSWORD))["type"] == "registered"
    return wire, welcome["player"]


async def test_a_blocked_challenger_cannot_tell_the_block(serve):
    one, two = [(await serve(instance_id=f"i_{n}", challenges_per_hour=1000)).url for n in range(2)]
    async with aiohttp.ClientSession() as session:
        alice, alice_id = await hello(session, one, "alice")
        bob, _ = await hello(session, two, "bob")
        carol, _ = await hello(session, two, "carol")
        assert (await bob.ask("block", player=alice_id))["type"] == "blocked"
        to_bob = await alice.ask("challenge", name="bob")
        to_carol = await alice.ask("challenge", name="carol")
        # One answer for both: alice cannot tell a block from a challenge left unanswered.
        assert to_bob["status"] == to_carol["status"] == "open", (to_bob, to_carol)
        assert set(to_bob) == set(to_carol)
        await carol.expect(type="challenge_offer", challenge=to_carol["challenge"])
        # Once bob unblocks her, her next challenge reaches him; the first never did.
        assert (await bob.ask("unblock", player=alice_id))["type"] == "unblocked"
        later = await alice.ask("challenge", name="bob")
        heard = await bob.expect(type="challenge_offer")
        assert heard["challenge"] == later["challenge"], (heard, to_bob)
