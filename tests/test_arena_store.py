"""Arena tournaments in Redis (arenas/store.py, arenas/runner.py, arenas/points.py):
points, recurring settings, and the scripts on a real Redis."""

from __future__ import annotations

import json

import pytest

from moose_server.arenas.calls import ArenaMemberCall, ArenaScoreCall, ArenaSeatCall
from moose_server.arenas.points import points
from moose_server.arenas.runner import new_arena, parse_recurring
from moose_server.arenas.store import ArenaError, ArenaStore
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import ArenaKeys


@pytest.mark.parametrize(
    ("places", "expected"),
    [
        ([1, 2], [2, 0]),
        ([1, 1], [1, 1]),
        ([1, 2, 3, 4], [2, 1, 1, 0]),
        ([1, 1, 1, 4], [1, 1, 1, 0]),
        ([1, 2, 3], [2, 1, 0]),
        ([2, 1, 2], [1, 2, 1]),
    ],
)
def test_points_are_two_per_opponent_beaten_one_per_tie_over_the_opponents(places, expected):
    assert points(places) == expected


def test_recurring_arenas_are_read_from_the_setting_and_bad_ones_refused():
    hourly, daily = parse_recurring("bots:hourly:30m:2-4, people:daily:2h:2-6")
    assert (hourly.who, hourly.minutes, hourly.min_players, hourly.max_players) == (
        "bots",
        30,
        2,
        4,
    )
    assert hourly.occurrence(1764640800 + 1234) == ("bots-hourly-2025120202", 1764640800)
    assert daily.occurrence(1764640800)[0] == "people-daily-20251202"
    for bad in (
        "bots:weekly:30m:2-4",
        "bots:hourly:90m:2-4",
        "robots:hourly:30m:2-4",
        "bots:hourly:30m:4-2",
        "bots:hourly:30",
    ):
        with pytest.raises(ValueError):
            parse_recurring(bad)


def member(name: str, low: int, high: int, rating: int = 1500) -> str:
    return json.dumps({"name": name, "min": low, "max": high, "bot": True, "r": rating})


async def open_arenas(redis_url: str) -> tuple[object, ArenaStore]:
    backend = await open_redis(redis_url, 4)
    return backend, ArenaStore(backend)


async def test_an_arena_is_created_once_per_id(redis_url):
    backend, arenas = await open_arenas(redis_url)
    try:
        call = new_arena("Bots", "bots", 30, (2, 4), arena_id="bots-hourly-1")
        assert await arenas.create(call)
        assert not await arenas.create(
            new_arena("Other", "all", 5, (2, 2), arena_id="bots-hourly-1")
        )
        got = await arenas.get("bots-hourly-1")
        assert (got.name, got.who, got.min_players, got.max_players) == ("Bots", "bots", 2, 4)
        assert got.end - got.start == 30 * 60_000
        with pytest.raises(ArenaError) as err:
            await arenas.get("nope")
        assert err.value.code == "no_such_arena"
    finally:
        await backend.aclose()  # type: ignore[attr-defined]


async def test_members_are_seated_by_fitting_sizes_and_never_in_two_games(redis_url):
    backend, arenas = await open_arenas(redis_url)
    try:
        for ident in ("a_1", "a_2"):
            await arenas.create(new_arena(ident, "all", 30, (2, 4), arena_id=ident))
        # Best rated first: p1 and p2 want 3-4 seats, p4 anything, p3 two only: p1, p2
        # and p4 sit together, p3 waits.
        for p, low, high, r in (
            ("p1", 3, 4, 1700),
            ("p2", 3, 4, 1600),
            ("p3", 2, 2, 1500),
            ("p4", 2, 4, 1550),
        ):
            await arenas.member(ArenaMemberCall("a_1", p, "join", member(p, low, high, r)))
        # p4 is in a second arena too, with p5: not seated there while playing in a_1.
        for p in ("p4", "p5"):
            await arenas.member(ArenaMemberCall("a_2", p, "join", member(p, 2, 2)))
        tables = await arenas.seat(ArenaSeatCall("a_1", 5000, 64))
        assert [sorted(s["player"] for s in t["seats"]) for t in tables] == [["p1", "p2", "p4"]]
        assert await arenas.seat(ArenaSeatCall("a_2", 5000, 64)) == []
        game = tables[0]["game"]
        # The game ends: points once, p4 free again and seated in a_2.
        result = json.dumps(
            {
                "players": ["p1", "p2", "p4"],
                "places": [1, 2, 3],
                "points": [2, 1, 0],
                "away": [False, False, True],
            }
        )
        assert await arenas.score(ArenaScoreCall("a_1", game, result))
        assert not await arenas.score(ArenaScoreCall("a_1", game, result))
        members, playing = await arenas.standings("a_1")
        assert [(m.player, m.points, m.games) for m in members][:2] == [("p1", 2, 1), ("p2", 1, 1)]
        assert playing == {}
        assert {m.player: m.state for m in members}["p4"] == "paused"  # away at the end
        again = await arenas.seat(ArenaSeatCall("a_2", 5000, 64))
        assert [sorted(s["player"] for s in t["seats"]) for t in again] == [["p4", "p5"]]
    finally:
        await backend.aclose()  # type: ignore[attr-defined]


async def test_pause_leave_and_errors_leave_the_arena_as_it_was(redis_url):
    backend, arenas = await open_arenas(redis_url)
    try:
        await arenas.create(new_arena("A", "all", 30, (2, 2), arena_id="a_1"))
        with pytest.raises(ArenaError) as err:
            await arenas.member(ArenaMemberCall("a_1", "p1", "pause"))
        assert err.value.code == "not_member"
        await arenas.member(ArenaMemberCall("a_1", "p1", "join", member("p1", 2, 2)))
        assert (await arenas.member(ArenaMemberCall("a_1", "p1", "pause")))["state"] == "paused"
        await arenas.member(ArenaMemberCall("a_1", "p2", "join", member("p2", 2, 2)))
        assert await arenas.seat(ArenaSeatCall("a_1", 5000, 64)) == []  # p1 paused
        await arenas.member(ArenaMemberCall("a_1", "p1", "join", member("p1", 2, 2)))
        assert len(await arenas.seat(ArenaSeatCall("a_1", 5000, 64))) == 1
        await arenas.member(ArenaMemberCall("a_1", "p2", "leave"))
        assert (await arenas.finish("a_1", now=True))["status"] == "closing"  # a game runs
        with pytest.raises(ArenaError) as err:
            await arenas.member(ArenaMemberCall("a_1", "p3", "join", member("p3", 2, 2)))
        assert err.value.code == "arena_over"
        assert "p3" not in {m.player for m in (await arenas.standings("a_1"))[0]}
    finally:
        await backend.aclose()  # type: ignore[attr-defined]


async def test_an_arena_closes_after_its_last_game_and_names_its_winners(redis_url):
    backend, arenas = await open_arenas(redis_url)
    try:
        await arenas.create(new_arena("A", "all", 30, (2, 2), arena_id="a_1"))
        for p in ("p1", "p2"):
            await arenas.member(ArenaMemberCall("a_1", p, "join", member(p, 2, 2)))
        [table] = await arenas.seat(ArenaSeatCall("a_1", 5000, 64))
        assert (await arenas.finish("a_1", now=True))["status"] == "closing"
        result = json.dumps(
            {"players": ["p1", "p2"], "places": [2, 1], "points": [0, 2], "away": [False, False]}
        )
        await arenas.score(ArenaScoreCall("a_1", table["game"], result))
        done = await arenas.finish("a_1")
        assert (done["status"], done["winners"], done["awarded"]) == ("over", ["p2"], False)
        await arenas.award("a_1", done["winners"], done["end"])
        assert await arenas.won("p2") == ["a_1"] and await arenas.won("p1") == []
        assert (await arenas.finish("a_1"))["awarded"] is True
        keys = ArenaKeys.of("a_1")
        assert 0 < await backend.client.ttl(keys.points) <= 30 * 86400  # type: ignore[attr-defined]
        assert not await backend.exists(ArenaKeys.of("a_1").waiting)  # type: ignore[attr-defined]
    finally:
        await backend.aclose()  # type: ignore[attr-defined]


async def test_an_arena_closed_longer_ago_than_it_is_kept_leaves_the_list(redis_url):
    backend, arenas = await open_arenas(redis_url)
    try:
        seconds, _ = await backend.time()  # type: ignore[attr-defined]
        past = int(seconds) * 1000 - 10 * 60_000
        await arenas.create(new_arena("Old", "all", 1, (2, 2), start_ms=past, arena_id="a_old"))
        await arenas.create(new_arena("New", "all", 30, (2, 2), arena_id="a_new"))
        assert [a.id for a in await arenas.listed()] == ["a_new", "a_old"]
        assert (await arenas.finish("a_old", keep=60))["status"] == "over"
        assert [a.id for a in await arenas.listed()] == ["a_new"]
    finally:
        await backend.aclose()  # type: ignore[attr-defined]
