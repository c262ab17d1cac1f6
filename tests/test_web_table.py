"""The card table in a real Chromium, against real `moose serve` processes and its
server bots: a whole game with animations and with reduced motion, no hidden card in
the page, the cues that it is your move (notification, title, icon badge, clock), the
phone, and axe-core on the table.

The page is never stubbed: a test only observes it (how many animations it played,
`Notification` objects it made) and, for a hidden tab, makes `document.hidden` say so.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from helpers.browser import DOCS, Player, play_until_over, private_game, wait_until

pytestmark = pytest.mark.slow  # Chromium and `moose serve`

PHONE = {"width": 390, "height": 844}
# Finite animations still running (a target's pulse or the low clock's blink never end).
RUNNING = """() => document.getAnimations().filter((a) => a.effect
  && a.effect.getTiming().iterations !== Infinity && a.playState === "running").length"""
PLAYED = "() => Number((document.getElementById('flying') || {dataset: {}}).dataset.played || 0)"
CARDS = """() => [...document.querySelectorAll('[data-testid="card"]')].map((el) => ({
  card: el.dataset.card === undefined ? null : el.dataset.card,
  other: Boolean(el.closest('.backs')),
}))"""
# A hidden tab, as the page sees one: `document.hidden` says what the test sets.
HIDDEN = """Object.defineProperty(Document.prototype, "hidden", {
  configurable: true, get() { return window.__hidden === true; } });
window.__notes = [];
window.__asked = 0;
const Real = window.Notification;
function Spy(title, options) {
  window.__notes.push(title);
  return new Real(title, options);
}
Object.defineProperty(Spy, "permission", { get: () => Real.permission });
Spy.requestPermission = () => { window.__asked += 1; return Real.requestPermission(); };
window.Notification = Spy;"""


@pytest.fixture
def server(moose_serve: Callable[..., Any], tmp_path: Path) -> Any:
    """A real `moose serve` with its own Redis."""
    return moose_serve("--data-dir", str(tmp_path / "data"), "--turn-time", "60")


def settled(player: Player) -> None:
    """Wait until every animation that ends has ended."""
    wait_until(lambda: player.page.evaluate(RUNNING) == 0)


def public_and_mine(player: Player) -> set[str]:
    """The card codes the seat may see: its hand and everything on the table."""
    view = player.events()[-1]["view"]
    seen = set(view.get("hand") or []) | set(view["discard"])
    for house in view["houses"]:
        seen |= {"house"} if house["house"] else set()
        for room in house["rooms"]:
            seen.add(f"room:{room['type']}")
            seen |= {f"moose:{room['type']}"} if room["cover"] == "moose" else set()
            seen |= {"door"} if room["cover"] == "door" else set()
    if view.get("pending"):
        seen.add(view["pending"]["card"])
    return seen


def check_cards(player: Player) -> None:
    """Every card drawn says which it is; others' hands are backs; nothing hidden shows."""
    settled(player)
    for _ in range(3):  # an event may land between the two reads: read again
        cards = player.page.evaluate(CARDS)
        allowed = public_and_mine(player) | {"back"}
        if player.page.evaluate(CARDS) == cards:
            break
    assert all(c["card"] for c in cards), "a card without data-card"
    assert all(c["card"] == "back" for c in cards if c["other"]), "another hand shows a face"
    assert {c["card"] for c in cards} <= allowed, {c["card"] for c in cards} - allowed


def start(player: Player, name: str, bots: int = 2) -> None:
    """A private table with server bots, started from the lobby."""
    player.open()
    player.find("name-input").fill(name)
    private_game(player, bots=bots, seats=bots + 1)


def test_a_whole_game_against_bots_with_animations(players) -> None:
    ada = players()
    start(ada, "ada")
    checked = [0]

    def each(page: Player) -> None:
        if checked[0] % 3 == 0 and page.find("game-over").count() == 0:
            check_cards(page)
        checked[0] += 1

    play_until_over([ada], each=each)
    settled(ada)
    assert ada.page.evaluate(PLAYED) > 0, "no card travelled"
    assert ada.find("draw-pile").count() == 1 and ada.find("discard-pile").count() == 1
    assert ada.problems == []


def test_a_whole_game_with_reduced_motion_and_no_notification_asked_on_load(
    browser, server
) -> None:
    ada = Player(browser, server.http)
    try:
        ada.context.add_init_script(HIDDEN)
        ada.page.emulate_media(reduced_motion="reduce")
        start(ada, "ada")
        assert ada.page.evaluate("() => window.__asked") == 0  # never asked on load
        ada.find("sound-toggle").click()  # a click: now the page may ask
        wait_until(lambda: ada.page.evaluate("() => window.__asked") > 0)
        ada.find("sound-toggle").click()
        wait_until(lambda: ada.find("sound-toggle").get_attribute("aria-pressed") == "true")
        assert ada.page.evaluate("() => window.__asked") == 1  # once, not at every click
        play_until_over([ada], each=lambda page: None)
        assert ada.page.evaluate(PLAYED) == 0, "an animation played with reduced motion"
        assert ada.page.evaluate(RUNNING) == 0
        assert ada.problems == []
    finally:
        ada.close()


def test_a_reload_draws_the_table_at_once_without_replaying_it(players) -> None:
    ada = players()
    start(ada, "ada")
    for _ in range(6):
        wait_until(lambda: ada.act(), timeout=30)
    ada.find("legal-move").first.wait_for(timeout=30000)  # her move: the bots wait
    ada.page.reload()
    ada.find("legal-move").first.wait_for(timeout=30000)
    ada.page.wait_for_selector('.log li[data-seq="1"]')  # the burst of past events is in
    settled(ada)
    assert ada.page.evaluate(PLAYED) == 0, "a reconnect replayed its burst"
    assert ada.find("last-move").count() <= 1


def test_a_hidden_tab_gets_a_notification_the_title_and_the_icon_badge(browser, server) -> None:
    ada = Player(browser, server.http)
    try:
        ada.context.grant_permissions(["notifications"])
        ada.context.add_init_script(HIDDEN)
        ada.open()
        ada.page.evaluate("() => { window.__hidden = true; }")
        ada.find("name-input").fill("ada")
        private_game(ada, bots=1, seats=2)
        ada.find("legal-move").first.wait_for(timeout=30000)
        wait_until(lambda: len(ada.page.evaluate("() => window.__notes")) > 0)
        assert ada.page.evaluate("() => window.__notes")[0] == "Moose House"
        assert ada.page.title() == "● Your move — Moose House"
        icon = ada.page.locator('link[rel="icon"]').get_attribute("href")
        assert icon.endswith("/icon-turn.svg")
        assert ada.page.request.get(urljoin(ada.page.url, icon)).ok  # the badge is served
    finally:
        ada.close()


def test_the_clock_warns_at_low_time_and_says_when_not_connected(
    browser, moose_serve, tmp_path
) -> None:
    server = moose_serve("--data-dir", str(tmp_path / "data"), "--turn-time", "13")
    ada = Player(browser, server.http)
    try:
        start(ada, "ada", bots=1)
        ada.find("legal-move").first.wait_for(timeout=30000)
        clock = ada.find("clock")
        wait_until(lambda: clock.get_attribute("data-state") == "low", timeout=20)
        assert "Hurry" in clock.inner_text()
        server.stop()
        wait_until(lambda: clock.get_attribute("data-state") == "offline", timeout=20)
        assert clock.inner_text() == "Not connected"
    finally:
        ada.close()


def test_your_time_is_shown_once_in_the_turn_bar(players) -> None:
    from playwright.sync_api import expect

    ada = players()
    start(ada, "ada", bots=1)
    ada.find("legal-move").first.wait_for(timeout=30000)
    expect(ada.find("clock")).to_be_in_viewport()
    # The words stay for a screen reader; the eye sees the big clock alone.
    assert "left" in ada.find("countdown").inner_text()
    box = ada.find("countdown").bounding_box()
    assert box is not None and box["width"] <= 1 and box["height"] <= 1, "the time is shown twice"


def test_the_sound_switch_is_remembered(players) -> None:
    ada = players()
    start(ada, "ada", bots=1)
    toggle = ada.find("sound-toggle")
    assert toggle.get_attribute("aria-pressed") == "true"
    toggle.click()
    wait_until(lambda: toggle.get_attribute("aria-pressed") == "false")
    ada.page.reload()
    ada.find("sound-toggle").wait_for()
    assert ada.find("sound-toggle").get_attribute("aria-pressed") == "false"


def test_on_a_phone_the_clock_and_the_chosen_cards_targets_are_in_view(players) -> None:
    from playwright.sync_api import expect

    sam = players(viewport=PHONE)
    start(sam, "sam", bots=3)
    for _ in range(40):  # until a card with a target is in hand on her move
        sam.find("legal-move").first.wait_for(timeout=30000)
        plays = [json.loads(m.get_attribute("data-move")) for m in sam.find("legal-move").all()]
        play = next((m for m in plays if m["action"] == "play"), None)
        if play:
            break
        sam.act()
    assert play, "no card could be played in 40 moves"
    hand = sam.page.locator("section.hand")
    cards = sam.find("hand-card")
    assert cards.count() == len(sam.events()[-1]["view"]["hand"])  # every card shown
    assert hand.bounding_box()["height"] <= PHONE["height"] / 3 + 4
    sam.page.locator(f'[data-testid="hand-card"][data-card="{play["card"]}"]').first.click()
    sam.find("target").first.wait_for()
    expect(sam.find("target").first).to_be_in_viewport()
    expect(sam.find("clock")).to_be_in_viewport()
    box = sam.find("target").first.bounding_box()
    assert box["y"] + box["height"] <= hand.bounding_box()["y"] + 1, "the hand hides the target"
    bar = sam.page.locator("section.game .status").bounding_box()
    assert box["y"] >= bar["y"] + bar["height"] - 1, "the turn bar hides the target"
    expect(sam.find("clock")).to_be_in_viewport()
    accessible(sam, "the table on a phone, a card chosen")


def test_on_a_phone_the_header_is_one_short_row_over_its_links(players) -> None:
    from playwright.sync_api import expect

    ann = players(viewport=PHONE)
    start(ann, "ann", bots=1)
    ann.find("legal-move").first.wait_for(timeout=30000)
    ann.act()
    ann.find("last-move").wait_for(timeout=30000)
    ann.page.evaluate("window.scrollTo(0, 0)")
    header = ann.page.locator("header.top").bounding_box()
    assert header is not None and header["height"] <= 72, f"the header takes {header} px"
    # The language button shows its short code and is still named in full.
    lang = ann.find("lang-button")
    expect(lang.locator(".short")).to_have_text("ES")
    assert lang.bounding_box()["width"] <= 60, "the language button is not short"
    expect(ann.page.get_by_role("button", name="Español")).to_have_count(1)
    # With two at the table, the last move's words show above the sticky hand.
    label = ann.find("last-move").locator("span").bounding_box()
    hand = ann.page.locator("section.hand").bounding_box()
    assert label is not None and hand is not None
    assert label["y"] + label["height"] <= hand["y"], "the hand hides the last move"
    expect(ann.find("clock")).to_be_in_viewport()
    # A room is no wider than its card and a little: four fit a row beside the house card.
    # (Early in a game no house may have a room yet: then there is nothing to measure.)
    wider = ann.page.locator(".house-row .room").evaluate_all(
        """els => els.map((e) => e.offsetWidth
          - e.querySelector('[data-testid="card"]').getBoundingClientRect().width)"""
    )
    assert all(extra <= 13 for extra in wider), wider  # 0.75 rem at most, 12 px
    accessible(ann, "the table on a phone, its short header")


def test_the_table_has_no_serious_accessibility_violation(players) -> None:
    ada = players()
    start(ada, "ada")
    for _ in range(4):
        wait_until(lambda: ada.act(), timeout=30)
    ada.find("legal-move").first.wait_for(timeout=30000)
    settled(ada)
    accessible(ada, "the table, desktop")
    ada.page.locator('[data-testid="hand-card"]:not([disabled])').first.click()
    settled(ada)
    accessible(ada, "the table, a card chosen")


def accessible(player: Player, what: str) -> None:
    """axe-core finds no serious or critical violation on the page as it is."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(player.page).response["violations"]
    serious = [v for v in found if v["impact"] in ("serious", "critical")]
    bad = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in serious]
    assert bad == [], f"{what}: {bad}"


# Every card motion the page starts from now on is held 200 ms in, for the picture:
# caught as it starts, not looked for later (on a busy machine a flight can land
# before a later look). LET_GO puts animate() back and lets them all run.
HOLD = """() => {
  const animate = Element.prototype.animate;
  window.heldAnimate = animate;
  window.held = 0;
  Element.prototype.animate = function (...args) {
    const a = animate.apply(this, args);
    if (a.effect && a.effect.getTiming().iterations !== Infinity) {
      a.pause(); a.currentTime = 200; window.held += 1;
    }
    return a;
  };
}"""
LET_GO = """() => {
  Element.prototype.animate = window.heldAnimate;
  document.getAnimations().forEach((a) => a.play());
}"""


def test_screenshots_of_the_table_in_spanish_and_with_a_card_moving(players, tmp_path) -> None:
    ada = players(locale="es-ES")
    start(ada, "ada", bots=3)
    for _ in range(8):
        wait_until(lambda: ada.act(), timeout=30)
    ada.find("legal-move").first.wait_for(timeout=30000)
    settled(ada)
    assert "Te toca" in ada.find("turn").inner_text()
    ada.page.evaluate("() => window.scrollTo(0, 0)")
    ada.page.screenshot(path=str(tmp_path / "game-es.png"))
    # A card on its way: the animations stopped midway for the picture, then let go.
    ada.find("lang-button").click()
    ada.find("turn").filter(has_text="Your move").wait_for()
    ada.page.set_viewport_size({"width": 1100, "height": 1500})  # the table without scrolling
    ada.page.evaluate("() => window.scrollTo(0, 0)")
    ada.page.evaluate(HOLD)
    # A move drawn in a burst with the bots' answers jumps to its end without motion:
    # play on, turn after turn, until one of ours is seen moving.
    for _ in range(6):
        ada.find("legal-move").first.click()
        try:
            wait_until(lambda: ada.page.evaluate("() => window.held") > 0, timeout=10)
            break
        except AssertionError:
            ada.find("legal-move").first.wait_for(timeout=30000)
    assert ada.page.evaluate("() => window.held") > 0, "no card was seen moving"
    ada.page.screenshot(path=str(tmp_path / "game-moving.png"))
    ada.page.evaluate(LET_GO)
    settled(ada)
    assert (tmp_path / "game-es.png").exists() and (tmp_path / "game-moving.png").exists()
    if os.environ.get("MOOSE_SCREENSHOTS"):
        for png in tmp_path.glob("*.png"):
            shutil.copy(png, DOCS / png.name)
