"""GET /metrics after real games: every family is there and counts what happened.

Real sockets and a real Redis; the numbers are checked against the game record
and the events the players saw, never against durations.
"""

from __future__ import annotations

import asyncio
import gc
import time
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from helpers import http_base, play_out, table_game

Message = dict[str, Any]
FAMILIES = {
    "moose_sockets": "gauge",
    "moose_games_followed": "gauge",
    "moose_games_running": "gauge",
    "moose_queue_players": "gauge",
    "moose_redis_up": "gauge",
    "moose_moves": "counter",
    "moose_auto_moves": "counter",
    "moose_timeouts": "counter",
    "moose_deadline_delay_seconds": "histogram",
    "moose_move_latency_seconds": "histogram",
    "moose_reconnects": "counter",
    "moose_errors": "counter",
    "moose_sockets_refused": "counter",
    "moose_loop_lag_seconds": "histogram",
    "moose_gc_pause_seconds": "histogram",
}


class Scrape:
    """One scrape of /metrics: the families and every sample's value."""

    def __init__(self, text: str) -> None:
        self.types: dict[str, str] = {}
        self.samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        for family in text_string_to_metric_families(text):
            if not family.name.endswith("_created"):  # prometheus-client's own extras
                self.types[family.name] = family.type
            for s in family.samples:
                self.samples[(s.name, tuple(sorted(s.labels.items())))] = s.value

    def __call__(self, name: str, **labels: str) -> float:
        """The value of one sample (KeyError if the server does not export it)."""
        return self.samples[(name, tuple(sorted(labels.items())))]


async def scrape(url: str) -> Scrape:
    """GET the /metrics of the instance whose WebSocket is at `url`."""
    async with aiohttp.ClientSession() as session, session.get(http_base(url) + "/metrics") as resp:
        assert resp.status == 200
        assert resp.content_type == "text/plain"
        return Scrape(await resp.text())


def move_events(events: list[Message]) -> list[Message]:
    """The `move` events among a seat's events."""
    return [e["event"] for e in events if e["event"]["kind"] == "move"]


async def test_metrics_count_a_real_game(moose_server, ws_client):
    url = await moose_server()
    a, b = await ws_client(url, "ann"), await ws_client(url, "bob", binary=False)
    game, _ = await table_game([a, b])
    during = await scrape(url)
    assert during.types == FAMILIES
    assert during("moose_games_running") == 1
    # One of them is to act: the other's move is not its turn; both moves are illegal.
    codes = sorted(
        [(await c.request("move", game=game, move={"action": "fly"}))["code"] for c in (a, b)]
    )
    assert codes == ["illegal_move", "not_your_turn"]
    events = await asyncio.gather(play_out(a, game, seed=1), play_out(b, game, seed=2))
    record = (await a.request("record", game=game))["record"]
    again = await ws_client(url, None)
    assert (await again.hello(token=a.token))["type"] == "welcome"
    queued = await ws_client(url, "quinn")
    assert (await queued.request("queue", min_players=3, max_players=6))["type"] == "queued"

    m = await scrape(url)
    moves = move_events(events[0])
    assert len(moves) == len(record["moves"])
    assert m("moose_moves_total") == len(record["moves"])
    for kind in ("bot", "forced", "timeout"):
        made = sum(1 for e in moves if e["auto"] == kind)
        assert m("moose_auto_moves_total", kind=kind) == made, kind
    by_players = sum(1 for e in moves if e["auto"] is None)
    assert m("moose_move_latency_seconds_count", stage="commit") == by_players
    assert 1 <= m("moose_move_latency_seconds_count", stage="fanout") <= len(moves) + 2
    assert m("moose_errors_total", code="illegal_move") == 1
    assert m("moose_errors_total", code="not_your_turn") == 1
    assert m("moose_errors_total", code="rate_limited") == 0
    assert m("moose_reconnects_total") == 1
    assert m("moose_sockets") == 4
    assert m("moose_games_running") == 0
    assert m("moose_queue_players", max_players="6") == 1
    assert m("moose_queue_players", max_players="4") == 0
    assert m("moose_redis_up") == 1
    assert m("moose_timeouts_total") == 0
    assert m("moose_deadline_delay_seconds_count") == 0


async def test_the_loop_lag_and_every_collection_are_timed(moose_server):
    url = await moose_server()  # in this process: its collections are ours
    before = await scrape(url)
    gc.collect()
    blocked = time.perf_counter()
    while time.perf_counter() - blocked < 0.12:  # hold the loop: a probe's timer is due
        pass
    await asyncio.sleep(0.2)  # a few more probes run
    after = await scrape(url)
    full = ("moose_gc_pause_seconds_count", {"generation": "2"})
    assert after(full[0], **full[1]) >= before(full[0], **full[1]) + 1
    assert after("moose_loop_lag_seconds_count") > before("moose_loop_lag_seconds_count")
    # The probe due while the loop was held ran at least 120 - 50 ms late (never less).
    late = ("moose_loop_lag_seconds_bucket", {"le": "0.05"})
    lagged = after("moose_loop_lag_seconds_count") - after(late[0], **late[1])
    assert lagged >= 1


async def test_timeouts_and_how_late_deadlines_fire(moose_server, ws_client):
    url = await moose_server(turn_time=0.1, answer_time=0.1, away_after=1, poll_interval=0.02)
    a, b = await ws_client(url, "ann"), await ws_client(url, "bob")
    game, _ = await table_game([a, b])
    seen = [await a.expect(type="event", game=game, timeout=60)]
    while seen[-1]["event"]["kind"] != "over":  # nobody moves: timeouts, away, then bots
        seen.append(await a.expect(type="event", game=game, timeout=60))
    record = (await a.request("record", game=game))["record"]

    m = await scrape(url)
    timed_out = sum(1 for e in move_events(seen) if e["auto"] == "timeout")
    assert timed_out >= 2  # each seat once, then it is away
    assert m("moose_auto_moves_total", kind="timeout") == timed_out
    # Every fired deadline played a move; a seat the server plays has a safety
    # deadline too, which fires only when its auto-play is slower than the turn.
    assert m("moose_timeouts_total") >= timed_out
    assert m("moose_deadline_delay_seconds_count") == m("moose_timeouts_total")
    assert m("moose_deadline_delay_seconds_sum") >= 0
    assert m("moose_moves_total") == len(record["moves"])
    assert m("moose_move_latency_seconds_count", stage="commit") == 0  # nobody moved


async def test_each_instance_counts_its_own_commits(moose_server, ws_client):
    urls = [await moose_server(), await moose_server()]  # two apps, two registries
    a, b = await ws_client(urls[0], "ann"), await ws_client(urls[1], "bob")
    game, _ = await table_game([a, b])
    await asyncio.gather(play_out(a, game, seed=3), play_out(b, game, seed=4))
    record = (await a.request("record", game=game))["record"]
    first, second = [await scrape(url) for url in urls]
    assert first("moose_moves_total") + second("moose_moves_total") == len(record["moves"])
    assert first("moose_move_latency_seconds_count", stage="commit") > 0
    assert second("moose_move_latency_seconds_count", stage="commit") > 0
    assert first("moose_sockets") == second("moose_sockets") == 1


def test_deploy_readme_lists_every_family():
    text = (Path(__file__).resolve().parent.parent / "deploy" / "README.md").read_text()
    for name, kind in FAMILIES.items():
        assert f"`{name}_total`" in text if kind == "counter" else f"`{name}`" in text, name
