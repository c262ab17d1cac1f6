"""The page's side of rematch and challenges, in a real Chromium against `moose serve`.

A challenge typed in the page reaches a bot client that accepts challenges and
they play it to its end; a challenge sent to the page is declined with a reason
and then accepted; two pages end a game and start its rematch from the end
screen. Screenshots of each step go to the test's folder (and are looked at).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from moose.client import Client

from helpers.browser import Player, wait_until

pytestmark = pytest.mark.slow  # Chromium and `moose serve`

PASSWORD = "lantern moose quill 88"
FAST = {"MOOSE_ANSWER_TIME": "0.5", "MOOSE_AUTO_DELAY": "0.2", "MOOSE_POLL_INTERVAL": "0.05"}


class Loop:
    """An event loop in a thread, for the Python client beside Playwright's sync API."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, work: Coroutine[Any, Any, Any], timeout: float = 30) -> Any:
        """Run `work` there and wait for its result."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout)

    def start(self, work: Coroutine[Any, Any, Any]) -> Any:
        """Run `work` there; its future."""
        return asyncio.run_coroutine_threadsafe(work, self.loop)

    def stop(self) -> None:
        """Stop the loop and its thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture
def loop() -> Iterator[Loop]:
    made = Loop()
    yield made
    made.stop()


@pytest.fixture
def server(moose_serve: Any, tmp_path: Path) -> Any:
    """`moose serve` with short turns: a page that does not move is played for."""
    return moose_serve("--data-dir", str(tmp_path / "data"), "--turn-time", "0.5", env=FAST)


@pytest.fixture
def page(browser: Any, server: Any) -> Iterator[Any]:
    made: list[Player] = []

    def make() -> Player:
        made.append(Player(browser, server.http))
        return made[-1]

    yield make
    for player in made:
        player.close()


async def _account(url: str, name: str, bot: bool = False) -> Client:
    client = Client(url, name=name, bot=bot)
    await client.open()
    await client.register(PASSWORD)
    return client


def _in_the_lobby(page: Any, name: str) -> tuple[Player, dict[str, Any]]:
    """A page with a session under `name` (a table made and left), back in the lobby,
    and the `welcome` it got."""
    player = page().open()
    player.find("name-input").fill(name)
    player.find("create-button").click()  # a session under that name
    player.find("table-code").wait_for()
    player.find("leave-button").click()
    player.find("challenge-name").wait_for()
    return player, [f for f in player.frames if f.get("type") == "welcome"][-1]


def test_a_challenge_from_the_page_is_accepted_by_a_bot_client_and_played(
    page, server, loop, tmp_path
) -> None:
    robo = loop.run(_account(server.url, "robo", bot=True))
    playing = loop.start(robo.run_bot("greedy", 1, accept_challenges=True))
    hana = page().open()
    hana.find("name-input").fill("hana")
    hana.find("challenge-name").fill("robo")
    hana.find("challenge-button").click()
    hana.page.wait_for_selector("section.game")
    hana.page.screenshot(path=str(tmp_path / "challenge-game.png"))
    names = hana.find("seat").all_inner_texts()
    assert any("robo" in n for n in names) and any("hana" in n for n in names), names
    hana.find("game-over").wait_for(timeout=120_000)
    [result] = playing.result(60)
    game = hana.page.locator("section.game").get_attribute("data-game")
    assert result.game == game
    hana.page.screenshot(path=str(tmp_path / "challenge-over.png"))
    assert hana.find("rematch-button").count() == 1
    assert hana.problems == []
    loop.run(robo.close())


def test_a_page_declines_a_challenge_with_a_reason_then_accepts_one(
    page, server, loop, tmp_path
) -> None:
    hana, welcome = _in_the_lobby(page, "hana")
    alice = loop.run(_account(server.url, "alice"))
    sent = loop.run(alice.challenge(welcome["player"], 2, rated=False))
    hana.find("challenge-offer").wait_for()
    assert "alice" in hana.find("challenge-offer").inner_text()
    hana.page.screenshot(path=str(tmp_path / "challenge-offer.png"))
    hana.find("challenge-reason").select_option("not_rated")
    hana.find("challenge-decline").click()

    async def answer() -> dict[str, Any]:
        async for news in alice.challenges(incoming=False):
            if news["challenge"] == sent["challenge"]:
                return news
        raise AssertionError("no answer")

    told = loop.run(answer())
    assert told["status"] == "declined" and told["reason"] == "not_rated"
    wait_until(lambda: hana.find("challenge-offer").count() == 0)
    loop.run(alice.challenge(welcome["player"], 2))
    hana.find("challenge-accept").click()
    hana.page.wait_for_selector("section.game")
    assert any("alice" in n for n in hana.find("seat").all_inner_texts())
    assert hana.problems == []
    loop.run(alice.close())


def test_two_pages_start_a_rematch_from_the_end_screen(page, tmp_path) -> None:
    hana, gus = page().open(), page()
    hana.find("name-input").fill("hana")
    hana.find("create-button").click()
    code = hana.find("table-code").inner_text()
    gus.open(f"/t/{code}")
    gus.find("name-input").fill("gus")
    gus.find("join-button").click()
    wait_until(lambda: hana.find("start-button").is_enabled())
    hana.find("start-button").click()
    for p in (hana, gus):  # nobody moves: every seat away, the game is abandoned
        p.find("game-over").wait_for(timeout=60_000)
    old = hana.page.locator("section.game").get_attribute("data-game")
    hana.find("rematch-button").click()
    hana.find("rematch-waiting").wait_for()
    gus.find("rematch-accept").wait_for()
    gus.page.screenshot(path=str(tmp_path / "rematch-offer.png"), full_page=True)
    gus.find("rematch-accept").click()
    for p in (hana, gus):
        p.page.wait_for_selector(f'section.game:not([data-game="{old}"])')
    new = {p.page.locator("section.game").get_attribute("data-game") for p in (hana, gus)}
    assert len(new) == 1 and old not in new
    hana.page.screenshot(path=str(tmp_path / "rematch-game.png"))
    assert hana.problems == gus.problems == []


def test_a_correspondence_challenge_is_shown_again_after_a_reload(page, server, loop) -> None:
    hana, welcome = _in_the_lobby(page, "hana")
    alice = loop.run(_account(server.url, "alice"))
    sent = loop.run(alice.challenge(welcome["player"], 2, days=3))
    hana.find("challenge-offer").wait_for()
    hana.frames.clear()
    hana.page.reload()  # the offer comes back with the welcome, not as a push
    hana.find("challenge-offer").wait_for()
    [again] = [f for f in hana.frames if f.get("type") == "welcome"]
    assert [c["challenge"] for c in again["challenges"]] == [sent["challenge"]]
    assert "alice" in hana.find("challenge-offer").inner_text()
    hana.find("challenge-accept").click()
    hana.page.wait_for_selector("section.game")
    assert hana.problems == []
    loop.run(alice.close())
