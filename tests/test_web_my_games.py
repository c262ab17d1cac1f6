"""The lobby's "Your move in N games" and its list of your games, in a real
Chromium: a correspondence game accepted from the page shows in the lobby while it
is the page's move, opens from the list, and counts no more once the page has
moved (the lobby asks `my_games` again)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from helpers import stacked_deck
from helpers.browser import Player, axe_violations
from helpers.wire import Wire

pytestmark = pytest.mark.slow  # Chromium and `moose serve`


@pytest.fixture
def server(moose_serve: Callable[..., Any], tmp_path: Path) -> Any:
    """`moose serve` dealing every game from one deck, dealer seat 0: seat 1 moves first."""
    deck = ",".join(stacked_deck(2, [[], []], dealer=0))
    return moose_serve("--data-dir", str(tmp_path / "data"), env={"MOOSE_TEST_DECK": deck})


async def challenge(url: str, target: str, days: int) -> None:
    """Bob, over a raw socket, challenges `target` to a game of `days` per move."""
    async with aiohttp.ClientSession() as session:
        sock = Wire(await session.ws_connect(url))
        assert (await sock.hello(name="bob"))["type"] == "welcome"
        offer = await sock.ask("challenge", name=target, days=days)
        assert offer["type"] == "challenge_offer" and offer["days"] == days, offer


def lists(page: Player) -> list[list[dict[str, Any]]]:
    """The games of every `my_games` answer the page received, in order."""
    return [f["games"] for f in page.frames if f.get("type") == "my_games"]


def test_the_lobby_says_in_how_many_games_it_is_your_move(players, server):
    ann = players().open()
    me = next(f["player"] for f in ann.frames if f.get("type") == "welcome")
    with ThreadPoolExecutor(1) as pool:  # Playwright's own loop runs in this thread
        pool.submit(asyncio.run, challenge(server.url, me, 1)).result()
    ann.find("challenge-accept").click()  # ann takes seat 1: her move first
    ann.page.wait_for_selector('[data-testid="legal-move"]')
    ann.page.locator("h1 a").click()  # the lobby, the game behind the bar
    line = ann.find("your-move")
    line.wait_for()
    assert line.inner_text() == "Your move in 1 game"
    (entry,) = ann.find("my-game").all()
    assert entry.inner_text().startswith("Against bob: your move · 1 day a move")
    assert axe_violations(ann) == []
    entry.locator('[data-testid="my-game-open"]').click()
    ann.page.wait_for_selector('[data-testid="legal-move"]')
    assert ann.act()
    asked = len(lists(ann))
    ann.page.locator("h1 a").click()
    # Asked again as the lobby shows: the list now says it is bob's move.
    ann.page.wait_for_selector('[data-testid="my-game"]:has-text("their move")')
    assert len(lists(ann)) > asked and not any(g["your_move"] for g in lists(ann)[-1])
    assert line.count() == 0
    assert ann.problems == []


def test_a_private_table_of_days_a_move_is_made_from_the_lobby(players):
    ann = players().open()
    ann.find("name-input").fill("ann")
    ann.page.select_option("#days", "2")
    ann.find("create-button").click()
    assert ann.find("table-days").inner_text() == "2 days a move"
    (table,) = [f for f in ann.frames if f.get("type") == "table"]
    assert table["days"] == 2
    assert axe_violations(ann) == []


def test_a_challenge_of_days_a_move_is_sent_and_accepted_from_the_page(players):
    ann, bob = players().open(), players().open()
    ann_id = next(f["player"] for f in ann.frames if f.get("type") == "welcome")
    bob.find("name-input").fill("bob")
    bob.find("challenge-name").fill(ann_id)  # a guest is challenged by player id
    bob.page.select_option("#challenge-days", "3")
    bob.find("challenge-button").first.click()
    offer = ann.find("challenge-offer")
    offer.wait_for()
    assert "3 days a move" in offer.inner_text()
    ann.find("challenge-accept").click()
    ann.page.wait_for_selector('[data-testid="seat"]')
    (match,) = [f for f in ann.frames if f.get("type") == "match"]
    assert match["days"] == 3
