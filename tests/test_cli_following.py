"""`moose following` as a real subprocess: follow, list online and playing."""

from __future__ import annotations

import asyncio

import pytest

import moose

from helpers import drive, spawn

pytestmark = pytest.mark.slow  # runs `moose following`


async def test_following_lists_who_is_online_and_the_game_they_play(serve, config_home) -> None:
    url = (await serve()).url
    async with moose.connect(url, name="bob") as bob:
        await bob.register("a long password")
        await bob.queue(2, 2)
        bot = asyncio.create_task(moose.play_bot(url, "random", min_players=2, max_players=2))
        async for msg in bob.events():
            if msg["type"] == "match":
                game = msg["game"]
                break
        async with moose.connect(url, name="cat") as cat:  # online from its hello
            await cat.follow("bob")
            while not (await cat.following())["players"][0]["online"]:
                await asyncio.sleep(0.05)
        run = await drive(
            await spawn("following", "--url", url, "--name", "ann", "--follow", "bob")
        )
        bot.cancel()
    assert run.code == 0, run.text + run.err
    assert "following bob" in run.text
    assert f"bob ({bob.player}): online, playing {game} (moose watch {game})" in run.text
    again = await drive(
        await spawn("following", "--url", url, "--name", "ann", "--unfollow", "bob")
    )
    assert "no longer following bob" in again.text and "you follow nobody yet" in again.text
