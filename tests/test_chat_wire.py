"""Chat, block and follow by a client written from PROTOCOL.md alone (JSON text
frames, aiohttp and json, no project code) against two real `moose serve`
processes over one Redis."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from helpers.wire import Wire

pytestmark = pytest.mark.slow  # two `moose serve` processes

Message = dict[str, Any]
BURST = 6  # MOOSE_CHAT_BURST: lines the test's one address may say at once


async def hello(session: aiohttp.ClientSession, url: str, name: str) -> tuple[Wire, str]:
    """A socket that said hello as a new guest: it and the player id."""
    wire = Wire(await session.ws_connect(url))
    welcome = await wire.ask("hello", protocol=1, name=name)
    assert welcome["type"] == "welcome", welcome
    return wire, welcome["player"]


async def test_a_raw_client_chats_blocks_and_follows_over_two_instances(moose_serve, redis_url):
    env = {"MOOSE_CHAT_BURST": str(BURST), "MOOSE_CHAT_INTERVAL": "600"}
    procs = [
        moose_serve("--redis", redis_url, env=env, log=f"serve{i}.log", wait=False)
        for i in range(2)
    ]
    one, two = (p.wait_ready().url for p in procs)
    async with aiohttp.ClientSession() as session:
        (ann, ann_id), (bob, bob_id) = (
            await hello(session, one, "ann"),
            await hello(session, two, "bob"),
        )
        table = await ann.ask("create_table", players=2)
        assert (await bob.ask("join_table", code=table["code"]))["type"] == "table"
        said = await bob.ask("say", code=table["code"], text="ready")  # line 1
        assert said["type"] == "said" and said["room"] == "table"
        heard = await ann.expect(type="chat", code=table["code"])
        assert (heard["text"], heard["player"], heard["line"]) == ("ready", bob_id, said["line"])
        await ann.ask("start_table", code=table["code"])
        game = (await ann.expect(type="match"))["game"]
        assert (await bob.expect(type="match"))["game"] == game
        await ann.expect(type="event", game=game)
        await bob.expect(type="event", game=game)
        # Seats on both instances get the lines in one order, the same for both.
        a = await ann.ask("say", game=game, text="<b>hi</b> \x1b[2J")  # line 2
        b = await bob.ask("say", game=game, text="hello")  # line 3
        assert a["text"] == "<b>hi</b> [2J"
        for wire in (ann, bob):
            got = [await wire.expect(type="chat", game=game) for _ in range(2)]
            assert [m["line"] for m in got] == [a["line"], b["line"]]
            assert [m["seat"] for m in got] == [0, 1]
        too_long = await ann.ask("say", game=game, text="x" * 201)
        assert too_long["code"] == "chat_too_long"
        # bob blocks ann: her next line does not reach him, nor his history.
        assert (await bob.ask("block", player=ann_id))["name"] == "ann"
        assert (await bob.ask("blocks"))["players"] == [{"player": ann_id, "name": "ann"}]
        hidden = await ann.ask("say", game=game, text="can you hear me")  # line 4
        shown = await bob.ask("say", game=game, text="still here")  # line 5
        assert (await bob.expect(type="chat", game=game))["line"] == shown["line"]
        assert hidden["line"] not in {m.get("line") for m in bob.heard}
        history = await bob.ask("chat_history", game=game)
        assert [m["text"] for m in history["lines"]] == ["hello", "still here"]  # none of ann's
        # ann follows bob: online (on the other instance), playing this game.
        assert (await ann.ask("follow", player=bob_id))["type"] == "followed"
        async with asyncio.timeout(15):
            while not (listed := (await ann.ask("following"))["players"])[0]["online"]:
                await asyncio.sleep(0.1)
        # ann sits at bob's table, so she may watch it: listed, none hidden as private.
        expected = {"player": bob_id, "name": "bob", "online": True, "games": [game], "private": 0}
        assert listed == [expected]
        # The address' chat lines run out at the limit, on both instances together.
        assert (await ann.ask("say", game=game, text="six"))["type"] == "said"  # line 6
        limited = await bob.ask("say", game=game, text="seven")
        assert limited["code"] == "rate_limited" and limited["retry_after"] > 0
        after = await ann.ask("chat_history", game=game, since=shown["line"])
        assert [m["text"] for m in after["lines"]] == ["six"]
