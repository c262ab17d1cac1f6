"""Notices of a real correspondence game, over the wire: raw protocol clients against a
running instance and a push service on loopback.

A move that makes it the move of a player whose page is closed pushes them "your
move"; the player who dealt the game with the page open is pushed nothing (the
first push the service gets is the closed page's).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from helpers import RawClient, Serve, stacked_deck
from helpers.push import Browser, PushService

Message = dict[str, Any]
Connect = Callable[..., Awaitable[RawClient]]


@pytest.fixture
async def push_service() -> AsyncIterator[PushService]:
    """A push service on loopback."""
    async with PushService() as service:
        yield service


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
