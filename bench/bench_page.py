"""The browser page's figures: its weight, how soon the lobby is drawn, and a burst.

    python bench/bench_page.py [--loads 7]

- weight: every file of the page (HTML, CSS, JavaScript, the icons; the card art is
  in cards.js) gzip-compressed as the server sends it, and raw;
- lobby: from navigation start to the lobby drawn with its live list (the page's
  `lobby-drawn` mark), median of --loads fresh loads from a `moose serve` on loopback;
- burst: a spectator's page whose game events are held back at its socket
  (Playwright's WebSocket route, between the real page and the real server) while two
  other pages play, then let through all at once, as after a reconnect: 20 events.
  Reported: how many table draws they took and their time (the page's `table-draw`
  measures), the time from the release to the last event drawn (Playwright sends the
  20 frames one by one, so this includes their transport), and the animations played
  and left running after it (none: a burst is not replayed).

Needs Chromium (/usr/bin/chromium) and Playwright, as the browser tests do.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "client"), str(ROOT / "server"), str(ROOT / "tests")]

from moose_server.net.site import WebFiles  # noqa: E402
from moose_server.storage.embedded import free_port  # noqa: E402

from helpers.browser import ARGS, CHROMIUM, Player, queue_for_two  # noqa: E402

BURST = 20
SEQ_TIMES = """() => new Promise((done) => {
  const seen = [];
  const game = () => document.querySelector("section.game");
  new MutationObserver(() => {
    const seq = Number(game() && game().dataset.seq);
    const last = seen.length ? seen[seen.length - 1][0] : null;
    if (seq && last !== seq) seen.push([seq, performance.now()]);
    window.__seen = seen;
  }).observe(document.getElementById("app"), { subtree: true, attributes: true, childList: true });
  done(true);
})"""


def weight() -> dict[str, int]:
    """Bytes of the page's files, gzipped and raw."""
    files = WebFiles()
    return {"gzipped": files.gzipped_size(), "raw": files.size(), "files": len(files.files) + 1}


def serve(data: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`moose serve` on a free loopback port; its process and base URL."""
    port = free_port()
    flags = ["--port", str(port), "--data-dir", str(data), "--match-wait", "1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "moose", "serve", *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    import urllib.request

    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(base + "/", timeout=1).read()
            return proc, base
        except OSError:
            assert time.monotonic() < deadline, "moose serve did not start"
            time.sleep(0.1)


def lobby_times(browser: Any, base: str, loads: int) -> list[float]:
    """Milliseconds from navigation start to the drawn lobby, one per fresh load."""
    out = []
    for _ in range(loads):
        context = browser.new_context()
        page = context.new_page()
        page.goto(base + "/")
        page.wait_for_function("() => performance.getEntriesByName('lobby-drawn').length > 0")
        out.append(page.evaluate("() => performance.getEntriesByName('lobby-drawn')[0].startTime"))
        context.close()
    return out


def burst(browser: Any, base: str) -> dict[str, Any]:
    """A game's events held at the socket, then let through at once."""
    held: list[str] = []
    state: dict[str, Any] = {"hold": False, "page": None}

    def route(ws: Any) -> None:
        server = ws.connect_to_server()
        state["page"] = ws

        def down(message: str | bytes) -> None:
            event = (
                isinstance(message, str) and '"type": "event"' in message
            ) or '"type":"event"' in str(message)
            if state["hold"] and event:
                held.append(str(message))
            else:
                ws.send(message)

        server.on_message(down)

    ann, bob, ada = Player(browser, base), Player(browser, base), Player(browser, base)
    try:
        queue_for_two(ann, bob)
        ada.page.route_web_socket("**/ws", route)
        ada.open()
        ada.find("name-input").fill("ada")
        ada.find("watch-link").first.click()  # she watches ann and bob
        ada.page.wait_for_selector("section.game")
        ada.page.evaluate(SEQ_TIMES)
        state["hold"] = True  # her socket holds the game's events back
        deadline = time.monotonic() + 180
        while len(held) < BURST:  # the route's handler runs while Playwright is called
            assert time.monotonic() < deadline, f"the game sent too few events: {len(held)}"
            if not (ann.act() or bob.act()):
                ada.page.wait_for_timeout(50)
        state["hold"] = False
        first = ada.page.evaluate(DRAWS)
        played = ada.page.evaluate(PLAYED)
        released = ada.page.evaluate("() => performance.now()")
        for message in held[:BURST]:
            state["page"].send(message)
        last_seq = max(json.loads(m)["seq"] for m in held[:BURST])
        ada.page.wait_for_selector(f'section.game[data-seq="{last_seq}"]')
        ada.page.evaluate(
            "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        draws = ada.page.evaluate(DRAWS)[len(first) :]
        seen = ada.page.evaluate("() => window.__seen || []")
        return {
            "events": BURST,
            "draws": len(draws),
            "draw_total_ms": sum(draws),
            "draw_max_ms": max(draws) if draws else 0.0,
            "spread_ms": next(at for seq, at in seen if seq == last_seq) - released,
            "animations_played": ada.page.evaluate(PLAYED) - played,
            "animations_running": ada.page.evaluate(RUNNING),
        }
    finally:
        ada.close()


TWO_FRAMES = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
DRAWS = "() => performance.getEntriesByName('table-draw').map((e) => e.duration)"
PLAYED = "() => Number((document.getElementById('flying') || {dataset: {}}).dataset.played || 0)"
RUNNING = """() => document.getAnimations().filter((a) => a.effect
  && a.effect.getTiming().iterations !== Infinity && a.playState === "running").length"""


def main() -> None:
    """Print the page's figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loads", type=int, default=7)
    args = parser.parse_args()
    w = weight()
    gz, raw = w["gzipped"] / 1024, w["raw"] / 1024
    print(f"page weight: {gz:.1f} KB gzipped ({raw:.1f} KB raw, {w['files']} files)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        proc, base = serve(Path(tmp) / "data")
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            times = lobby_times(browser, base, args.loads)
            median = statistics.median(times)
            print(
                f"lobby drawn: median {median:.0f} ms after navigation start "
                f"(min {min(times):.0f}, max {max(times):.0f}, {len(times)} loads)"
            )
            b = burst(browser, base)
            print(
                f"burst of {b['events']} events: {b['draws']} draws, {b['draw_total_ms']:.1f} ms "
                f"drawing in all (max {b['draw_max_ms']:.1f} ms), the last drawn "
                f"{b['spread_ms']:.0f} ms after the release; animations played "
                f"{b['animations_played']}, left running {b['animations_running']}"
            )
        finally:
            browser.close()
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
