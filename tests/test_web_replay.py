"""Replays, the rules page and why a card cannot be played, in a real Chromium.

The page replays a record with its own small engine (web/engine.js): here it is
checked against moose.rules at every step of many games, and the replay of real
finished games against the record's final state and the end screen. Every new
page passes axe-core with no serious or critical violation.

`MOOSE_SCREENSHOTS=1 pytest tests/test_web_replay.py -k screenshots` writes the
replay's and the rules' screenshots into docs/.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError

import moose
from moose import rules
from moose_server.play.games import Games
from moose_server.play.seats import Seat
from moose_server.settings import Settings

from helpers import open_store, stacked_deck
from helpers.browser import DESKTOP, DOCS, PHONE, run_async, wait_until

pytestmark = pytest.mark.slow  # Chromium and `moose serve`

Message = dict[str, Any]

# Every seat's house as the page draws it (the game's and the replay's seats alike),
# in the shape of a view's houses: [{"house", "rooms": [{"type", "cover"}]}].
HOUSES_JS = """() => [...document.querySelectorAll('[data-testid="seat"]')]
  .sort((a, b) => a.dataset.seat - b.dataset.seat)
  .map((el) => ({house: el.querySelector('.house').classList.contains('has'),
    rooms: [...el.querySelectorAll('li.room')].map((li) => {
      const cls = [...li.classList];
      const cover = cls.find((c) => c.startsWith('c-')).slice(2);
      return {type: cls.find((c) => c.startsWith('r-')).slice(2),
              cover: cover === 'open' ? null : cover};
    })}))"""


@pytest.fixture
def pages(browser: Any) -> Iterator[Callable[..., Any]]:
    """``page = pages(base, locale=...)``: a page in a fresh context; closed at the end."""
    made: list[Any] = []

    def make(locale: str = "en-US", viewport: dict[str, int] = DESKTOP) -> Any:
        context = browser.new_context(viewport=viewport, locale=locale)
        made.append(context)
        page = context.new_page()
        page.problems, page.received = [], []
        page.on(
            "websocket",
            lambda ws: ws.on(
                "framereceived", lambda payload: page.received.append(json.loads(payload))
            ),
        )
        page.on("console", lambda m: m.type == "error" and page.problems.append(m.text))
        page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
        return page

    yield make
    for context in made:
        context.close()


def find(page: Any, testid: str) -> Any:
    """The elements with that test id."""
    return page.locator(f'[data-testid="{testid}"]')


def serious(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [
        f"{v['id']}: {v['help']} ({len(v['nodes'])})"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


def get_json(url: str) -> Any:
    """The JSON body of a GET."""
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def final_state(record: Message) -> rules.State:
    """The record's last state, by the Python engine."""
    state = rules.new_game(record["players"], deck=record["deck"], dealer=record["dealer"])
    for move in record["moves"]:
        state = rules.apply(state, move)
    return state


def states_of(record: Message) -> list[rules.State]:
    """Every state of the record, from the deal."""
    out = [rules.new_game(record["players"], deck=record["deck"], dealer=record["dealer"])]
    for move in record["moves"]:
        out.append(rules.apply(out[-1], move))
    return out


async def bot_game(url: str, players: int = 3) -> str:
    """Bots play one public queue game to its end; its id."""
    results = await asyncio.gather(
        *(
            moose.play_bot(
                url, "greedy", 1, name=f"bot{k}", min_players=players, max_players=players, seed=k
            )
            for k in range(players)
        )
    )
    return str(results[0][0].game)


@pytest.fixture
def server(moose_serve: Callable[..., Any], tmp_path: Path) -> Any:
    """A real `moose serve` with its own Redis; short matchmaking waits."""
    return moose_serve(
        "--data-dir", str(tmp_path / "data"), "--match-wait", "1", "--turn-time", "60"
    )


def step_to(page: Any, testid: str, expected: int) -> None:
    """Click a replay control and wait until the step shown is `expected`."""
    find(page, testid).click()
    page.locator(f'[data-testid="replay-step"]:text-is("{expected}")').wait_for(timeout=5000)


# -- the engine of the page against the server's -----------------------------------------


def test_the_pages_engine_replays_every_step_as_moose_rules_does(pages, server) -> None:
    page = pages()
    page.goto(server.http + "/rules")
    find(page, "rules").wait_for()
    engine = page.locator('link[rel="modulepreload"][href$="/engine.js"]').get_attribute("href")
    records, expected = [], []
    for seed in range(120):
        rng = random.Random(seed)
        state = rules.new_game(rng.randint(2, 6), seed=seed)
        moves, steps = [], [state]
        while not state.over:
            moves.append(rng.choice(rules.legal_moves(state)))
            state = rules.apply(state, moves[-1])
            steps.append(state)
        records.append(
            {"players": state.n, "dealer": state.dealer, "deck": list(state.deck), "moves": moves}
        )
        expected.append([_seen(s) for s in steps])
    # As one JSON text: Playwright carries a large object much more slowly than a string.
    got = json.loads(
        page.evaluate(
            """async ([url, records]) => {
             const e = await import(url);
             return JSON.stringify(JSON.parse(records).map((r) => { const out = e.replay(r);
               return {broken: out.broken, steps: out.states.map((s) => ({
                 houses: s.houses, hands: s.hands.map((h) => [...h].sort()), discard: s.discard,
                 draw: s.draw.length, to_act: e.toAct(s), over: s.over, legal: e.legalMoves(s),
                 scores: e.scores(s), winners: e.winners(s)}))}; }));
           }""",
            [engine, json.dumps(records)],
        )
    )
    assert sum(len(steps) for steps in expected) > 5000  # every kind of position
    for game, (mine, theirs) in enumerate(zip(got, expected, strict=True)):
        assert mine["broken"] is None, game
        assert mine["steps"] == theirs, game
    # A record whose move the rules refuse stops there, and says where.
    bad = {**records[0], "moves": [*records[0]["moves"][:3], {"action": "pass"}]}
    assert page.evaluate("async ([u, r]) => (await import(u)).replay(r).broken", [engine, bad]) == 3
    assert page.problems == []


def _seen(state: rules.State) -> Message:
    """A state as the test compares it with the page's engine."""
    view = rules.view(state, None)
    return {
        "houses": view["houses"],
        "hands": [sorted(h) for h in state.hands],
        "discard": state.discard,
        "draw": len(state.draw),
        "to_act": rules.to_act(state),
        "over": state.over,
        "legal": rules.legal_moves(state),
        "scores": rules.scores(state),
        "winners": rules.winners(state),
    }


# -- replays of real games ------------------------------------------------------------


def test_a_game_link_replays_a_finished_game_in_a_fresh_context(pages, server) -> None:
    game = run_async(bot_game(server.url))
    record = get_json(f"{server.http}/api/games/{game}/record")
    states = states_of(record)
    page = pages()
    page.goto(f"{server.http}/g/{game}")  # nothing stored: no session, no token yet
    find(page, "replay-step").wait_for()
    last = len(record["moves"])
    assert find(page, "replay-step").inner_text() == "0"
    assert page.evaluate(HOUSES_JS) == rules.view(states[0], None)["houses"]
    assert find(page, "replay-hand").count() == record["players"]  # every hand is shown
    assert serious(page) == []
    for step in range(1, last + 1):  # every move, as the engine played it
        step_to(page, "replay-next", step)
        assert page.evaluate(HOUSES_JS) == rules.view(states[step], None)["houses"], step
    assert find(page, "replay-next").is_disabled() and find(page, "replay-last").is_disabled()
    end = states[-1]
    assert end.over and rules.scores(end) == record["result"]["scores"]
    shown = [find(page, "seat").nth(k).locator(".count").inner_text() for k in range(end.n)]
    assert shown == [f"{n} moose" for n in rules.scores(end)]
    # The arrow keys step too, Home and End go to the ends.
    page.locator("body").click(position={"x": 5, "y": 5})
    keys = [
        ("ArrowLeft", last - 1),
        ("ArrowLeft", last - 2),
        ("ArrowRight", last - 1),
        ("Home", 0),
        ("ArrowRight", 1),
        ("End", last),
    ]
    for key, expected in keys:
        page.keyboard.press(key)
        page.locator(f'[data-testid="replay-step"]:text-is("{expected}")').wait_for(timeout=5000)
    step_to(page, "replay-first", 0)
    step_to(page, "replay-last", last)
    step_to(page, "replay-prev", last - 1)
    page.locator("#replay-slider").fill(str(last // 2))  # the slider
    page.locator(f'[data-testid="replay-step"]:text-is("{last // 2}")').wait_for()
    assert page.evaluate(HOUSES_JS) == rules.view(states[last // 2], None)["houses"]
    # Following one seat's view hides the other hands.
    page.select_option("#replay-follow", "1")
    wait_for_count(page, "replay-hand", 1)
    hand = find(page, "replay-hand").locator("li[data-card]")
    assert [c.get_attribute("data-card") for c in hand.all()] == sorted(states[last // 2].hands[1])
    assert serious(page) == []
    assert page.problems == []


def wait_for_count(page: Any, testid: str, count: int) -> None:
    """Wait until exactly `count` elements carry the test id."""
    page.locator(f'[data-testid="{testid}"] >> nth={count - 1}').wait_for()
    page.locator(f'[data-testid="{testid}"] >> nth={count}').wait_for(state="detached")


def test_a_link_to_a_game_that_is_not_public_says_so(pages, server) -> None:
    page = pages(locale="es-ES")
    page.goto(f"{server.http}/g/g_0123456789")
    status = find(page, "replay-status")
    status.filter(has_text="no se puede repetir").wait_for()
    assert find(page, "replay-step").count() == 0
    find(page, "replay-back").click()  # to the lobby
    find(page, "queue-button").wait_for()
    assert page.url == server.http + "/"
    assert [p for p in page.problems if "404 (Not Found)" not in p] == []  # the record's GET


def play_to_end(page: Any, limit: float = 240) -> None:
    """Make the page's moves (the first legal one, or trap) until the game is over."""
    deadline = time.monotonic() + limit
    while not find(page, "game-over").count():
        assert time.monotonic() < deadline, "the game did not end in time"
        choice = find(page, "trap-button").or_(find(page, "legal-move")).first
        try:
            seq = page.locator("section.game").get_attribute("data-seq", timeout=2000)
            choice.click(timeout=1000)
            page.locator(f'section.game:not([data-seq="{seq}"])').wait_for(timeout=15000)
        except PlaywrightError:  # not our move, or the page redrew under the click
            time.sleep(0.05)


def test_the_end_screen_opens_the_replay_whose_last_step_is_the_end(pages, server) -> None:
    page = pages()
    page.goto(server.http)
    find(page, "name-input").fill("ada")
    find(page, "create-button").click()  # a private table: ada and a bot
    find(page, "add-bot-button").click()
    page.locator('[data-testid="seat"] .bot').wait_for()
    find(page, "start-button").click()
    play_to_end(page)
    find(page, "record-link").wait_for()  # the record is fetched
    [record] = [f["record"] for f in page.received if f.get("type") == "record"]
    states = states_of(record)
    end_houses = page.evaluate(HOUSES_JS)
    end_scores = [
        int(r.get_attribute("data-score"))
        for r in find(page, "scores").locator("tr[data-seat]").all()
    ]
    assert end_houses == rules.view(states[-1], None)["houses"]
    find(page, "replay-link").click()
    page.locator('[data-testid="replay-step"]:text-is("0")').wait_for()
    game = page.locator("section.replay").get_attribute("data-game")
    assert page.url == f"{server.http}/g/{game}"
    with pytest.raises(urllib.error.HTTPError):  # not public
        get_json(f"{server.http}/api/games/{game}/record")
    for step in range(1, len(record["moves"]) + 1):
        step_to(page, "replay-next", step)
        assert page.evaluate(HOUSES_JS) == rules.view(states[step], None)["houses"], step
    assert page.evaluate(HOUSES_JS) == end_houses
    shown = [find(page, "seat").nth(k).locator(".count").inner_text() for k in range(2)]
    assert shown == [f"{n} moose" for n in end_scores] and end_scores == rules.scores(states[-1])
    find(page, "replay-back").click()  # back to the end of the game
    find(page, "game-over").wait_for()
    # Its link, reloaded: a private table's game is not served over HTTP, so the page
    # reads the record over the socket, as one of its players.
    page.goto(f"{server.http}/g/{game}")
    step_to(page, "replay-last", len(record["moves"]))
    assert page.evaluate(HOUSES_JS) == end_houses
    assert [p for p in page.problems if "404 (Not Found)" not in p] == []


# -- why a card cannot be played, and a turn with nothing to play ----------------------


async def deal_to(redis_url: str, player: str, hand: list[str], draw: list[str]) -> str:
    """Deal a game to `player` (seat 0, first to move) and a greedy bot, from a stacked deck."""
    deck = stacked_deck(2, [hand, []], draw)
    seats = [Seat(player, "dora", None), Seat(None, "greedy-bot 1", "greedy")]
    async with open_store(redis_url) as store:
        games = Games(store, Settings(redis_url=redis_url, turn_time=3600))
        return (await games.create(seats, deck=deck, dealer=1)).id


def test_a_greyed_card_says_why_and_a_turn_with_no_play_says_discard(
    pages, moose_serve, redis_factory
) -> None:
    redis_server = redis_factory(appendonly=False)
    proc = moose_serve("--redis", redis_server.url, "--turn-time", "600")
    page = pages()
    page.goto(proc.http)
    find(page, "queue-button").wait_for()
    # Playwright's sync API hands over a socket's frames only inside one of its calls,
    # so the wait lets it run (a bare sleep would never see the welcome if it came
    # after the lobby was drawn, as it may on a loaded machine).
    wait_until(
        lambda: page.wait_for_timeout(50) or any(f.get("type") == "welcome" for f in page.received)
    )
    player = next(f["player"] for f in page.received if f.get("type") == "welcome")
    run_async(
        deal_to(
            redis_server.url, player, ["house", "door", "moose:kitchen", "trap"], ["room:kitchen"]
        )
    )
    find(page, "hand-card").nth(4).wait_for()
    reasons = {
        "door": "No open room of yours to close",
        "moose:kitchen": "Nobody else has a house card yet",
        "trap": "A trap only answers a moose played on you",
    }
    for card in page.locator('[data-testid="hand-card"]').all():
        code = card.get_attribute("data-card")
        why = card.get_attribute("aria-describedby")
        if code in reasons:
            assert card.is_disabled() and card.get_attribute("title") == reasons[code]
            assert page.locator(f"#{why}").inner_text() == reasons[code]
        else:  # house and room:kitchen can be played: no reason
            assert code in ("house", "room:kitchen") and card.is_enabled() and why is None
    assert find(page, "hand-hint").inner_text().startswith("Choose a card")
    assert serious(page) == []
    find(page, "rules-link").click()  # the rules, and back to the game
    find(page, "rules-back").filter(has_text="Back to the game").click()
    find(page, "hand-card").nth(4).wait_for()
    # Nothing can be played: every card says why, and the hint says to discard.
    run_async(
        deal_to(
            redis_server.url,
            player,
            ["moose:kitchen", "moose:living", "moose:bedroom", "trap"],
            ["moose:bathroom"],
        )
    )
    find(page, "hand-card").filter(has_text="Moose in the Bathroom").wait_for()
    assert find(page, "card-reason").count() == 5
    hint = find(page, "hand-hint")
    assert hint.inner_text().startswith("No card of yours can be played now: discard one")
    moves = [json.loads(m.get_attribute("data-move")) for m in find(page, "legal-move").all()]
    assert {m["action"] for m in moves} == {"discard"}
    find(page, "lang-button").click()
    assert hint.inner_text().startswith("Ahora no puedes jugar ninguna carta: descarta una")
    assert find(page, "card-reason").first.inner_text() == "Nadie más tiene carta de casa todavía"
    seq = page.locator("section.game").get_attribute("data-seq")
    find(page, "legal-move").first.click()  # the discard is taken
    page.locator(f'section.game:not([data-seq="{seq}"])').wait_for()
    assert page.problems == []


# -- the rules ----------------------------------------------------------------------


def test_the_rules_page_reads_in_english_and_spanish_from_the_lobby(pages, server) -> None:
    page = pages()
    page.goto(server.http)
    find(page, "queue-button").wait_for()
    find(page, "rules-link").click()
    rules_page = find(page, "rules")
    rules_page.wait_for()
    assert page.url == server.http + "/rules"
    headings = ["How to play", "The goal", "The cards", "A turn", "The trap", "The end"]
    assert [h.inner_text() for h in rules_page.locator("h2, h3").all()] == headings
    assert "The fewest moose wins." in rules_page.inner_text()
    assert serious(page) == []
    find(page, "lang-button").click()
    assert [h.inner_text() for h in rules_page.locator("h2, h3").all()] == [
        "Cómo se juega",
        "El objetivo",
        "Las cartas",
        "Un turno",
        "La trampa",
        "El final",
    ]
    assert page.evaluate("document.documentElement.lang") == "es"
    assert serious(page) == []
    find(page, "rules-back").click()  # "Volver": to the lobby
    find(page, "queue-button").wait_for()
    assert page.url == server.http + "/"
    spanish = pages(locale="es-ES")  # /rules opened directly, in the browser's language
    spanish.goto(server.http + "/rules")
    assert find(spanish, "rules").locator("h2").inner_text() == "Cómo se juega"
    assert "Gana quien tenga menos alces." in find(spanish, "rules").inner_text()
    assert page.problems == spanish.problems == []


def test_screenshots_of_a_replay_and_the_rules(pages, server, tmp_path) -> None:
    game = run_async(bot_game(server.url, players=3))
    for viewport, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
        page = pages(viewport=viewport)
        page.goto(f"{server.http}/g/{game}")
        find(page, "replay-step").wait_for()
        page.locator("#replay-slider").fill("24")
        page.locator('[data-testid="replay-step"]:text-is("24")').wait_for()
        page.screenshot(path=str(tmp_path / f"replay{suffix}.png"), full_page=True)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= viewport["width"], f"the replay is {width} px wide"
        find(page, "rules-link").click()
        find(page, "rules").wait_for()
        page.screenshot(path=str(tmp_path / f"rules{suffix}.png"), full_page=True)
        assert page.problems == []
    assert len(list(tmp_path.glob("*.png"))) == 4
    if os.environ.get("MOOSE_SCREENSHOTS"):
        DOCS.mkdir(exist_ok=True)
        for png in tmp_path.glob("*.png"):
            shutil.copy(png, DOCS / png.name)
