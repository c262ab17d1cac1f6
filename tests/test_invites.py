"""Rematch and challenges through the Python client (moose.client) and its bot loop.

A bot that accepts challenges (`run_bot(accept_challenges=True)`, what `moose bots
--accept-challenges` runs) is challenged by name and plays the game to its end;
`client.challenges()` hears a challenge and its decline; a finished game's
rematch started from the client deals the same seats again.
"""

from __future__ import annotations

import asyncio

import pytest

from moose.client import Client, ServerError

pytestmark = pytest.mark.slow  # servers, and whole games played

PASSWORD = "lantern moose quill 88"
FAST = dict(turn_time=0.3, answer_time=0.3, auto_delay=0.1)


async def _account(url: str, name: str, bot: bool = False) -> Client:
    client = Client(url, name=name, bot=bot)
    await client.open()
    await client.register(PASSWORD)
    return client


async def test_a_bot_accepting_challenges_plays_the_challenge_to_its_end(moose_server):
    url = await moose_server(**FAST)
    bot, alice = await _account(url, "greedy-acc", bot=True), await _account(url, "alice")
    try:
        playing = asyncio.create_task(bot.run_bot("greedy", 1, accept_challenges=True))
        sent = await alice.challenge("greedy-acc", 2, rated=True)
        assert sent["type"] == "challenge_offer" and sent["status"] == "open"
        async with asyncio.timeout(60):
            results = await alice.run_bot("greedy", 1, accept_challenges=True)
            [theirs] = await playing
        [ours] = results
        assert ours.game == theirs.game and sorted(ours.names) == ["alice", "greedy-acc"]
    finally:
        await asyncio.gather(bot.close(), alice.close())


async def test_challenges_iterator_hears_a_challenge_and_its_decline(moose_server):
    url = await moose_server()
    alice, bob = await _account(url, "alice"), await _account(url, "bob")
    try:
        sent = await alice.challenge("bob", 3, open_seats=True)
        incoming = bob.challenges()
        async with asyncio.timeout(10):
            heard = await anext(incoming)
        assert heard["challenge"] == sent["challenge"] and heard["open"] is True
        with pytest.raises(ServerError) as refused:
            await bob.challenge_decline(sent["challenge"], "busy")
        assert refused.value.code == "bad_message"
        declined = await bob.challenge_decline(sent["challenge"], "table_size")
        assert declined["status"] == "declined" and declined["reason"] == "table_size"
        news = alice.challenges(incoming=False)
        async with asyncio.timeout(10):
            told = await anext(news)
        assert told["status"] == "declined" and told["reason"] == "table_size"
        with pytest.raises(ServerError) as closed:
            await bob.challenge_accept(sent["challenge"])
        assert closed.value.code == "offer_closed"
    finally:
        await asyncio.gather(alice.close(), bob.close())


async def test_a_challenge_with_open_seats_seats_both_at_a_private_table(moose_server):
    url = await moose_server()
    alice, bob = await _account(url, "alice"), await _account(url, "bob")
    try:
        sent = await alice.challenge("bob", 4, open_seats=True)
        accepted = await bob.challenge_accept(sent["challenge"])
        assert accepted["status"] == "started" and accepted["code"]
        async with asyncio.timeout(10):
            async for msg in alice.events():
                if msg["type"] == "table":
                    break
        seated = [s["name"] for s in msg["seats"] if s]
        assert msg["code"] == accepted["code"] and seated == ["alice", "bob"]
        assert len(msg["seats"]) == 4 and msg["host"] == alice.player
    finally:
        await asyncio.gather(alice.close(), bob.close())


async def test_a_rematch_plays_a_bot_for_a_seat_whose_player_left(moose_server):
    url = await moose_server(**FAST)
    alice, bob = await _account(url, "alice"), await _account(url, "bob")
    try:
        table = await alice.create_table(2)
        await bob.join_table(table["code"])
        await alice.start_table(table["code"])
        async with asyncio.timeout(30):
            async for msg in alice.events():
                if msg["type"] == "match":
                    old = msg["game"]
                    await bob.close()  # bob leaves; nobody moves, the game is abandoned
                if msg["type"] == "event" and msg["event"]["kind"] == "over":
                    break
        offer = await alice.rematch(old, bots=True)
        assert offer["status"] == "started" and offer["seats"] == ["alice", "greedy-bot 2"]
        async with asyncio.timeout(10):
            async for msg in alice.events():
                if msg["type"] == "match" and msg["game"] == offer["next"]:
                    break
        assert msg["bots"] == [False, True]
        with pytest.raises(ServerError) as refused:
            await alice.rematch_accept("g_nosuchgame")
        assert refused.value.code == "no_such_rematch"
    finally:
        await alice.close()
