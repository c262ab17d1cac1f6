"""The site around the table, in a real Chromium: accounts, profiles, leaderboards.

Everything through the page, against real `moose serve` processes; the rated
opponents are client-library bots (programs that said they are bots, rated on
the bots' board), the server's own bots being unrated. Every new page passes
axe-core (axe-playwright-python bundles it) with no serious or critical
violation.

`MOOSE_SCREENSHOTS=1 pytest tests/test_web_site.py -k screenshots` writes the
profile's and the leaderboard's screenshots into docs/.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import moose

from helpers.browser import DESKTOP, DOCS, PHONE, Player, play_until_over, wait_until

pytestmark = pytest.mark.slow  # Chromium and `moose serve`

PASSWORD = "lantern moose quill 88"
NEW_PASSWORD = "otter kettle mango 1912"
ENV = {
    "MOOSE_PROVISIONAL_GAMES": "2",
    "MOOSE_MATCH_INTERVAL": "0.05",
    "MOOSE_RATE": "1000",  # raw sockets that play out their games as fast as they can
    "MOOSE_BURST": "1000",
}


@pytest.fixture
def server(moose_serve: Callable[..., Any], tmp_path: Path) -> Any:
    """A real `moose serve` with its own Redis; a rating counts after 2 games."""
    return moose_serve(
        "--data-dir", str(tmp_path / "data"), "--match-wait", "0.5", "--turn-time", "60", env=ENV
    )


def run_async(work: Any) -> Any:
    """Run a coroutine to its end in a thread of its own (Playwright's loop runs here)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


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


def bots(server: Any, count: int, games: int, name: str) -> subprocess.Popen[str]:
    """`moose bots`: client bots (rated) queueing for tables of 2, in the background."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "moose",
            "bots",
            "--url",
            server.url,
            "--count",
            str(count),
            "--games",
            str(games),
            "--players",
            "2",
            "--name",
            name,
            "--seed",
            "3",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def register(page: Player, name: str) -> None:
    """Type a name in the lobby and register it in the page, through its refusals."""
    page.find("name-input").fill(name)
    page.find("register-button").click()
    page.find("password-input").fill("short")
    page.find("register-button").click()  # refused in the page: under 10 characters
    page.find("account-error").filter(has_text="10").wait_for()
    page.find("password-input").fill("password123")
    page.find("register-button").click()  # refused by the server: a common password
    page.find("account-error").filter(has_text="common").wait_for()
    page.find("password-input").fill(PASSWORD)
    page.find("register-button").click()
    page.find("account-name").filter(has_text=name).wait_for()


def log_in(page: Player, name: str, password: str = PASSWORD) -> None:
    """Log in from the header's button."""
    page.find("login-button").click()
    page.page.fill("#login-name", name)
    page.find("password-input").fill(password)
    page.find("login-button").click()


def own_profile(page: Player) -> None:
    """From the header, through the account page, to one's own profile."""
    page.find("account-name").click()
    page.page.wait_for_url("**/account")
    page.find("profile-link").click()
    page.find("profile-rating").wait_for()


def test_a_person_registers_plays_rated_and_finds_the_profile_elsewhere(players, server) -> None:
    ann = players()
    ann.open()
    assert "registered name" in ann.find("guest-note").inner_text()  # a guest is told
    # Until a name is typed, the header says so (not the placeholder "guest").
    assert ann.find("guest-as").inner_text() == "Playing as a guest"
    register(ann, "ann")
    welcome = [f for f in ann.frames if f.get("type") == "welcome"][-1]
    accessible(ann, "lobby of an account")
    opponent = bots(server, 1, 1, "rival")
    try:
        ann.page.select_option("#low", "2")
        ann.page.select_option("#high", "2")
        ann.find("queue-button").click()
        ann.page.wait_for_selector("section.game")
        accessible(ann, "game")
        # A name at the table opens that player's profile; back is the game again.
        ann.find("seat").locator('[data-testid="profile-link"]').filter(has_text="rival").click()
        ann.page.wait_for_url("**/p/p_*")
        ann.find("profile-rating").wait_for()
        assert ann.page.locator(".profile .badge.bot").count() == 1
        ann.page.go_back()
        ann.page.wait_for_selector("section.game")
        play_until_over([ann])
        assert opponent.wait(60) == 0, opponent.stdout.read() if opponent.stdout else ""
    finally:
        opponent.kill()
    shown = ann.find("rating-change")
    rating, change = (
        int(shown.get_attribute("data-rating")),
        int(shown.get_attribute("data-change")),
    )
    assert change != 0 and str(rating) in shown.inner_text()
    accessible(ann, "end of a game")
    game = ann.page.locator("section.game").get_attribute("data-game")

    own_profile(ann)
    assert ann.page.url.endswith("/p/ann")
    assert int(ann.find("profile-rating").inner_text()) == rating
    assert ann.find("profile-chart").get_attribute("data-points") == f"{rating - change},{rating}"
    [row] = ann.find("history-row").all()
    assert row.get_attribute("href") == f"/g/{game}"
    accessible(ann, "profile")
    row.click()  # the router opens the game's replay in the page
    ann.page.locator(f'section.replay[data-game="{game}"]').wait_for()
    ann.find("replay-slider").wait_for()
    assert ann.page.url.endswith(f"/g/{game}")
    ann.page.go_back()  # the profile again
    ann.find("history-row").wait_for()
    ann.page.go_back()  # the account page again, by the browser's history
    ann.page.wait_for_url("**/account")
    ann.find("logout-all-button").wait_for()
    accessible(ann, "account page")
    ann.find("password-input").fill(PASSWORD)
    ann.find("new-password-input").fill(NEW_PASSWORD)
    ann.find("change-password-button").click()
    ann.find("notice").filter(has_text="Password changed").wait_for()

    ann.find("logout-button").click()
    ann.find("login-button").wait_for()
    assert ann.find("account-name").count() == 0

    other = players()  # another browser: the same account, the same profile
    other.open()
    log_in(other, "ANN", PASSWORD)  # the old password: refused
    other.find("account-error").filter(has_text="No account has").wait_for()
    other.find("password-input").fill(NEW_PASSWORD)  # any look-alike of the name, too
    other.find("login-button").click()
    other.find("account-name").filter(has_text="ann").wait_for()
    own_profile(other)
    assert int(other.find("profile-rating").inner_text()) == rating
    assert [r.get_attribute("href") for r in other.find("history-row").all()] == [f"/g/{game}"]
    again = [f for f in other.frames if f.get("type") == "welcome"][-1]
    assert again["player"] == welcome["player"] and again["account"] is True
    other.page.go_back()
    other.find("logout-all-button").click()
    other.find("notice").filter(has_text="Every other session").wait_for()
    assert ann.problems == other.problems == []


def seed_humans(server: Any, names: list[str], games: int) -> None:
    """People (client-library players who did not say they are bots) play `games` rated
    games each, among themselves."""

    async def one(name: str) -> None:
        async with moose.connect(server.url, name=name) as client:
            await client.run_bot("greedy", games, min_players=2, max_players=2)

    async def every() -> None:
        await asyncio.gather(*(one(n) for n in names))

    run_async(every())


def seed_correspondence(server: Any, names: tuple[str, str], games: int) -> None:
    """Two people play `games` rated correspondence games (3 days a move) at a private
    table, over raw sockets, each move as soon as it is theirs."""
    import aiohttp

    from helpers import RawClient, play_out

    async def every() -> None:
        async with aiohttp.ClientSession() as session:
            host = RawClient(await session.ws_connect(server.url), True)
            guest = RawClient(await session.ws_connect(server.url), True)
            for client, name in zip((host, guest), names, strict=True):
                assert (await client.hello(name))["type"] == "welcome"
            for n in range(games):
                table = await host.request("create_table", players=2, rated=True, days=3)
                await guest.request("join_table", code=table["code"])
                await host.request("start_table", code=table["code"])
                game = (await host.expect(type="match"))["game"]
                await guest.expect(type="match")
                await asyncio.gather(play_out(host, game, n), play_out(guest, game, n + 9))
            await host.close()
            await guest.close()

    run_async(every())


def test_the_leaderboards_list_established_players_best_first(players, server) -> None:
    robots = bots(server, 4, 6, "bot")
    seed_humans(server, ["hana", "ivo", "jun", "kai"], 2)
    seed_correspondence(server, ("lea", "max"), 2)
    assert robots.wait(120) == 0
    fan = players()
    fan.open()
    fan.find("leaderboard-link").click()
    fan.page.wait_for_url("**/leaderboard")
    fan.find("leaderboard-row").first.wait_for()
    rows = fan.find("leaderboard-row")
    shown = [int(r.locator("td").nth(2).inner_text()) for r in rows.all()]
    games = [int(r.locator("td").nth(3).inner_text()) for r in rows.all()]
    names = {r.locator('[data-testid="profile-link"]').inner_text() for r in rows.all()}
    assert shown == sorted(shown, reverse=True) and all(g >= 2 for g in games)
    assert names == {"hana", "ivo", "jun", "kai"}
    accessible(fan, "leaderboard")
    # Correspondence games have a pool of their own: its tab, kept by the kinds' tabs.
    fan.find("board-pool-correspondence").click()
    fan.page.wait_for_url("**/leaderboard?pool=correspondence")
    wait_until(lambda: "Correspondence" in fan.page.locator("table.board caption").inner_text())
    rows = fan.find("leaderboard-row")
    assert {r.locator('[data-testid="profile-link"]').inner_text() for r in rows.all()} == {
        "lea",
        "max",
    }
    assert [int(r.locator("td").nth(3).inner_text()) for r in rows.all()] == [2, 2]
    accessible(fan, "correspondence leaderboard")
    fan.find("board-kind-bots").click()
    fan.page.wait_for_url("**/leaderboard/bots?pool=correspondence")
    wait_until(lambda: fan.page.get_by_text("Nobody here yet").count() > 0)
    fan.find("board-pool-realtime").click()
    fan.page.wait_for_url("**/leaderboard/bots")
    fan.find("leaderboard-row").first.wait_for()
    fan.page.goto(server.http + "/leaderboard?pool=correspondence")
    fan.page.get_by_role("link", name="lea", exact=True).click()
    fan.find("profile-correspondence-rating").wait_for()
    assert "2 games" in fan.find("profile-correspondence").inner_text()
    assert fan.find("profile-rating").inner_text() == "540"  # no real-time game: a newcomer's
    fan.page.goto(server.http + "/leaderboard")
    fan.find("leaderboard-row").first.wait_for()
    fan.page.get_by_role("link", name="Bots").click()
    fan.page.wait_for_url("**/leaderboard/bots")
    wait_until(lambda: fan.page.locator('[data-testid="leaderboard-row"] .bot').count() > 0)
    ratings = [int(r.locator("td").nth(2).inner_text()) for r in fan.find("leaderboard-row").all()]
    assert ratings == sorted(ratings, reverse=True)
    best = fan.find("leaderboard-row").first
    best.locator('[data-testid="profile-link"]').click()
    fan.find("profile-rating").wait_for()
    assert int(fan.find("profile-rating").inner_text()) == ratings[0]
    assert "#1 of the bots" in fan.find("profile-rank").inner_text()
    fan.find("profile-chart").wait_for()
    # A name at a history row's table opens that player's profile; back comes back.
    first = fan.page.url
    fan.page.locator('.history [data-testid="profile-link"]').first.click()
    wait_until(lambda: fan.page.url != first)
    fan.find("profile-rating").wait_for()
    fan.page.go_back()
    wait_until(lambda: fan.page.url == first)
    fan.page.go_back()
    fan.page.wait_for_url("**/leaderboard/bots")
    fan.find("leaderboard-row").first.wait_for()
    fan.page.go_back()
    fan.page.wait_for_url("**/leaderboard")
    fan.find("lang-button").click()  # Spanish, counted with Intl.PluralRules
    assert "4 jugadores" in fan.page.locator("table.board caption").inner_text()
    assert fan.problems == []


def test_a_taken_name_offers_to_log_in_on_the_spot(players, server) -> None:
    async def claim() -> None:
        async with moose.connect(server.url, name="carol") as other:
            await other.register(PASSWORD)

    run_async(claim())
    dan = players()
    dan.open()
    dan.find("name-input").fill("Car0l")  # a look-alike of the account's name
    dan.find("create-button").click()
    dan.find("password-input").wait_for()  # no "Connecting…", nothing disabled
    assert "Car0l" in dan.find("account-error").inner_text()
    assert dan.page.locator("#conn").inner_text() == ""
    assert dan.find("create-button").is_enabled()
    accessible(dan, "the login form")
    dan.find("password-input").fill("not the password at all")
    dan.find("login-button").click()
    dan.find("account-error").filter(has_text="No account has").wait_for()
    dan.find("password-input").fill(PASSWORD)
    dan.find("login-button").click()
    dan.find("table-code").wait_for()  # logged in, then the table asked for is made
    assert dan.find("account-name").inner_text() == "carol"

    # A page whose kept name an account took (and whose guest session is gone, as after
    # a week) is offered the login when it opens again.
    eve = players()
    eve.open()
    eve.find("name-input").fill("eve")
    eve.find("create-button").click()
    eve.find("table-code").wait_for()
    eve.find("leave-button").click()
    eve.find("name-input").fill("evelyn")  # a new name is a new player: said at once
    assert "eve's rating" in eve.find("guest-note").inner_text()
    eve.find("name-input").fill("carol")
    eve.page.evaluate("localStorage.removeItem('moose.token')")
    eve.page.reload()
    eve.find("password-input").wait_for()
    assert "carol" in eve.find("account-error").inner_text()
    assert eve.page.locator("#conn").inner_text() == ""
    eve.find("name-input").fill("frank")  # or another name: it simply works
    eve.page.get_by_role("button", name="Cancel").click()
    eve.find("create-button").click()
    eve.find("table-code").wait_for()
    assert dan.problems == eve.problems == []


def test_screenshots_of_a_profile_and_the_leaderboard(players, server, tmp_path) -> None:
    ann = players()
    ann.open()
    register(ann, "ann")
    seed_humans(server, ["hana", "ivo"], 2)  # someone else on the people's board
    robots = bots(server, 2, 20, "bot")  # stopped once ann has played her games
    try:
        ann.page.select_option("#low", "2")
        ann.page.select_option("#high", "2")
        for _ in range(3):
            ann.find("queue-button").click()
            ann.page.wait_for_selector("section.game")
            play_until_over([ann])
            ann.find("rating-change").wait_for()
            ann.page.locator("header.top h1 a").click()
    finally:
        robots.kill()
    own_profile(ann)
    for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
        ann.page.set_viewport_size(size)
        ann.page.screenshot(path=str(tmp_path / f"profile{suffix}.png"), full_page=True)
    ann.page.set_viewport_size(DESKTOP)
    ann.find("leaderboard-link").click()
    ann.find("leaderboard-row").first.wait_for()
    ann.page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)
    assert len(list(tmp_path.glob("*.png"))) == 3
    if os.environ.get("MOOSE_SCREENSHOTS"):
        for png in tmp_path.glob("*.png"):
            shutil.copy(png, DOCS / png.name)
