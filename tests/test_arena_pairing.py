"""Arena pairing on a real Redis, one seating step at a time (arenas/lua/arena_seat.lua):
whoever waited longest is seated first, one address is not seated with itself
while others are free, and an away seat earns nothing (arenas/points.py)."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest

from moose_server.arenas.calls import ArenaMemberCall, ArenaScoreCall, ArenaSeatCall
from moose_server.arenas.points import seat_points
from moose_server.arenas.runner import new_arena
from moose_server.arenas.store import ArenaStore
from moose_server.storage.connection import open_redis


@pytest.mark.parametrize(
    ("places", "away", "expected"),
    [
        ([1, 2], [False, False], [2, 0]),
        ([1, 2], [True, False], [0, 2]),  # the bot won the away seat's game: it earns nothing
        ([2, 1], [True, False], [0, 2]),
        ([1, 2, 3], [True, False, False], [0, 2, 1]),
        ([1, 1, 3], [False, True, False], [2, 0, 1]),
        ([1, 2], [True, True], [0, 0]),
    ],
)
def test_an_away_seat_earns_nothing_and_counts_as_beaten(places, away, expected):
    assert seat_points(places, away) == expected


def member(name: str, low: int, high: int, *, rating: int = 1500, ip: str | None = None) -> str:
    data = {"name": name, "min": low, "max": high, "bot": ip is None, "r": rating}
    return json.dumps(data if ip is None else {**data, "ip": ip})


async def rounds(arenas: ArenaStore, arena: str, count: int) -> list[list[str]]:
    """`count` seatings, each table's game scored at once (its first seat wins)."""
    tables = []
    for _ in range(count):
        for table in await arenas.seat(ArenaSeatCall(arena, 5000, 64)):
            players = [s["player"] for s in table["seats"]]
            tables.append(players)
            places = [1] + [2] * (len(players) - 1)
            result = {
                "players": players,
                "places": places,
                "points": seat_points(places, [False] * len(players)),
                "away": [False] * len(players),
            }
            await arenas.score(ArenaScoreCall(arena, table["game"], json.dumps(result)))
    return tables


@pytest.mark.parametrize(
    ("sizes", "members"),
    [((2, 3), ["b1", "b2", "b3", "b4"]), ((2, 2), ["b1", "b2", "b3"])],
)
async def test_every_waiting_member_is_seated_before_anyone_plays_twice(redis_url, sizes, members):
    backend = await open_redis(redis_url, 4)
    arenas = ArenaStore(backend)
    try:
        await arenas.create(new_arena("A", "bots", 30, sizes, arena_id="a_wait"))
        for rank, p in enumerate(members):  # the best rated first, as before
            call = ArenaMemberCall("a_wait", p, "join", member(p, *sizes, rating=1800 - rank))
            await arenas.member(call)
        tables = await rounds(arenas, "a_wait", 24)
        played = Counter(p for t in tables for p in t)
        assert set(played) == set(members), played
        assert max(played.values()) - min(played.values()) <= 1, played
        for before, after in itertools.pairwise(tables):
            # Whoever sat out a table sits at the next one.
            left_out = set(members) - set(before)
            assert left_out <= set(after), (before, after)
    finally:
        await backend.aclose()


async def test_one_address_is_not_seated_with_itself_while_others_are_free(redis_url):
    backend = await open_redis(redis_url, 4)
    arenas = ArenaStore(backend)
    try:
        await arenas.create(new_arena("A", "people", 30, (2, 2), arena_id="a_ip"))
        # Best rated first would seat p4 with p3 and p2 with p1: one address each.
        for p, ip, r in (("p1", "x", 1500), ("p2", "x", 1510), ("p3", "y", 1520)):
            await arenas.member(
                ArenaMemberCall("a_ip", p, "join", member(p, 2, 2, rating=r, ip=ip))
            )
        await arenas.member(
            ArenaMemberCall("a_ip", "p4", "join", member("p4", 2, 2, rating=1530, ip="y"))
        )
        tables = await arenas.seat(ArenaSeatCall("a_ip", 5000, 64))
        pairs = sorted(sorted(s["player"] for s in t["seats"]) for t in tables)
        assert pairs == [["p1", "p3"], ["p2", "p4"]]
        # Alone with each other, two of one address do play.
        await arenas.create(new_arena("B", "people", 30, (2, 2), arena_id="a_two"))
        for p in ("q1", "q2"):
            await arenas.member(ArenaMemberCall("a_two", p, "join", member(p, 2, 2, ip="x")))
        [table] = await arenas.seat(ArenaSeatCall("a_two", 5000, 64))
        assert sorted(s["player"] for s in table["seats"]) == ["q1", "q2"]
    finally:
        await backend.aclose()


async def test_a_member_whose_own_table_did_not_form_joins_a_later_one(redis_url):
    backend = await open_redis(redis_url, 4)
    arenas = ArenaStore(backend)
    try:
        await arenas.create(new_arena("A", "bots", 30, (2, 3), arena_id="a_late"))
        # First in line p1 (2-3) starts with p2 (3 only), then no third fits: no table.
        # p3 (2 only) comes last: it sits with p1, ahead of it in line.
        for p, low, high in (("p1", 2, 3), ("p2", 3, 3), ("p3", 2, 2)):
            await arenas.member(ArenaMemberCall("a_late", p, "join", member(p, low, high)))
        tables = await arenas.seat(ArenaSeatCall("a_late", 5000, 64))
        assert [sorted(s["player"] for s in t["seats"]) for t in tables] == [["p1", "p3"]]
    finally:
        await backend.aclose()
