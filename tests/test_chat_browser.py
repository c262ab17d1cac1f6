"""The page's chat, mute, block, report and follows in a real Chromium,
against a real `moose serve`. Screenshots go to the test's folder (CHAT_SHOTS=DIR
copies them there)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.browser import Player, wait_until

pytestmark = pytest.mark.slow  # Chromium and `moose serve`

EVIL = '<img src=x onerror="document.title=1">'
HOSTILE = "<img src=x onerror=f(1)>"


@pytest.fixture
def server(moose_serve: Callable[..., Any], tmp_path: Path) -> Any:
    """A real `moose serve` with its own Redis."""
    return moose_serve("--data-dir", str(tmp_path / "data"), "--turn-time", "60")


def table_of_two(host: Player, guest: Player) -> str:
    """The host's page opens a 2-seat table, the guest's joins by its link: the code."""
    host.open()
    host.find("name-input").fill("hana")
    host.page.select_option("#seats", "2")
    host.find("create-button").click()
    code: str = host.find("table-code").inner_text()
    guest.open(f"/t/{code}")
    guest.find("name-input").fill("gus")
    guest.find("join-button").click()
    wait_until(lambda: host.find("start-button").is_enabled())
    return code


def say(page: Player, text: str) -> None:
    """Type a line into the chat and send it."""
    page.find("chat-input").fill(text)
    page.find("chat-send").click()


def lines(page: Player) -> list[str]:
    """The chat lines the page shows."""
    return [m.inner_text() for m in page.find("chat-message").locator(".text").all()]


def click_until(page: Player, testid: str, done: str | Callable[[], bool]) -> None:
    """Click a button until `done` holds (a str: the page's notice says it); a click
    that lands while the page redraws is lost, as a person's would be."""
    test = done if callable(done) else lambda: page.find("notice").filter(has_text=done).count()
    for _ in range(20):
        page.find(testid).first.click()
        for _ in range(40):
            if test():
                return
            time.sleep(0.05)
    raise AssertionError(f"not done after clicks; error: {page.find('error').all_inner_texts()}")


def shots(page: Player, folder: Path, name: str) -> None:
    """A screenshot of the page, copied to CHAT_SHOTS when set."""
    path = folder / f"{name}.png"
    page.page.screenshot(path=str(path), full_page=True)
    if os.environ.get("CHAT_SHOTS"):
        shutil.copy(path, Path(os.environ["CHAT_SHOTS"]) / path.name)


def test_table_chat_reaches_the_other_page_and_hostile_text_stays_text(players, tmp_path):
    host, guest = players(), players()
    table_of_two(host, guest)
    say(guest, "ready when you are")  # before the start: the table's chat
    wait_until(lambda: lines(host) == ["ready when you are"])
    host.find("start-button").click()
    for page in (host, guest):
        page.page.wait_for_selector("section.game")
        wait_until(lambda page=page: page.find("chat-panel").count() == 1)
    say(host, EVIL)
    say(host, HOSTILE)
    for page in (host, guest):
        wait_until(lambda page=page: lines(page) == [EVIL, HOSTILE])
        assert page.page.locator("img").count() == 0
        assert page.page.title() != "1"
    assert host.find("chat-input").input_value() == ""  # sent: the draft is cleared
    shots(guest, tmp_path, "chat-game")
    say(host, "x" * 200 + "y")  # the input stops at 200 characters
    wait_until(lambda: len(lines(guest)) == 3)
    assert lines(guest)[-1] == "x" * 200
    frames = [f for f in guest.frames if f.get("type") == "chat"]
    assert [f["text"] for f in frames] == ["ready when you are", EVIL, HOSTILE, "x" * 200]
    assert host.problems == guest.problems == []  # no dialog, no script error


def test_a_muted_seat_is_hidden_a_blocked_one_never_arrives(players, server, tmp_path):
    host, guest = players(), players()
    table_of_two(host, guest)
    host.find("start-button").click()
    for page in (host, guest):  # the game's chat: the table's has a panel too
        page.page.wait_for_selector("section.game")
        page.page.wait_for_selector('[data-testid="chat-panel"]')
    say(guest, "one")
    wait_until(lambda: lines(host) == ["one"])
    click_until(host, "mute-button", lambda: host.find("chat-hidden").count() == 1)
    say(guest, "muted two")
    wait_until(lambda: lines(guest) == ["one", "muted two"])
    assert lines(host) == []  # gus's seat is muted, on this page only
    shots(host, tmp_path, "chat-muted")
    click_until(host, "mute-button", lambda: lines(host) == ["one", "muted two"])
    # Report gus's first line: it reaches `moose admin reports` with its text.
    host.page.remove_listener("dialog", host._dialog)
    host.page.once("dialog", lambda d: d.accept("spam"))
    host.find("chat-message").first.locator('[data-testid="report-button"]').click()
    host.find("notice").wait_for()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "moose_server.commands.admin",
            "--data-dir",
            str(tmp_path / "data"),
            "reports",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    [row] = [r for r in run.stdout.splitlines() if "spam" in r]
    assert "gus" in row and "one" in row
    click_until(host, "block-button", "You blocked gus")
    assert lines(host) == []  # what gus said is gone too
    say(guest, "blocked three")
    say(host, "hello?")
    wait_until(lambda: lines(guest)[-2:] == ["blocked three", "hello?"])
    wait_until(lambda: lines(host) == ["hello?"])
    assert "blocked three" not in [f.get("text") for f in host.frames]  # never sent to it
    assert guest.problems == []


def test_a_follower_sees_who_plays_and_where(players, tmp_path):
    host, guest = players(), players()
    table_of_two(host, guest)
    host.find("start-button").click()
    guest.page.wait_for_selector("section.game")  # the game's chat, not the table's
    click_until(guest, "follow-button", "You follow hana")  # gus follows hana
    game = host.page.locator("section.game").get_attribute("data-game")
    # A second page of gus's session goes back to the lobby: hana is online, playing.
    lobby = guest.context.new_page()
    lobby.goto(guest.base + "/")
    lobby.locator('[data-testid="back-to-game"]').wait_for()  # the lobby; the game behind the bar
    following = lobby.locator('[data-testid="following-list"]')
    following.locator('li[data-online="1"]:has-text("hana")').wait_for(timeout=15000)
    assert following.locator('[data-testid="watch-followed"]').get_attribute("href") == f"/w/{game}"
    path = tmp_path / "following.png"
    lobby.screenshot(path=str(path), full_page=True)
    if os.environ.get("CHAT_SHOTS"):
        shutil.copy(path, Path(os.environ["CHAT_SHOTS"]) / path.name)
    following.locator('[data-testid="unfollow-button"]').click()
    following.locator("li.none").wait_for()
    assert host.problems == guest.problems == []
