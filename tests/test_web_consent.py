"""Who may challenge you, from the page's account screen, in a real Chromium: the
select reads the setting the server keeps, changes it at once, and a reload (a new
socket) reads the new one back; a challenge the setting refuses is `not_allowed`.
Checked with axe-core (desktop and phone, English and Spanish)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.browser import DESKTOP, PHONE, Player, axe_violations, wait_until

pytestmark = pytest.mark.slow  # Chromium and `moose serve`


@pytest.fixture
def server(moose_serve: Callable[..., Any], tmp_path: Path) -> Any:
    """A real `moose serve` with its own Redis."""
    return moose_serve("--data-dir", str(tmp_path / "data"))


def settings_seen(page: Player) -> list[str]:
    """The `challenges` of every `challenge_setting` answer the page received."""
    return [f["challenges"] for f in page.frames if f.get("type") == "challenge_setting"]


def welcomed(page: Player) -> str:
    """The player id of the page's latest session."""
    return str([f for f in page.frames if f.get("type") == "welcome"][-1]["player"])


def test_the_account_page_says_and_changes_who_may_challenge_you(players, server) -> None:
    ann, bob = players(), players()
    ann.open()
    ann.page.goto(ann.base + "/account")
    select = ann.find("challenge-setting")
    wait_until(lambda: select.is_enabled() and select.input_value() == "everyone")
    for size in (DESKTOP, PHONE):
        ann.page.set_viewport_size(size)
        for _ in range(2):
            assert axe_violations(ann) == []
            ann.find("lang-button").click()
    ann.page.set_viewport_size(DESKTOP)
    select.select_option("nobody")
    ann.page.get_by_text("Challenges now come from nobody.").wait_for()
    assert settings_seen(ann) == ["everyone", "nobody"]
    me = welcomed(ann)
    # Kept by the server: the page loaded again (a new socket, the same player) reads it.
    ann.frames.clear()
    ann.page.reload()
    wait_until(lambda: select.is_enabled() and select.input_value() == "nobody")
    assert settings_seen(ann) == ["nobody"] and welcomed(ann) == me
    # And it holds: bob's challenge of ann (by her player id) is refused.
    bob.open()
    bob.find("name-input").fill("bob")
    bob.find("challenge-name").fill(me)
    bob.find("challenge-form").locator('[data-testid="challenge-button"]').click()
    bob.page.get_by_text("Not allowed: that player").wait_for()
    assert [f["code"] for f in bob.frames if f.get("type") == "error"] == ["not_allowed"]
    assert ann.problems == bob.problems == []
