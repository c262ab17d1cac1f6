"""The arena pages of the browser client, in a real Chromium.

Bots play an arena through the Python client while a page opens the list from
the header's link, follows the standings as they are pushed, joins, and sees the
winners at the end; in English and Spanish, and checked with axe-core when
`axe-playwright-python` is installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import pytest

from helpers import create_arena
from helpers.arenas import bots_play
from helpers.browser import Player, axe_violations, wait_until

pytestmark = pytest.mark.slow  # Chromium and `moose serve`


def test_the_arena_list_and_live_standings_in_the_page(browser, moose_serve, redis_url) -> None:
    server = moose_serve(
        "--redis",
        redis_url,
        "--turn-time",
        "0.5",
        "--answer-time",
        "0.5",
        env={
            "MOOSE_ARENA_INTERVAL": "0.1",
            "MOOSE_LIVE_INTERVAL": "0.2",
            "MOOSE_AUTO_DELAY": "0.3",
        },
    )
    made = threading.Thread(
        target=asyncio.run, args=(create_arena(redis_url, "a_web", 0.25, "all"),)
    )
    made.start()  # 15 s; in a thread: Playwright's loop runs in this one
    made.join()
    thread = bots_play(server.url, "a_web", 2)
    page = Player(browser, server.http).open("/")
    try:
        page.page.fill("#name", "ann")
        page.find("arena-link").click()
        page.find("arena-row").first.wait_for()
        assert page.page.url.endswith("/arenas")
        row = page.page.locator('[data-testid="arena-row"][data-arena="a_web"]')
        assert "2\u20134" in row.inner_text()  # an en dash
        assert axe_violations(page) == []
        row.locator("a").click()
        page.find("arena-standing").first.wait_for()
        assert page.page.url.endswith("/arena/a_web")
        # Pushed as games end: points show without a reload.
        wait_until(
            lambda: (
                page.page.locator(
                    '[data-testid="arena-standing"] td:nth-child(3)'
                ).all_inner_texts()
                not in ([], ["0", "0"])
            ),
            timeout=30,
        )
        assert axe_violations(page) == []
        joined = lambda: any(f.get("type") == "arena_member" for f in page.frames)  # noqa: E731
        deadline = time.monotonic() + 30
        while not joined():  # a push may redraw the page under the click: click again
            assert time.monotonic() < deadline, "the page did not join"
            with contextlib.suppress(pytest.importorskip("playwright.sync_api").Error):
                page.find("arena-join").click(timeout=1000)
            with contextlib.suppress(AssertionError):
                wait_until(joined, timeout=3)
        assert [f["state"] for f in page.frames if f.get("type") == "arena_member"] == ["wait"]
        # A member now: the standings show her, or she is already seated at a game.
        page.page.wait_for_selector("section.game, [data-testid=arena-standing] >> text=ann")
        thread.join(timeout=60)  # the bots stop once the arena is over
        assert not thread.is_alive()
        page.page.goto(server.http + "/arena/a_web")
        page.find("arena-winners").wait_for()
        assert "ann" in " ".join(page.find("arena-standing").all_inner_texts())
        page.find("lang-button").click()
        assert "Clasificación" in page.page.inner_text("section.arena")
        assert "Ganada por" in page.find("arena-winners").inner_text()
        assert page.problems == []
    finally:
        page.close()
        thread.join(timeout=60)
