"""People around a game, in a real Chromium: a private unrated game in both players'
histories and profiles (guests too); Challenge only on a seat that can be
challenged; Block/Unblock and Follow/Unfollow buttons that say their state; the
account page's list of blocked players with its Unblock; and "Watch" only beside
a followed player's game that can be watched. Checked with axe-core (desktop and
phone, English and Spanish)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.browser import DESKTOP, PHONE, Player, axe_violations, play_until_over, wait_until

pytestmark = pytest.mark.slow  # Chromium and `moose serve`


@pytest.fixture
def server(moose_serve: Callable[..., Any], tmp_path: Path) -> Any:
    """A real `moose serve` with its own Redis."""
    return moose_serve(
        "--data-dir",
        str(tmp_path / "data"),
        "--turn-time",
        "60",
        env={"MOOSE_RATE_SWEEP_AFTER": "0"},
    )


def accessible(page: Player) -> None:
    """No serious or critical violation: desktop and phone, English and Spanish."""
    for size in (DESKTOP, PHONE):
        page.page.set_viewport_size(size)
        for _ in range(2):
            assert axe_violations(page) == []
            page.find("lang-button").click()
    page.page.set_viewport_size(DESKTOP)


def player_id(page: Player) -> str:
    """The player id of the page's session."""
    return str([f for f in page.frames if f.get("type") == "welcome"][-1]["player"])


def private_table(ann: Player, bob: Player, bots: int) -> str:
    """Ann hosts a table of 2 + `bots`, bob joins with its code, ann starts it: the game."""
    for page, name in ((ann, "ann"), (bob, "bob")):
        if page.page.url == "about:blank":
            page.open()
        page.find("name-input").fill(name)
    ann.page.select_option("#seats", str(2 + bots))
    ann.find("create-button").click()
    code = ann.find("table-code").inner_text()
    bob.find("join-code-input").fill(code)
    bob.find("join-button").click()
    for n in range(1, bots + 1):
        ann.find("add-bot-button").click()
        wait_until(lambda n=n: ann.page.locator('[data-testid="seat"] .bot').count() == n)
    wait_until(lambda: "bob" in ann.page.inner_text("main"))
    ann.find("start-button").click()
    for page in (ann, bob):
        page.page.wait_for_selector("section.game")
    return str(ann.page.locator("section.game").get_attribute("data-game"))


def history_games(page: Player, path: str) -> list[str]:
    """The games a profile lists, opened at `path`."""
    page.page.goto(page.base + path)
    page.find("profile-rating").wait_for()
    return [str(r.get_attribute("data-game")) for r in page.find("history-row").all()]


def test_a_private_unrated_game_is_in_both_players_histories(players, server) -> None:
    ann, bob = players(), players()
    game = private_table(ann, bob, bots=1)
    play_until_over([ann, bob])
    # The end screen: bob (a guest) may be challenged, the server's bot not.
    seats = ann.find("seat")
    wait_until(lambda: ann.find("challenge-button").count() == 1)
    assert seats.filter(has_text="bob").locator('[data-testid="challenge-button"]').count() == 1
    ann.find("challenge-button").click()
    bob.find("challenge-offer").wait_for()  # by bob's player id: a guest has no name
    bob.find("challenge-decline").click()
    ann_id, bob_id = player_id(ann), player_id(bob)
    for page, other in ((ann, bob_id), (bob, ann_id)):
        # Their own profile, from the account page: a guest's too.
        page.page.goto(page.base + "/account")
        page.find("profile-link").click()
        page.find("history-row").wait_for()
        assert [r.get_attribute("data-game") for r in page.find("history-row").all()] == [game]
        assert page.find("profile-rating").inner_text() == "none yet"
        assert "unrated" in page.find("history-row").inner_text()
        assert history_games(page, f"/p/{other}") == [game]
    accessible(ann)
    assert ann.problems == bob.problems == []


def test_block_and_follow_buttons_say_their_state_and_the_account_page_unblocks(
    players, server
) -> None:
    ann, bob = players(), players()
    private_table(ann, bob, bots=0)
    chat = ann.find("chat-panel")
    block, follow = (
        chat.locator('[data-testid="block-button"]'),
        chat.locator('[data-testid="follow-button"]'),
    )
    assert (block.inner_text(), block.get_attribute("aria-pressed")) == ("Block", "false")
    block.click()
    wait_until(lambda: block.get_attribute("aria-pressed") == "true")
    assert block.inner_text() == "Unblock"
    follow.click()
    wait_until(lambda: follow.get_attribute("aria-pressed") == "true")
    assert follow.inner_text() == "Unfollow"
    accessible(ann)
    # From the account page: the list of blocked players, and the way back.
    ann.page.goto(ann.base + "/account")
    listed = ann.find("blocked-list")
    listed.locator("li[data-player]").first.wait_for()
    assert listed.locator("li[data-player]").inner_text().startswith("bob")
    accessible(ann)
    ann.find("unblock-button").click()
    listed.filter(has_text="You block nobody").wait_for()
    assert [f.get("type") for f in ann.frames if f.get("type") == "unblocked"] == ["unblocked"]
    # Back at the game, a page loaded again: the buttons wait for the server's word
    # (disabled, never a wrong "Follow"), then say Block (unblocked) and Unfollow.
    ann.page.go_back()
    ann.page.wait_for_selector("section.game")
    chat = ann.find("chat-panel")
    block, follow = (
        chat.locator('[data-testid="block-button"]'),
        chat.locator('[data-testid="follow-button"]'),
    )
    wait_until(lambda: block.is_enabled() and follow.is_enabled())
    assert (block.inner_text(), block.get_attribute("aria-pressed")) == ("Block", "false")
    assert (follow.inner_text(), follow.get_attribute("aria-pressed")) == ("Unfollow", "true")
    assert ann.problems == bob.problems == []


def test_a_followed_player_at_a_private_table_has_no_watch_link(players, server) -> None:
    bob, ann, cat = players(), players(), players()
    for page, name in ((bob, "bob"), (ann, "ann"), (cat, "cat")):
        page.open()
        page.find("name-input").fill(name)
    bob.page.select_option("#seats", "2")
    bob.find("create-button").click()
    code = bob.find("table-code").inner_text()
    ann.find("join-code-input").fill(code)
    ann.find("join-button").click()
    follow = ann.find("chat-panel").locator('[data-testid="follow-button"]')
    follow.click()  # ann follows bob from the table's chat, then leaves his table
    wait_until(lambda: follow.get_attribute("aria-pressed") == "true")
    ann.find("leave-button").click()
    ann.find("following-list").locator("li[data-player]").wait_for()
    cat.find("join-code-input").fill(code)
    cat.find("join-button").click()
    wait_until(lambda: "cat" in bob.page.inner_text("main"))
    bob.find("start-button").click()
    bob.page.wait_for_selector("section.game")
    # Bob plays at his private table: ann is told so, with no Watch link that would fail.
    bob_line = ann.find("following-list").locator("li[data-player]")
    bob_line.locator('[data-testid="private-table"]').wait_for(timeout=20000)
    assert bob_line.locator('[data-testid="watch-followed"]').count() == 0
    assert "at a private table" in bob_line.inner_text()
    accessible(ann)
    assert ann.problems == bob.problems == cat.problems == []
