"""A challenge to a player who blocked you is refused exactly as one to a player who
is offline (the block list wired into challenges in app.py): JSON frames from
PROTOCOL.md alone (aiohttp and json, no project client code) against two server
instances over one Redis."""

from __future__ import annotations

import asyncio
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


async def offline_refusal(alice: Wire, name: str) -> Message:
    """alice's challenge to `name` once their instance has seen them leave."""
    while (sent := await alice.ask("challenge", name=name)).get("status") == "open":
        await alice.ask("challenge_cancel", challenge=sent["challenge"])  # not yet noticed
        await asyncio.sleep(0.05)
    return sent


async def test_a_blocked_challenger_is_refused_as_if_the_blocker_were_offline(serve):
    one, two = [(await serve(instance_id=f"i_{n}", challenges_per_hour=1000)).url for n in range(2)]
    async with aiohttp.ClientSession() as session:
        alice, alice_id = await hello(session, one, "alice")
        bob, _ = await hello(session, two, "bob")
        carol, _ = await hello(session, two, "carol")
        await carol.ws.close()
        offline = await offline_refusal(alice, "carol")
        assert (await bob.ask("block", player=alice_id))["type"] == "blocked"
        refused = await alice.ask("challenge", name="bob")
        # One code, one message but the name: alice cannot tell a block from an absence.
        assert refused["type"] == offline["type"] == "error", (refused, offline)
        assert refused["code"] == offline["code"] == "player_offline"
        assert refused["message"].replace("bob", "X") == offline["message"].replace("carol", "X")
        assert "retry_after" not in refused and set(refused) == set(offline)
        # The block alone refused it: once bob unblocks her, her challenge goes through.
        assert (await bob.ask("unblock", player=alice_id))["type"] == "unblocked"
        sent = await alice.ask("challenge", name="bob")
        assert sent["type"] == "challenge_offer" and sent["status"] == "open", sent
