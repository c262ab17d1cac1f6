"""Pages in a real Chromium for the browser tests: the launch arguments and a `Player`.

Playwright drives Debian's Chromium (/usr/bin/chromium; browsers are never
downloaded). The `browser` fixture (conftest.py) launches one per test module.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

__all__ = [
    "ARGS",
    "CHROMIUM",
    "DESKTOP",
    "DOCS",
    "PHONE",
    "Player",
    "axe_violations",
    "play_until_over",
    "private_game",
    "queue_for_two",
    "run_async",
    "wait_until",
]

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
DESKTOP, PHONE = {"width": 1100, "height": 860}, {"width": 360, "height": 740}
Message = dict[str, Any]


class Player:
    """One browser page (its own context, so its own localStorage), with what it received."""

    def __init__(
        self,
        browser: Any,
        base: str,
        *,
        viewport: dict[str, int] = DESKTOP,
        locale: str = "en-US",
    ) -> None:
        self.context = browser.new_context(viewport=viewport, locale=locale)
        self.page = self.context.new_page()
        self.base = base
        self.frames: list[Message] = []
        self.problems: list[str] = []  # console errors, page errors, dialogs
        self.moves = self.traps = 0
        self.page.on("websocket", self._socket)
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(m.text))
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("dialog", self._dialog)

    def _socket(self, ws: Any) -> None:
        ws.on("framereceived", lambda payload: self.frames.append(json.loads(payload)))

    def _dialog(self, dialog: Any) -> None:
        self.problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def open(self, path: str = "/") -> Player:
        """Load a page of the site and wait for its first screen."""
        self.page.goto(self.base + path)
        # Connected: the lobby shows the counts of the live list, or a game shows its seats.
        self.page.wait_for_selector('[data-testid="counts"]:not(:empty), [data-testid="seat"]')
        return self

    def find(self, testid: str) -> Any:
        """The elements with that test id."""
        return self.page.locator(f'[data-testid="{testid}"]')

    def heard(self, test: Callable[[list[Message]], bool], timeout: float = 15.0) -> None:
        """Wait until `test(frames)` holds. Frames are taken in only while Playwright is
        called (not during a `time.sleep`): this waits in the page, not beside it."""
        deadline = time.monotonic() + timeout
        while not test(self.frames):
            assert time.monotonic() < deadline, "timed out"
            self.page.wait_for_timeout(50)

    def events(self) -> list[Message]:
        """The `event` frames received, in order."""
        return [f for f in self.frames if f.get("type") == "event"]

    def seq(self) -> int:
        """The last seq the game screen shows (-1: no game screen)."""
        value = self.page.locator("section.game").first.get_attribute("data-seq", timeout=2000)
        return int(value) if value is not None else -1

    def act(self, *, by_card: bool = False) -> bool:
        """Make one move if it is ours; whether one was made."""
        try:
            before = self.seq()
            trap = self.find("trap-button")
            if trap.count():
                trap.first.click(timeout=2000)
                self.traps += 1
            elif not self._play(by_card):
                return False
            self.page.locator(f'section.game:not([data-seq="{before}"])').wait_for(timeout=15000)
        except Exception as exc:  # the page redrew under the click: look again
            if "Timeout" not in type(exc).__name__ and "detached" not in str(exc):
                raise
            return False
        self.moves += 1
        return True

    def _play(self, by_card: bool) -> bool:
        moves = self.find("legal-move")
        options = [json.loads(m.get_attribute("data-move")) for m in moves.all()]
        if not options:
            return False
        # Keep traps and rooms open, so that a moose may come and be trapped.
        keep = [i for i, m in enumerate(options) if m.get("card") not in ("door", "trap")]
        plays = [i for i in keep if options[i]["action"] == "play"]
        pick = (plays or keep or [0])[0]
        card = options[pick].get("card")
        if by_card and options[pick]["action"] == "play":
            self.page.locator(f'[data-testid="hand-card"][data-card="{card}"]').first.click()
            self.find("target").first.click(timeout=2000)
        else:
            moves.nth(pick).click(timeout=2000)
        return True

    def close(self) -> None:
        """Close the page's context."""
        self.context.close()


def wait_until(test: Callable[[], bool], timeout: float = 15.0) -> None:
    """Poll `test` until it holds (the page's policy forbids evaluating strings in it).
    A test of what a page received alone takes no frame in: `Player.heard` does."""
    deadline = time.monotonic() + timeout
    while not test():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def play_until_over(seated: list[Player], *, limit: float = 240, each: Any = None) -> None:
    """Let every page move when it can until each shows the end of the game."""
    deadline = time.monotonic() + limit
    while not all(p.find("game-over").count() for p in seated):
        assert time.monotonic() < deadline, "the game did not end in time"
        moved = False
        for p in seated:
            if p.find("game-over").count() == 0:
                moved = p.act(by_card=p.moves % 2 == 1) or moved
                if each is not None:
                    each(p)
        if not moved:
            time.sleep(0.05)


def private_game(host: Player, bots: int, seats: int) -> None:
    """Create a private table in the page, add bots and start it."""
    host.find("create-button").wait_for()
    host.page.select_option("#seats", str(seats))
    host.find("create-button").click()
    host.find("table-code").wait_for()
    for n in range(1, bots + 1):
        host.find("add-bot-button").click()
        wait_until(lambda n=n: host.page.locator('[data-testid="seat"] .bot').count() == n)
    host.find("start-button").click()
    host.page.wait_for_selector("section.game")


def queue_for_two(ann: Player, bob: Player) -> None:
    """Open two pages as ann and bob; each queues for a table of exactly 2.

    Bob only once ann's page says she waits, which it does while she is alone
    in the queue (with both at once, a quick match could leave no time to see it).
    """
    for page, name in ((ann, "ann"), (bob, "bob")):
        page.open()
        page.find("name-input").fill(name)
        page.page.select_option("#low", "2")
        page.page.select_option("#high", "2")
        page.find("queue-button").click()
        if page is ann:
            ann.find("queue-status").wait_for()  # says how long she has waited


def axe_violations(player: Player) -> list[Any]:
    """The serious and critical accessibility violations axe-core finds on the page."""
    try:
        from axe_playwright_python.sync_playwright import Axe
    except ImportError:
        return []
    found = Axe().run(player.page).response["violations"]
    return [v["id"] for v in found if v.get("impact") in ("serious", "critical")]


def run_async(work: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine to its end on a loop of its own, in a thread (Playwright's sync
    API keeps a loop running in the test's thread); its result."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()
