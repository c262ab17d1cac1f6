"""An arena game in a real Chromium: the game shows its arena, the player's points
and a compact standing; the end screen stays with what the game earned and a
countdown to the next pairing, offers a pause and no rematch; the arena's end is
announced with the player's place; the final standings have no "Now" column and
link finished games to their replays. Checked with axe-core (desktop and phone,
English and Spanish) when `axe-playwright-python` is installed."""

from __future__ import annotations

import contextlib
import time

import pytest

from moose_server.arenas.store import ArenaStore
from moose_server.storage.connection import open_redis

from helpers import create_arena
from helpers.arenas import bots_play
from helpers.browser import PHONE, Player, axe_violations, play_until_over, run_async

pytestmark = pytest.mark.slow  # Chromium and `moose serve`


async def end_window(redis_url: str, arena: str) -> None:
    """End the arena's window now: games under way are played out, none begins."""
    client = await open_redis(redis_url, 4)
    try:
        await ArenaStore(client).finish(arena, now=True)
    finally:
        await client.aclose()


def join(page: Player, arena: str) -> None:
    """Join the arena from its page (a push may redraw the page under the click)."""
    page.page.fill("#name", "ann")
    page.page.goto(f"{page.base}/arena/{arena}")
    page.find("arena-join").wait_for()
    deadline = time.monotonic() + 30
    while not any(f.get("type") == "arena_member" for f in page.frames):
        assert time.monotonic() < deadline, "the page did not join"
        with contextlib.suppress(pytest.importorskip("playwright.sync_api").Error):
            page.find("arena-join").click(timeout=1000)
        with contextlib.suppress(AssertionError):
            page.heard(lambda frames: any(f.get("type") == "arena_member" for f in frames), 3)


def check_axe(page: Player) -> None:
    """No serious or critical violation, desktop and phone, English and Spanish."""
    for size in (None, PHONE):
        if size:
            page.page.set_viewport_size(size)
        for _ in range(2):
            assert axe_violations(page) == []
            page.find("lang-button").click()
    page.page.set_viewport_size({"width": 1100, "height": 860})


def test_an_arena_game_shows_the_arena_and_its_end_screen_stays(
    browser, moose_serve, redis_url
) -> None:
    server = moose_serve(
        "--redis",
        redis_url,
        "--turn-time",
        "3",
        "--answer-time",
        "3",
        env={
            "MOOSE_ARENA_INTERVAL": "0.1",
            "MOOSE_LIVE_INTERVAL": "0.2",
            "MOOSE_AUTO_DELAY": "0.2",
            "MOOSE_ARENA_REST": "60",
        },
    )
    run_async(create_arena(redis_url, "a_game", 10, "all"))
    bots = bots_play(server.url, "a_game", 1)
    page = Player(browser, server.http).open("/")
    try:
        page.page.fill("#name", "ann")
        join(page, "a_game")
        page.page.locator("section.game").wait_for(timeout=30000)
        first = page.page.locator("section.game").get_attribute("data-game")
        # In the game: the arena's name, our points and the compact standing.
        page.find("arena-points").wait_for()
        assert page.find("arena-points").inner_text() == "0 points"
        assert "Test" in page.find("arena-bar").inner_text()
        assert "ann" in page.find("arena-standing").inner_text()
        play_until_over([page])
        # The end screen stays, with the points earned and the countdown; no rematch.
        page.find("arena-earned").filter(has_text="of 2 points").wait_for()
        assert page.find("arena-next").inner_text().startswith("Next game in")
        assert page.find("rematch-button").count() == 0
        check_axe(page)
        page.find("arena-game-pause").click()
        page.find("arena-next").filter(has_text="Paused").wait_for()
        assert page.find("game-over").count() == 1
        assert page.page.locator("section.game").get_attribute("data-game") == first
        # Resumed: the next game comes, and is shown.
        page.find("arena-game-resume").click()
        page.page.locator(f'section.game:not([data-game="{first}"])').wait_for(timeout=30000)
        run_async(end_window(redis_url, "a_game"))
        play_until_over([page])
        # The arena ends once that game is scored: announced with our place.
        page.find("arena-over").wait_for(timeout=30000)
        text = page.find("arena-over").inner_text()
        assert "is over: you finished" in text and "of 2" in text, text
        assert page.find("arena-next").inner_text() == "This arena is over."
        check_axe(page)
        page.find("arena-over").locator("a").click()
        page.find("arena-winners").wait_for()
        heads = page.page.locator("table.standings th").all_inner_texts()
        assert heads == ["#", "Player", "Points", "Games"]
        check_axe(page)
        replay = page.find("arena-replay").first
        game = replay.get_attribute("href")
        replay.click()
        page.page.wait_for_url(f"**{game}")
        page.find("replay-step").first.wait_for()
        assert page.problems == []
    finally:
        page.close()
        bots.join(timeout=60)
