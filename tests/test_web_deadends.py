"""The page's dead ends, in a real Chromium.

A server restart mid-game, the phone layout, the move log after a reload and
when watching, stopping to watch, a watch link to no game, the end screen, and
the Spanish page; against real `moose serve` processes. Every page looked at
passes axe-core (axe-playwright-python bundles it) with no serious or critical
violation. One test, without a browser, checks that the page has a text for
every stable error code of PROTOCOL.md in each of its languages.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.browser import Player, private_game, queue_for_two, wait_until

ROOT = Path(__file__).resolve().parent.parent
I18N = ROOT / "server" / "moose_server" / "net" / "web" / "i18n.js"
PHONE = {"width": 390, "height": 844}
slow = pytest.mark.slow  # Chromium and `moose serve`


@pytest.fixture
def server(moose_serve: Callable[..., Any], tmp_path: Path) -> Any:
    """A real `moose serve` with its own Redis; short matchmaking waits."""
    return moose_serve(
        "--data-dir", str(tmp_path / "data"), "--match-wait", "1", "--turn-time", "60"
    )


def accessible(player: Player, what: str) -> None:
    """axe-core finds no serious or critical violation on the page as it is."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(player.page).response["violations"]
    bad = [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
        for v in found
        if v["impact"] in ("serious", "critical")
    ]
    assert bad == [], f"{what}: {bad}"


def in_viewport(locator: Any) -> None:
    """The element is on screen, without scrolling."""
    from playwright.sync_api import expect

    expect(locator).to_be_in_viewport()


def my_move(player: Player) -> None:
    """Wait until the page offers its seat's moves."""
    player.find("legal-move").first.wait_for(timeout=30000)


def seconds_shown(player: Player, shown: list[str]) -> int:
    """The seconds the countdown shows ("12 s left"; -1 for another text); each text kept."""
    text = player.find("countdown").inner_text()
    shown.append(text)
    found = re.fullmatch(r"(\d+) s left", text.strip())
    return int(found.group(1)) if found else -1


def log_seqs(player: Player) -> list[int]:
    """The seqs of the move log's lines, as shown."""
    return [int(li.get_attribute("data-seq")) for li in player.page.locator(".log li").all()]


# -- the error texts (no browser) --------------------------------------------------


def protocol_codes() -> set[str]:
    """The stable error codes of PROTOCOL.md's errors table."""
    text = (ROOT / "PROTOCOL.md").read_text()
    table = text.split("Stable codes:", 1)[1].split("## Close codes", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", table, re.M))


def table_keys(language: str) -> set[str]:
    """The keys of the page's text tables of one language (en, enSite, ... or es...)."""
    source = I18N.read_text()
    keys: set[str] = set()
    for name, body in re.findall(r"^const (\w+) = \{\n(.*?)^\};", source, re.M | re.S):
        if name.startswith(language) and (len(name) == 2 or name[2].isupper()):
            keys |= set(re.findall(r'^\s*"?([\w:.-]+)"?:', body, re.M))
    return keys


def test_every_error_code_of_the_protocol_has_a_text_in_each_language() -> None:
    codes = protocol_codes()
    assert {"bad_frame", "no_such_game", "banned"} <= codes  # the table was read
    for language in ("en", "es"):
        missing = {c for c in codes if f"err_{c}" not in table_keys(language)}
        assert missing == set(), f"{language}: no text for {sorted(missing)}"


# -- in Chromium -------------------------------------------------------------------


@slow
def test_a_restart_mid_game_leaves_the_player_ten_seconds_and_no_stale_banner(
    browser, moose_serve, tmp_path
):
    flags = ("--data-dir", str(tmp_path / "data"), "--turn-time", "8", "--drain-grace", "0.5")
    server = moose_serve(*flags)
    ada = Player(browser, server.http)
    try:
        ada.open()
        ada.find("name-input").fill("ada")
        private_game(ada, bots=1, seats=2)
        my_move(ada)
        server.stop()  # her 8 s turn runs out while the service is down
        ada.find("connection-banner").wait_for()
        ada.find("legal-move").first.click()  # refused: not connected
        assert "Not connected" in ada.find("error").inner_text()
        time.sleep(9)
        back_ms = time.time() * 1000  # the service is back after this (same clock)
        heard = len(ada.frames)
        moose_serve(*flags, port=server.port)
        ada.find("connection-banner").wait_for(state="detached")
        ada.find("error").wait_for(state="detached")  # connected: no stale "not connected"
        seen = ada.seq()
        # Her countdown shows the deadline the outage moved, not the old one run out.
        shown: list[str] = []
        try:
            wait_until(lambda: seconds_shown(ada, shown) >= 10, timeout=5)
        except AssertionError:
            pytest.fail(f"the countdown showed {sorted(set(shown))} after the restart")
        # The server holds her move for the outage grace from its return (15 s), not
        # from her old deadline: the `synced` answer to her page's sync says so, with
        # no wait for a move that must not come. (Before, a 5 s grace ran out.)
        synced = [f for f in ada.frames[heard:] if f.get("type") == "synced"]
        assert synced and synced[-1]["deadline"] >= back_ms + 10_000, synced
        assert ada.seq() == seen, "the server played her move meanwhile"
        seat = int(ada.page.locator("section.game").get_attribute("data-seat"))
        assert ada.act()
        mine = [
            e
            for e in ada.events()
            if e["seq"] > seen and e["event"]["kind"] == "move" and e["event"]["seat"] == seat
        ]
        assert mine and mine[0]["event"]["auto"] is None  # her own move, not a timeout
        assert ada.find("connection-banner").count() == 0
        accessible(ada, "the game after a restart")
    finally:
        ada.close()


@slow
def test_on_a_phone_the_hand_and_moves_are_in_view_on_your_move(players) -> None:
    sam = players(viewport=PHONE)
    sam.open()
    sam.find("name-input").fill("sam")
    private_game(sam, bots=3, seats=4)
    my_move(sam)
    in_viewport(sam.find("hand-card").first)
    in_viewport(sam.find("legal-move").first)
    in_viewport(sam.find("turn"))  # "Your move" and the hand, on one screen
    width = sam.page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"]
    accessible(sam, "the game on a phone")


@slow
def test_the_move_log_survives_a_reload_and_shows_past_moves_to_a_spectator(players) -> None:
    ann, bob, fan = players(), players(), players()
    queue_for_two(ann, bob)
    for page in (ann, bob):
        page.page.wait_for_selector("section.game")
    game = ann.page.locator("section.game").get_attribute("data-game")
    deadline = time.monotonic() + 60
    while ann.seq() < 6:
        assert time.monotonic() < deadline, "the game did not move"
        ann.act() or bob.act() or time.sleep(0.05)
    ann.page.reload()
    ann.page.wait_for_selector('.log li[data-seq="1"]')
    assert ann.page.get_by_text("Following the game from here").count() == 0
    assert max(log_seqs(ann)) >= 6 and 1 in log_seqs(ann)  # newest first
    fan.open(f"/w/{game}")
    fan.page.wait_for_selector('.log li[data-seq="1"]')
    wait_until(lambda: sorted(log_seqs(fan)) == sorted(log_seqs(ann)))
    assert fan.page.get_by_text("Following the game from here").count() == 0
    accessible(fan, "a spectator's game")
    fan.find("stop-watching").click()
    fan.find("queue-button").wait_for()
    assert fan.page.url.rstrip("/") == fan.base.rstrip("/")
    assert any(f.get("type") == "unwatched" for f in fan.frames)
    assert ann.problems == fan.problems == []


@slow
def test_a_watch_link_to_no_game_says_so_and_leads_back(players) -> None:
    fan = players()
    fan.page.goto(fan.base + "/w/g_0000000000")
    fan.find("game-missing").wait_for()
    assert "does not exist" in fan.find("game-missing").inner_text()
    assert fan.find("error").count() == 0 and fan.page.get_by_text("Connecting").count() == 0
    accessible(fan, "a watch link to no game")
    fan.find("lobby-button").click()
    fan.find("queue-button").wait_for()


@slow
def test_the_end_screen_says_game_over_once_and_where_each_score_comes_from(players) -> None:
    ada = players()
    ada.open()
    ada.find("name-input").fill("ada")
    private_game(ada, bots=2, seats=3)
    deadline = time.monotonic() + 240
    while not ada.find("game-over").count():
        assert time.monotonic() < deadline, "the game did not end"
        ada.act() or time.sleep(0.05)
    assert ada.page.locator("h2", has_text="Game over").count() == 1
    assert ada.find("turn").count() == 0  # the status line does not say it again
    for row in ada.find("scores").locator("tr[data-seat]").all():
        seat = int(row.get_attribute("data-seat"))
        houses = ada.page.locator(f'[data-testid="seat"][data-seat="{seat}"] .cover.moose')
        in_hand = int(row.locator('[data-testid="leftover"]').get_attribute("data-in-hand"))
        assert houses.count() + in_hand == int(row.get_attribute("data-score"))
    accessible(ada, "the end screen")
    assert ada.problems == []


@slow
def test_the_spanish_page_counts_in_the_singular_and_names_bots_and_errors(players) -> None:
    eva = players(locale="es-ES")
    eva.open()
    # Alone on the server: "1 conectado" (Intl.PluralRules), once the count has come.
    eva.find("counts").filter(has_text=re.compile(r"^1 conectado ·")).wait_for()
    eva.find("name-input").fill("eva")
    eva.find("create-button").click()
    eva.find("table-code").wait_for()
    assert "codicioso" in eva.page.locator("#bot").inner_text()
    eva.find("add-bot-button").click()
    eva.page.get_by_text("bot codicioso 1").wait_for()
    accessible(eva, "a table in Spanish")
    eva.find("leave-button").click()
    eva.find("queue-button").wait_for()
    eva.page.goto(eva.base + "/w/g_0000000000")
    eva.find("game-missing").filter(has_text="Esa partida no existe").wait_for()
    accessible(eva, "a watch link to no game, in Spanish")
