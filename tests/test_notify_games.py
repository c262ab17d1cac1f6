"""Notices of a real correspondence game, over the wire: raw protocol clients against a
running instance and a push service on loopback.

A move that makes it the move of a player whose page is closed pushes them "your
move"; the player who dealt the game with the page open is pushed nothing (the
first push the service gets is the closed page's). A player whose page has the
game open on another instance than the one that wrote the move is told nothing
either (two `moose serve` processes over one Redis).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import redis.asyncio as aioredis

from moose_server.storage.keys import NOTICES_KEY, looking_key

from helpers import RawClient, Serve, serve_several, stacked_deck
from helpers.push import Browser, PushService

Message = dict[str, Any]
Connect = Callable[..., Awaitable[RawClient]]


async def days_game(host: RawClient, guest: RawClient) -> str:
    """A two-seat private table of 3 days per move, started: its game."""
    table = await host.request("create_table", players=2, days=3)
    await guest.request("join_table", code=table["code"])
    await host.request("start_table", code=table["code"])
    await guest.expect(type="match")
    return str((await host.expect(type="match"))["game"])


async def turn(client: RawClient, game: str) -> Message:
    """The next event of `game` that offers this client's seat legal moves."""
    while True:
        event = await client.expect(type="event", game=game)
        if event.get("legal"):
            return event


async def play(client: RawClient, game: str) -> None:
    """Wait for this seat's turn and play its first legal move."""
    event = await turn(client, game)
    await client.request("move", game=game, move=event["legal"][0], seq=event["seq"])


async def test_a_move_pushes_your_move_to_the_player_whose_page_is_closed(
    serve: Serve, ws_client: Connect, push_service: PushService
) -> None:
    # Every game dealt from one deck, dealer seat 0: seat 1 (the guest, ann) moves first.
    url = (await serve(test_deck=",".join(stacked_deck(2, [[], []], dealer=0)))).url
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    browsers = {name: Browser(push_service.endpoint(name)) for name in ("ann", "bob")}
    for name, client in (("ann", ann), ("bob", bob)):
        await client.request("push_subscribe", subscription=browsers[name].subscription())
    game = await days_game(bob, ann)  # ann is told nothing at the deal: she is here
    await bob.close()  # bob closes the page; ann's move makes it his
    await play(ann, game)
    got = await push_service.received.get()  # the first push of all
    assert got.path == "/push/bob"
    assert browsers["bob"].read(got) == {
        "kind": "your_move",
        "game": game,
        "text": "It is your move.",
    }


async def notices_of(redis_url: str, player: str) -> list[dict[bytes, bytes]]:
    """The notices queued for a player so far (the delivery stream keeps them)."""
    r = aioredis.Redis.from_url(redis_url)
    try:
        return [f for _, f in await r.xrange(NOTICES_KEY) if f[b"p"] == player.encode()]
    finally:
        await r.aclose()


async def looks(redis_url: str, player: str, game: str, instance: str, there: bool) -> None:
    """Wait until the instance has written that the player's socket follows the game
    (`there`), or that none does any more."""
    r = aioredis.Redis.from_url(redis_url)
    try:
        while await r.hexists(looking_key(player), f"{game} {instance}") != there:
            await asyncio.sleep(0.02)
    finally:
        await r.aclose()


@pytest.mark.slow  # two `moose serve` processes
async def test_no_notice_for_a_game_open_on_another_instance(
    moose_serve: Any, redis_url: str, ws_client: Connect, push_service: PushService
) -> None:
    deck = ",".join(stacked_deck(2, [[], []], dealer=0))  # seat 1, the guest, moves first
    first, second = serve_several(moose_serve, redis_url, {"MOOSE_TEST_DECK": deck})
    ann, bob = await ws_client(first.url, "ann"), await ws_client(second.url, "bob")
    browser = Browser(push_service.endpoint("bob"))
    await bob.request("push_subscribe", subscription=browser.subscription())
    game = await days_game(ann, bob)  # ann on i_0, bob on i_1
    await looks(redis_url, bob.player, game, "i_1", True)
    await play(bob, game)
    await play(ann, game)  # written on i_0: bob's move, while his page on i_1 has it open
    assert await notices_of(redis_url, bob.player) == []
    await play(bob, game)
    await bob.close()  # his page closes: the next move of his is told
    await looks(redis_url, bob.player, game, "i_1", False)
    await play(ann, game)
    [told] = await notices_of(redis_url, bob.player)
    assert told[b"k"] == b"your_move" and told[b"g"] == game.encode()
    got = await push_service.received.get()
    assert browser.read(got) == {"kind": "your_move", "game": game, "text": "It is your move."}
