"""The client library's chat: lines through `events()`, in order, once
each, muted seats hidden, and the lines said while the socket was down."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import moose
from moose.client import Client, ServerError

from helpers import play_seat

Message = dict[str, Any]
MANY = {"chat_burst": 100}


async def next_of(client: Client, mtype: str) -> Message:
    """The next message of `mtype` from the client's events (others skipped)."""
    async with asyncio.timeout(10):
        async for msg in client.events():
            if msg["type"] == mtype:
                return msg
    raise AssertionError("events ended")


async def seated(host: Client, guest: Client) -> str:
    """Both at a 2-seat private table, started: the game id."""
    table = await host.create_table(2)
    await guest.join_table(table["code"])
    await host.start_table(table["code"])
    game = (await next_of(host, "match"))["game"]
    assert (await next_of(guest, "match"))["game"] == game
    return game


async def test_lines_arrive_in_order_and_a_muted_seat_is_not_shown(serve) -> None:
    url = (await serve(**MANY)).url
    async with moose.connect(url, name="ann") as ann, moose.connect(url, name="bob") as bob:
        game = await seated(ann, bob)
        await ann.say("hi bob", game=game)
        await bob.say("hi ann", game=game)
        got = [await next_of(ann, "chat"), await next_of(ann, "chat")]
        assert [(m["name"], m["text"]) for m in got] == [("ann", "hi bob"), ("bob", "hi ann")]
        ann.mute(game, 1)  # bob's seat
        await bob.say("muted", game=game)
        await bob.say("still muted", game=game)
        await ann.say("mine", game=game)
        assert (await next_of(ann, "chat"))["text"] == "mine"
        assert [m["text"] for m in await ann.chat_history(game)] == ["hi bob", "mine"]
        ann.mute(game, 1, muted=False)
        await bob.say("heard again", game=game)
        assert (await next_of(ann, "chat"))["text"] == "heard again"


async def test_lines_said_while_the_socket_was_down_arrive_after_the_reconnect(serve) -> None:
    url = (await serve(**MANY)).url
    async with moose.connect(url, name="ann") as ann, moose.connect(url, name="bob") as bob:
        game = await seated(ann, bob)
        await bob.say("before", game=game)
        assert (await next_of(ann, "chat"))["text"] == "before"
        back, connect = asyncio.Event(), ann._connect_once

        async def held() -> None:  # the reconnect waits until bob has spoken
            await back.wait()
            await connect()

        ann._connect_once = held  # type: ignore[method-assign]
        ann._abort()  # as a network failure would
        for i in range(3):
            await bob.say(f"away {i}", game=game)
        back.set()
        await asyncio.sleep(0)
        await bob.say("after", game=game)
        texts = [(await next_of(ann, "chat"))["text"] for _ in range(4)]
        assert texts == ["away 0", "away 1", "away 2", "after"]
        assert ann.reconnects >= 1


async def test_the_seats_read_the_spectators_chat_once_the_game_is_over(serve) -> None:
    url = (await serve(**MANY)).url
    async with (
        moose.connect(url, name="ann") as ann,
        moose.connect(url, name="bob") as bob,
        moose.connect(url, name="eve") as eve,
    ):
        table = await ann.create_table(2)
        await bob.join_table(table["code"])
        await ann.start_table(table["code"])
        match = await next_of(ann, "match")
        game = match["game"]
        await eve.watch(game, table["code"])
        during = await eve.say("during", game=game)
        assert during["room"] == "spectators"
        with pytest.raises(ServerError) as refused:
            await ann.chat_history(game, room="spectators")
        assert refused.value.code == "not_in_game"
        await asyncio.gather(play_seat(ann, game=game, seat=match["seat"]), play_seat(bob))
        after = await eve.say("well played", game=game)
        assert (await next_of(ann, "chat"))["line"] == after["line"]  # "during" never came
        lines = await ann.chat_history(game, room="spectators")
        assert [m["text"] for m in lines] == ["during", "well played"]
