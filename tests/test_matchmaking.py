"""Matchmaking against a real redis-server: the queue, private tables, many instances.

Waiting times come from Redis' clock, so no test can set the time. A test that
needs a wait not yet over uses a wait of a minute; one that needs it over waits
for the table to form (or sleeps past a short wait before a call that must see
it over): a busy machine makes neither fail.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from moose.protocol import ERROR_CODES
from moose_server.matchmaking.calls import FormCall
from moose_server.matchmaking.matchmaker import (
    CODE_ALPHABET,
    FormedTable,
    MatchError,
    Matchmaker,
    MatchOptions,
)
from moose_server.play.seats import Seat
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import mm_done_key, mm_key

from helpers import until

WAIT = 0.1  # a wait that is over soon
LONG = 60.0  # a wait, lease or lifetime no test outlasts


@pytest.fixture
async def backend(backend_url: str) -> AsyncIterator[Any]:
    """One redis-server, then a Redis Cluster: every script must run on both.

    The server's gateway: the scripts run through its Batcher on both.
    """
    backend = await open_redis(backend_url, 32)
    yield backend
    await backend.aclose()


@pytest.fixture
async def redis(backend: Any, backend_url: str) -> AsyncIterator[Any]:
    """A plain redis-py client of the same backend, to look at what the scripts left."""
    kind = RedisCluster if backend.cluster else aioredis.Redis
    client = kind.from_url(backend_url)
    yield client
    await client.aclose()


@pytest.fixture
def make_mm(backend: Any) -> Callable[..., Matchmaker]:
    def make(**kwargs: object) -> Matchmaker:
        kwargs.setdefault("match_wait", WAIT)
        return Matchmaker(backend, MatchOptions(**kwargs))  # type: ignore[arg-type]

    return make


async def queue(mm: Matchmaker, ranges: list[tuple[int, int]], tag: str = "p") -> list[str]:
    """Queue one player per range, in order (so the first is the oldest)."""
    players = [f"{tag}{i}" for i in range(len(ranges))]
    for player, (low, high) in zip(players, ranges, strict=True):
        await mm.enqueue(player, player.upper(), low, high)
    return players


def humans(table: FormedTable) -> list[str]:
    return [s.player for s in table.seats if s.player is not None]


async def expect(code: str, call: object) -> MatchError:
    with pytest.raises(MatchError) as info:
        await call  # type: ignore[misc]
    assert info.value.code == code
    assert info.value.code in ERROR_CODES
    return info.value


def check_tables(tables: list[FormedTable], ranges: dict[str, tuple[int, int]]) -> None:
    """Every human's range includes the table's size."""
    for table in tables:
        for player in humans(table):
            low, high = ranges[player]
            assert low <= len(table.seats) <= high, (player, ranges[player], len(table.seats))


# -- the queue -------------------------------------------------------------------


async def test_full_table_at_common_maximum_forms_at_once(make_mm):
    mm = make_mm(match_wait=60)
    players = await queue(mm, [(2, 4)] * 4 + [(2, 6)] * 3)
    tables = await mm.form_tables()
    assert [humans(t) for t in tables] == [players[:4]]
    assert tables[0].source == "queue"
    assert tables[0].seats[0] == Seat(player="p0", name="P0", bot=None)
    assert await mm.queue_sizes() == {"2": 0, "3": 0, "4": 0, "5": 0, "6": 3}


async def test_largest_table_forms_after_the_wait(make_mm):
    players = await queue(make_mm(match_wait=LONG), [(2, 6)] * 5)
    assert await make_mm(match_wait=LONG).form_tables() == []  # a sixth may still come
    tables = await until(make_mm(match_wait=WAIT).form_tables)
    assert [humans(t) for t in tables] == [players]  # one table of 5, not 2 + 3


async def test_best_smaller_table_after_the_wait(make_mm):
    players = await queue(make_mm(), [(2, 3), (3, 6), (2, 5)])
    assert await make_mm(match_wait=LONG).form_tables() == []
    assert [humans(t) for t in await until(make_mm(match_wait=WAIT).form_tables)] == [players]


async def test_disjoint_ranges_never_share_a_table(make_mm):
    mm = make_mm(match_wait=0)
    await queue(mm, [(2, 3), (5, 6)])
    assert await mm.form_tables() == []
    more = await queue(mm, [(2, 3), (5, 6)], tag="q")
    tables = await mm.form_tables()
    assert sorted(humans(t) for t in tables) == [["p0", more[0]]]
    assert await mm.queue_sizes() == {"2": 0, "3": 0, "4": 0, "5": 0, "6": 2}


async def test_oldest_tickets_are_seated_first(make_mm):
    mm = make_mm(match_wait=60)
    players = await queue(mm, [(2, 2)] * 5)
    tables = await mm.form_tables()
    assert [humans(t) for t in tables] == [players[0:2], players[2:4]]
    assert await mm.leave(players[4])
    # After the wait the oldest ticket picks its table first, with the oldest company,
    # before younger tickets form the full table they could have formed alone.
    mm = make_mm(match_wait=WAIT)
    old = await queue(mm, [(2, 3)], tag="old")
    await asyncio.sleep(WAIT + 0.05)
    young = await queue(mm, [(3, 3)] * 3, tag="young")
    tables = await mm.form_tables()
    assert [humans(t) for t in tables] == [[old[0], young[0], young[1]]]


async def test_leave_removes_the_ticket(make_mm):
    mm = make_mm(match_wait=0)
    await mm.enqueue("alice", "Alice", 2, 2)
    assert await mm.leave("alice") is True
    assert await mm.leave("alice") is False
    assert sum((await mm.queue_sizes()).values()) == 0
    await mm.enqueue("bob", "Bob", 2, 2)
    assert await mm.form_tables() == []  # alice is gone: bob waits alone


async def test_enqueue_twice_and_bad_ranges(make_mm):
    mm = make_mm()
    since = await mm.enqueue("alice", "Alice", 2, 4)
    assert since > 1_600_000_000_000  # Redis time in ms
    await expect("already_queued", mm.enqueue("alice", "Alice", 3, 6))
    for low, high in [(1, 4), (2, 7), (5, 3), (True, 4)]:
        await expect("bad_message", mm.enqueue("bob", "Bob", low, high))
    assert await mm.queue_sizes() == {"2": 0, "3": 0, "4": 1, "5": 0, "6": 0}


async def test_bots_fill_after_queue_bots_after(make_mm):
    mm = make_mm(match_wait=WAIT, queue_bots_after=0.2)
    await mm.enqueue("alice", "Alice", 3, 5)
    assert await make_mm(match_wait=WAIT, queue_bots_after=LONG).form_tables() == []
    [table] = await until(mm.form_tables)
    assert table.seats == [
        Seat("alice", "Alice", None),
        Seat(None, "greedy-bot 1", "greedy"),
        Seat(None, "greedy-bot 2", "greedy"),
    ]
    # Bots take only the seats nobody waiting can take.
    mm = make_mm(match_wait=WAIT, queue_bots_after=0.2, bot="random")
    await queue(mm, [(3, 5), (2, 3)])
    await asyncio.sleep(0.25)
    [table] = await mm.form_tables()
    assert [s.player for s in table.seats] == ["p0", "p1", None]
    assert table.seats[2].bot == "random"


def test_the_kind_of_queue_bots_comes_from_the_settings():
    assert MatchOptions.of(Settings()).bot == "greedy"
    assert MatchOptions.of(Settings(queue_bot="mcts")).bot == "mcts"
    with pytest.raises(ValueError, match="unknown bot 'clever'"):
        MatchOptions.of(Settings(queue_bot="clever"))


async def test_forget_instance_drops_only_its_tickets(backend):
    a = Matchmaker(backend, MatchOptions(match_wait=60, instance="a"))
    b = Matchmaker(backend, MatchOptions(match_wait=60, instance="b"))
    await queue(a, [(3, 6)] * 3, tag="a")
    await queue(b, [(3, 6)] * 2, tag="b")
    assert await b.forget_instance("a") == 3
    assert await b.forget_instance("a") == 0
    assert await a.leave("a0") is False
    assert await a.leave("b0") is True
    assert sum((await a.queue_sizes()).values()) == 1


async def test_a_resent_call_runs_once(make_mm, redis):
    """The gateway re-sends a script after a lost reply: the nonce answers it from memory."""
    mm = make_mm(match_wait=0)
    await queue(mm, [(2, 2)] * 2)
    call = FormCall(0, 0, 1000, 30_000_000, 100, 100, 8)
    keys, args = call.build("nonce-1")
    first = await mm.redis.run(call, keys, args)
    await queue(mm, [(2, 2)] * 2, tag="q")
    assert await mm.redis.run(call, keys, args) == first
    assert len(await mm.form_tables()) == 1  # the second pair was not taken by the resend


async def test_idle_polling_writes_nothing(make_mm, redis):
    mm = make_mm(match_wait=60)
    await mm.enqueue("alice", "Alice", 3, 3)
    done = mm_done_key("*")  # the replies remembered for re-sent calls
    remembered = len(await redis.keys(done))
    for _ in range(5):
        assert await mm.form_tables() == []
    await expect("already_queued", mm.enqueue("alice", "Alice"))
    assert len(await redis.keys(done)) == remembered == 1


async def test_names_keep_every_character(make_mm):
    mm = make_mm(match_wait=0)
    names = ['Zoë "the moose" \\ 🫎', "李雷/韩梅梅"]
    for n, name in enumerate(names):
        await mm.enqueue(f"p{n}", name, 2, 2)
    [table] = await mm.form_tables()
    assert [s.name for s in table.seats] == names
    info = await mm.create_table("h", names[0], 2)
    assert (await mm.join_table(info.code, "x", names[1])).seats[1] == Seat("x", names[1], None)


# -- private tables ----------------------------------------------------------------


async def test_private_table_flow_and_errors(make_mm):
    mm = make_mm()
    info = await mm.create_table("h", "Host", 3)
    assert len(info.code) == 8 and set(info.code) <= set(CODE_ALPHABET)
    assert info.seats == [Seat("h", "Host", None), None, None]
    await expect("bad_code", mm.join_table("ZZZZZZZZ", "x", "X"))
    await expect("bad_code", mm.join_table(info.code[:6], "x", "X"))
    await expect("bad_code", mm.join_table("no!", "x", "X"))
    joined = await mm.join_table(f" {info.code.lower()} ", "x", "X")
    assert joined.seats[1] == Seat("x", "X", None)
    await expect("already_seated", mm.join_table(info.code, "x", "X"))
    await expect("already_seated", mm.create_table("x", "X", 2))
    await expect("already_queued", mm.enqueue("x", "X"))
    await expect("not_host", mm.add_bot(info.code, "x", "greedy"))
    await expect("bad_message", mm.add_bot(info.code, "h", "nobody"))
    await expect("not_host", mm.start_table(info.code, "x"))
    full = await mm.add_bot(info.code, "h", "random")
    assert full.seats[2] == Seat(None, "random-bot 1", "random")
    assert full.as_message()["seats"][2] == {
        "name": "random-bot 1",
        "player": None,
        "bot": "random",
        "is_bot": True,
    }
    await expect("table_full", mm.join_table(info.code, "y", "Y"))
    await expect("table_full", mm.add_bot(info.code, "h", "greedy"))
    other = await mm.create_table("y", "Y", 2)
    await expect("already_seated", mm.join_table(other.code, "x", "X"))
    await mm.enqueue("q", "Q")
    await expect("already_queued", mm.join_table(other.code, "q", "Q"))
    await expect("already_queued", mm.create_table("q", "Q", 2))
    started = await mm.start_table(info.code, "h")
    assert started.source == f"table:{info.code}"
    assert [s.name for s in started.seats] == ["Host", "X", "random-bot 1"]
    await expect("bad_code", mm.table(info.code))
    await mm.enqueue("x", "X")  # free again once the table has started


async def test_start_needs_two_seats(make_mm):
    mm = make_mm()
    info = await mm.create_table("h", "Host", 4)
    await expect("bad_message", mm.start_table(info.code, "h"))
    await mm.add_bot(info.code, "h", "greedy")
    started = await mm.start_table(info.code, "h")
    assert [s.bot for s in started.seats] == [None, "greedy"]  # empty seats are dropped


async def test_host_leaving_hands_over_then_closes(make_mm):
    mm = make_mm()
    info = await mm.create_table("h", "Host", 4)
    await mm.add_bot(info.code, "h", "greedy")
    await mm.join_table(info.code, "x", "X")
    before = await mm.table(info.code)
    await expect("bad_code", mm.leave_table(info.code, "nobody"))  # a stranger sees no table
    assert await mm.table(info.code) == before
    after = await mm.leave_table(info.code, "h")
    assert after is not None and after.host == "x"
    assert after.seats[0] is None
    await mm.enqueue("h", "Host")  # the old host is free
    await mm.add_bot(info.code, "x", "greedy")  # the new host may act
    assert await mm.leave_table(info.code, "x") is None  # only bots left: closed
    await expect("bad_code", mm.table(info.code))
    await mm.enqueue("x", "X")


async def test_tables_expire(make_mm):
    info = await make_mm(table_ttl=LONG).create_table("h", "Host", 3)
    await expect("already_seated", make_mm().create_table("h", "Host", 2))
    mm = make_mm(table_ttl=0.2)
    await mm.join_table(info.code, "x", "X")  # each change gives the table its lifetime anew

    async def gone() -> bool:
        try:
            await mm.table(info.code)
        except MatchError as exc:
            return exc.code == "bad_code"
        return False

    await until(gone)
    await expect("bad_code", mm.join_table(info.code, "y", "Y"))
    await mm.enqueue("h", "Host")  # both are free again
    await mm.enqueue("x", "X")


# -- many tickets, many instances -------------------------------------------------


def random_ranges(rng: random.Random, n: int) -> list[tuple[int, int]]:
    out = []
    for _ in range(n):
        low = rng.randint(2, 6)
        out.append((low, rng.randint(low, 6)))
    return out


async def test_concurrent_form_tables_seat_everyone_once(backend_url):
    rng = random.Random(7)
    ranges = dict(zip([f"p{i}" for i in range(240)], random_ranges(rng, 240), strict=True))
    clients = [await open_redis(backend_url, 4) for _ in range(12)]
    mms = [
        Matchmaker(c, MatchOptions(match_wait=0.05, queue_bots_after=0.1, instance=f"i{n}"))
        for n, c in enumerate(clients)
    ]
    formed: list[FormedTable] = []
    done = asyncio.Event()

    async def producer() -> None:
        # Tickets arrive while the instances are forming tables.
        items = list(ranges.items())
        for start in range(0, len(items), 20):
            batch = enumerate(items[start : start + 20])
            await asyncio.gather(*(mms[j % 12].enqueue(p, p, lo, hi) for j, (p, (lo, hi)) in batch))
            await asyncio.sleep(0.005)
        done.set()

    async def former(mm: Matchmaker) -> int:
        won = 0
        while not done.is_set() or sum((await mm.queue_sizes()).values()):
            tables = await mm.form_tables()
            formed.extend(tables)
            won += bool(tables)
            await asyncio.sleep(0.001)
        return won

    _, *wins = await asyncio.gather(producer(), *(former(mm) for mm in mms))
    assert sum(1 for w in wins if w) >= 3  # the instances really raced for the queue
    seated = Counter(p for t in formed for p in humans(t))
    assert set(seated) == set(ranges)
    assert max(seated.values()) == 1
    check_tables(formed, ranges)
    for c in clients:
        await c.aclose()


async def test_simultaneous_form_tables_over_a_full_queue(backend_url, make_mm):
    rng = random.Random(3)
    ranges = dict(zip([f"p{i}" for i in range(300)], random_ranges(rng, 300), strict=True))
    await queue(make_mm(), list(ranges.values()))
    clients = [await open_redis(backend_url, 4) for _ in range(20)]
    mms = [Matchmaker(c, MatchOptions(match_wait=0)) for c in clients]
    formed: list[FormedTable] = []
    for _ in range(5):  # 20 connections fire at the same moment, a few times over
        for tables in await asyncio.gather(*(mm.form_tables() for mm in mms)):
            formed += tables
    seated = Counter(p for t in formed for p in humans(t))
    assert max(seated.values()) == 1
    left = await waiting(mms[0])
    assert set(seated) | set(left) == set(ranges) and not set(seated) & set(left)
    assert no_table_left(left, ranges, full=False)
    check_tables(formed, ranges)
    for c in clients:
        await c.aclose()


async def waiting(mm: Matchmaker) -> list[str]:
    """The players still queued, oldest first."""
    return [p.decode() for p in await mm.redis.client.zrange(mm_key("queue"), 0, -1)]


def no_table_left(left: list[str], ranges: dict[str, tuple[int, int]], *, full: bool) -> bool:
    """No k waiting players could share a table of k (full: one at all their maximum)."""
    for k in range(2, 7):
        fits = [p for p in left if ranges[p][0] <= k <= ranges[p][1]]
        if full:
            fits = [p for p in fits if ranges[p][1] == k]
        if len(fits) >= k:
            return False
    return True


async def test_forming_until_quiet_leaves_no_possible_table(make_mm, redis):
    rng = random.Random(11)
    for round_ in range(6):
        await redis.flushall()
        expired = round_ % 2 == 1
        mm = make_mm(match_wait=0 if expired else 60)
        ranges = dict(zip([f"p{i}" for i in range(60)], random_ranges(rng, 60), strict=True))
        await queue(mm, list(ranges.values()))
        formed: list[FormedTable] = []
        while tables := await mm.form_tables():
            formed += tables
        check_tables(formed, ranges)
        left = await waiting(mm)
        assert no_table_left(left, ranges, full=not expired)
        assert len(left) + sum(len(t.seats) for t in formed) == 60


async def test_two_thousand_players_are_all_seated(make_mm):
    rng = random.Random(2000)
    ranges = dict(zip([f"p{i}" for i in range(2000)], random_ranges(rng, 2000), strict=True))
    mm = make_mm(match_wait=LONG, queue_bots_after=LONG)
    for batch in range(0, 2000, 200):
        part = list(ranges.items())[batch : batch + 200]
        await asyncio.gather(*(mm.enqueue(p, p, lo, hi) for p, (lo, hi) in part))
    formed: list[FormedTable] = []
    calls = 0
    while tables := await mm.form_tables():  # full tables at once, before the wait
        formed += tables
        calls += 1
    assert no_table_left(await waiting(mm), ranges, full=True)
    mm = make_mm(match_wait=WAIT, queue_bots_after=0.2)
    await asyncio.sleep(0.25)  # every ticket has waited past both: the rest sit down
    while sum((await mm.queue_sizes()).values()):
        formed += await mm.form_tables()
        calls += 1
    seated = Counter(p for t in formed for p in humans(t))
    assert set(seated) == set(ranges) and max(seated.values()) == 1
    check_tables([t for t in formed if all(s.bot is None for s in t.seats)], ranges)
    assert calls <= math.ceil(len(formed) / mm.options.tables) + 3  # full slices, then the rest


async def test_one_call_forms_a_slice_of_tables_and_says_when_more_wait(make_mm):
    mm = make_mm()
    await queue(mm, [(4, 4)] * (4 * mm.options.tables + 8))  # a slice's worth and two tables more
    first = await mm.form_tables()
    assert len(first) == mm.options.tables and mm.full(first)
    second = await mm.form_tables()
    assert len(second) == 2 and not mm.full(second)
    assert await mm.form_tables() == []


async def test_a_formed_table_comes_back_until_started(make_mm):
    held = make_mm(match_wait=0, lease=LONG)
    await queue(held, [(2, 2)] * 2, tag="h")
    [first] = await held.form_tables()
    assert await held.form_tables() == []  # leased to whoever formed it
    mm = make_mm(match_wait=0, lease=0.1)
    await queue(mm, [(2, 2)] * 2)
    [table] = await mm.form_tables()
    again = await until(mm.form_tables)  # its dealer never said it was dealt
    assert again == [table] and table.key and first.key != table.key
    await mm.started(table.key)
    # A table formed after it comes back once its own lease is over: by then the
    # started one's is over too, and it would come back in the same call.
    await queue(mm, [(2, 2)] * 2, tag="q")
    [later] = await mm.form_tables()
    assert await until(mm.form_tables) == [later]


async def test_the_tables_of_one_round_are_said_dealt_in_one_call(make_mm):
    # Lobby.start_all tells the matchmaker once for every table it dealt.
    mm = make_mm(match_wait=0, lease=0.1)
    await queue(mm, [(2, 2)] * 6)
    tables = await mm.form_tables()
    assert len(tables) == 3
    assert sorted(await until(mm.form_tables), key=lambda t: t.key) == sorted(
        tables, key=lambda t: t.key
    )  # none said dealt: all come back
    await mm.started(tables[0].key, *(t.key for t in tables[1:]))
    await asyncio.sleep(0.2)  # past the lease
    await queue(mm, [(2, 2)] * 2, tag="q")  # a new pair: a round that forms it looks at all
    [fresh] = await until(mm.form_tables)
    assert fresh.key not in {t.key for t in tables}  # the dealt ones do not come back


async def test_a_stranger_gets_bad_code_for_a_table_as_for_no_table(make_mm):
    """Only join_table tells a stranger that a code is live (table_full), and that is
    a failed request the guess limit charges like bad_code (limits.CodeGuard)."""
    mm = make_mm()
    info = await mm.create_table("h", "Host", 2)
    await mm.enqueue("q", "Queued")
    for code in (info.code, "ZZZZZZZZ"):
        await expect("bad_code", mm.add_bot(code, "s", "greedy"))
        await expect("bad_code", mm.start_table(code, "s"))
        await expect("bad_code", mm.leave_table(code, "s"))
        await expect("already_queued", mm.join_table(code, "q", "Queued"))
    assert (await mm.table(info.code)).seats == [Seat("h", "Host", None), None]


# -- ratings ------------------------------------------------------------------------


async def test_young_tickets_are_seated_with_the_nearest_ratings(make_mm):
    mm = make_mm(match_wait=60, window=100, widen=0)
    skills = {"a": 1000, "b": 2000, "c": 1010, "d": 2005, "e": 1500}
    for player, skill in skills.items():  # queued in this order: a is the oldest
        await mm.enqueue(player, player.upper(), 2, 2, skill)
    tables = await mm.form_tables()
    assert sorted(sorted(humans(t)) for t in tables) == [["a", "c"], ["b", "d"]]
    assert await mm.queue_sizes() == {"2": 1, "3": 0, "4": 0, "5": 0, "6": 0}  # e waits


async def test_ratings_never_hold_a_ticket_past_match_wait(make_mm):
    young = make_mm(match_wait=LONG, window=100, widen=0)
    await young.enqueue("low", "LOW", 2, 3, 500)
    await young.enqueue("high", "HIGH", 2, 2, 2500)
    assert await young.form_tables() == []  # 2,000 points apart: not while young
    [table] = await until(make_mm(match_wait=0.3, window=100, widen=0).form_tables)
    assert sorted(humans(table)) == ["high", "low"]


async def test_the_window_widens_with_waiting(make_mm):
    fixed = make_mm(match_wait=LONG, window=100, widen=0)
    await fixed.enqueue("a", "A", 2, 2, 1000)
    await fixed.enqueue("b", "B", 2, 2, 1400)
    assert await fixed.form_tables() == []  # 400 points apart, windows of 100
    # 1,000 points more a second: both windows pass 400 points after 0.3 s of waiting.
    [table] = await until(make_mm(match_wait=LONG, window=100, widen=1000).form_tables)
    assert sorted(humans(table)) == ["a", "b"]


async def test_a_full_table_takes_the_nearest_ratings_and_leaves_the_rest(make_mm):
    mm = make_mm(match_wait=60, window=300, widen=0)
    skills = [1500, 1200, 1550, 1480, 1790, 1520]
    for i, skill in enumerate(skills):
        await mm.enqueue(f"p{i}", f"P{i}", 4, 4, skill)
    [table] = await mm.form_tables()
    assert sorted(humans(table)) == ["p0", "p2", "p3", "p5"]  # within 70 of p0


async def test_the_profile_fields_a_ticket_carries_come_with_its_table(make_mm):
    # Read as the player queues, they go to the game's start: dealing reads no profile.
    mm = make_mm(match_wait=0)
    profile = {"bot": "1", "mu": "24.689416369722096", "sigma": "8.0841278801687864", "games": "3"}
    await mm.enqueue("p_a", "A", 2, 2, profile=profile)
    await mm.enqueue("p_b", "B", 2, 2)  # none: its start reads it
    [table] = await mm.form_tables()
    assert table.known == {"p_a": profile}  # every digit kept: strings, as Redis holds them
    await mm.enqueue("p_c", "C", 2, 2, profile={})
    await mm.enqueue("p_d", "D", 2, 2)
    [table] = await mm.form_tables()
    assert table.known == {"p_c": {}}


async def test_a_table_whose_tickets_are_held_where_they_were_taken_is_told_together(
    make_mm, redis
):
    # Each seat's `match` then goes in one message (Store.publish_seats). A ticket that
    # an instance of the version before moved to itself (its `inst` changed, its `s`
    # kept) may be held where that message is not read: one message per seat then.
    mm = make_mm(match_wait=0, instance="i_new")
    await queue(mm, [(2, 2)] * 2)
    [table] = await mm.form_tables()
    assert table.together
    players = await queue(mm, [(2, 2)] * 2, tag="m")
    raw = await redis.hget(mm_key("tickets"), players[0])
    await redis.hset(mm_key("tickets"), players[0], raw.replace(b'"i_new"', b'"i_old"', 1))
    [table] = await mm.form_tables()
    assert not table.together
    moved = make_mm(match_wait=LONG, instance="i_other")  # this version moves it: marked
    await queue(mm, [(2, 2)] * 2, tag="o")
    with pytest.raises(MatchError):
        await moved.enqueue("o0", "O0", 2, 2)  # already queued: now held by i_other
    [table] = await mm.form_tables()
    assert table.together


# -- what a queue table costs in Redis ------------------------------------------------


async def calls(redis: Any) -> Counter[str]:
    """Commands run so far by kind (INFO commandstats; a script's own count one each)."""
    stats = await redis.info("commandstats")
    return Counter({k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()})


async def test_a_formed_table_leaves_the_queue_in_one_write_of_each_kind(make_mm, redis):
    if isinstance(redis, RedisCluster):
        pytest.skip("commandstats of one node")
    mm = make_mm(match_wait=0, instance="i_1")
    players = await queue(mm, [(4, 4)] * 4)
    before = await calls(redis)
    [table] = await mm.form_tables()
    ran = await calls(redis) - before
    assert sorted(humans(table)) == players and await waiting(mm) == []
    # One ZREM and HDEL for the four tickets, one HINCRBY per size and instance
    # (whose count, now 0, goes: the second HDEL).
    assert (ran["zrem"], ran["hdel"], ran["hincrby"], ran["time"]) == (1, 2, 2, 1)
    assert await redis.hgetall(mm_key("instances")) == {}
    assert (await mm.queue_sizes())["4"] == 0


async def test_a_ticket_reads_the_clock_once_and_its_reply_expires(make_mm, redis):
    if isinstance(redis, RedisCluster):
        pytest.skip("commandstats of one node")
    mm = make_mm(match_wait=LONG)
    before = await calls(redis)
    await mm.enqueue("alice", "Alice", 2, 2)
    ran = await calls(redis) - before
    assert ran["time"] == 1 and ran["get"] == 1 and ran["set"] == 1  # the reply kept
    assert ran["zadd"] == 1 and ran["zscore"] == 0  # queued before or not: ZADD NX says
    [done] = await redis.keys(mm_done_key("*"))
    assert 0 < await redis.pttl(done) <= 60_000  # forgotten a minute on, by Redis
    await mm.enqueue("bob", "Bob", 2, 2)
    assert await waiting(mm) == ["alice", "bob"]  # after the newest ticket, oldest first


async def test_a_queue_entry_without_a_ticket_does_not_keep_its_player_out(make_mm, redis):
    mm = make_mm(match_wait=LONG)
    await redis.zadd(mm_key("queue"), {"ghost": 1})  # a ticket lost, its entry not
    assert await mm.leave("ghost") is False  # nothing to leave: no write
    assert await waiting(mm) == ["ghost"]
    await mm.enqueue("ghost", "Ghost", 2, 2)  # healed, and queued anew
    assert await waiting(mm) == ["ghost"]
    assert (await mm.queue_sizes())["2"] == 1


async def test_a_closing_socket_leaves_the_queue_with_one_read_when_not_queued(make_mm, redis):
    mm = make_mm(match_wait=LONG)
    await mm.enqueue("ann", "Ann", 2, 2)
    single = not isinstance(redis, RedisCluster)  # commandstats of one node
    before = await calls(redis) if single else Counter()
    assert await mm.leave_if_queued("bob") is False  # never queued
    ran = await calls(redis) - before if single else Counter({"hexists": 1})
    assert ran["hexists"] == 1 and ran["evalsha"] == ran["eval"] == 0
    assert await mm.leave_if_queued("ann") is True
    assert await waiting(mm) == [] and (await mm.queue_sizes())["2"] == 0
