"""Notices away from the page, from the account screen in a real Chromium: the panel
reads the kinds the server keeps and changes one at once, the service worker
registers at /sw.js with the site as its scope once notices are allowed, and a
reload reads the kind back. Checked with axe-core (desktop and phone, English and
Spanish)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.browser import DESKTOP, PHONE, axe_violations, wait_until

pytestmark = pytest.mark.slow  # Chromium and `moose serve`


@pytest.fixture
def server(moose_serve: Callable[..., Any], tmp_path: Path) -> Any:
    """A real `moose serve` with its own Redis."""
    return moose_serve("--data-dir", str(tmp_path / "data"))


def test_the_account_page_turns_a_kind_off_and_registers_the_service_worker(
    players: Any, server: Any
) -> None:
    ann = players()
    ann.page.context.grant_permissions(["notifications"], origin=ann.base)
    ann.open()
    ann.page.goto(ann.base + "/account")
    box = ann.find("notice-your_move")
    wait_until(lambda: box.is_enabled() and box.is_checked())
    challenged = ann.find("notice-challenge_received")  # a challenge sent while away
    assert challenged.is_checked()
    challenged.uncheck()
    ann.heard(lambda frames: any(f.get("challenge_received") is False for f in frames))
    challenged.check()
    told = lambda frames: [f for f in frames if "challenge_received" in f][-1]  # noqa: E731
    ann.heard(lambda frames: told(frames)["challenge_received"] is True)
    for size in (DESKTOP, PHONE):
        ann.page.set_viewport_size(size)
        for _ in range(2):
            assert axe_violations(ann) == []
            ann.find("lang-button").click()
    ann.page.set_viewport_size(DESKTOP)
    box.uncheck()
    ann.heard(lambda frames: any(f.get("your_move") is False for f in frames))
    # The subscription itself needs a vendor's push service: Chromium refuses the
    # Push API in a test's (incognito) context; the server's side of it is
    # tests/test_notify_server.py's, with a push service on loopback.
    ann.find("push-toggle").click()
    scope = ann.page.evaluate("navigator.serviceWorker.ready.then((reg) => reg.scope)")
    assert scope == ann.base + "/"
    ann.frames.clear()
    ann.page.reload()
    box = ann.find("notice-your_move")
    wait_until(lambda: box.is_enabled() and not box.is_checked())
