"""The page reloaded while its game's fair deal waits for seeds keeps the game."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.browser import Player, wait_until

pytestmark = pytest.mark.slow  # Chromium and `moose serve`

# Bob: a bare socket in a page of the server (its origin), raw PROTOCOL.md frames in
# JSON; he asks for a fair deal and never sends a seed, so the deal waits its seed time.
BOB = """async (url) => {
  const ws = new WebSocket(url);
  const got = [];
  ws.onmessage = (m) => got.push(JSON.parse(m.data));
  await new Promise((ok) => { ws.onopen = ok; });
  const answer = async (id) => {
    while (!got.some((m) => m.id === id)) await new Promise((ok) => setTimeout(ok, 20));
  };
  ws.send(JSON.stringify({type: "hello", id: 1, protocol: 1, name: "bob"}));
  await answer(1);
  ws.send(JSON.stringify({type: "queue", id: 2, min_players: 2, max_players: 2, fair: true}));
  await answer(2);
  window.bob = got;
}"""


def matched(page: Player) -> bool:
    """Whether the page got a `match` (waiting lets Playwright hand us its frames)."""
    page.page.wait_for_timeout(50)
    return any(f.get("type") == "match" for f in page.frames)


def test_a_page_reloaded_before_the_deal_waits_for_it_and_plays(
    browser: Any, moose_serve: Callable[..., Any], tmp_path: Path
) -> None:
    server = moose_serve(
        "--data-dir",
        str(tmp_path / "data"),
        "--match-wait",
        "1",
        "--turn-time",
        "60",
        env={"MOOSE_SEED_TIME": "8"},
    )
    ann, bob = Player(browser, server.http), Player(browser, server.http)
    try:
        ann.open()
        ann.find("name-input").fill("ann")
        ann.page.select_option("#low", "2")
        ann.page.select_option("#high", "2")
        ann.find("queue-button").click()
        ann.find("queue-status").wait_for()
        bob.page.goto(server.http + "/leaderboard")
        bob.page.evaluate(BOB, server.url)
        wait_until(lambda: matched(ann))
        game = next(f["game"] for f in ann.frames if f.get("type") == "match")
        assert not ann.events()  # not dealt: bob's seed is awaited
        ann.frames.clear()
        ann.page.reload()
        ann.page.wait_for_selector(f'section.game[data-game="{game}"]')
        wait_until(lambda: ann.find("hand-card").count() >= 4)  # dealt after the seed time
        kinds = [(f["type"], f.get("seq")) for f in ann.frames if f.get("game") == game]
        assert ("match", None) in kinds and ("event", 1) in kinds, kinds
        assert ann.problems == []
    finally:
        ann.close()
        bob.close()
