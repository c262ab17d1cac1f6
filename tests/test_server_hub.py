"""The hub's fan-out over a real Store and redis-server, to sockets that collect messages.

Stream reads are counted with INFO commandstats. Wake-ups are handed to the hub
by hand (`_on_game`) where a test decides their order; the player channel runs
over a real subscription.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
import redis.asyncio as aioredis

from moose import rules
from moose_server.matchmaking.waiting import Waiting
from moose_server.net.session import Sub
from moose_server.play.copies import Copies
from moose_server.play.deadlines import address, deadline_message
from moose_server.play.games import Games
from moose_server.play.hub import Hub
from moose_server.play.recent import LOGGED_GAMES, RECENT_EVENTS
from moose_server.play.seats import Seat
from moose_server.play.streams import heard_step
from moose_server.settings import Settings
from moose_server.storage import formats
from moose_server.storage.codec import pack, unpack
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import GAMES_CHANNEL, PLAYERS_CHANNEL, steps_channel, wake_channel
from moose_server.storage.store import Entry, Store, connect

from helpers import until
from helpers.hubs import (
    Peer,
    checked_tasks,
    instances,
    is_true,
    play_moves,
    started,
    stopped,
)
from helpers.relay import Relay

HERE = wake_channel("i_here")  # the wake-up channel of a hub with no subscription


class Committed:
    """A listener of `Games` that keeps the entries of every commit."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries

    def committed(self, game: str, entries: list[Entry]) -> None:
        self.entries.extend(entries)


class Fanouts:
    """A fan-out listener of the hub that keeps every wake-up it has handled."""

    def __init__(self) -> None:
        self.handled: list[tuple[str, int]] = []
        self.delivered_: list[tuple[str, int, bool]] = []  # our commits: (game, seq, waiting)

    def delivered(self, game: str, seq: int, started: float, waiting: bool) -> None:
        self.delivered_.append((game, seq, waiting))

    def fanned_out(self, game: str, seq: int) -> None:
        self.handled.append((game, seq))


class AskedLock(asyncio.Lock):
    """A socket's lock that counts who asked for it: the test holds it, and once
    the hub asks too, the hub's task has come as far as it can while it is held."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    async def acquire(self) -> bool:
        """Count the request, then wait for the lock."""
        self.asked += 1
        return await super().acquire()


def held_lock(peer: Peer, game: str) -> AskedLock:
    """Give `peer`'s subscription of `game` a lock that counts its requests."""
    lock = peer.subs[game].lock = AskedLock()
    return lock


@pytest.fixture
async def game(redis_url: str) -> AsyncIterator[tuple[Store, str, list[Entry]]]:
    """A 2-player game dealt and moved once through the real Games and Redis.

    Yields the store, the game id and the entries of its two commits (what the
    commit hands the hub); the Redis command counters start from zero after them.
    """
    client = connect(redis_url, 4)
    gw = await open_redis(redis_url, 8)
    store = Store(gw, 16)
    entries: list[Entry] = []
    games = Games(store, Settings(redis_url=redis_url), listeners=[Committed(entries)])
    dealt = await games.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=7)
    seat = rules.to_act(dealt.state)
    assert seat is not None
    await games.move(dealt.id, dealt.players[seat], rules.legal_moves(dealt.state)[0])
    assert [e.seq for e in entries] == [1, 2]
    await client.config_resetstat()
    yield store, dealt.id, entries
    await client.aclose()
    await gw.aclose()


async def xranges(store: Store) -> int:
    """XRANGE calls since the counters were reset."""
    stats = await store.redis.client.info("commandstats")
    return int(stats.get("cmdstat_xrange", {}).get("calls", 0))


async def test_a_wake_up_before_its_commit_reply_reads_nothing_once_the_reply_delivered(game):
    store, gid, entries = game
    fanouts = Fanouts()
    hub = Hub(store, HERE, fanout=fanouts)  # no subscription: wake-ups by hand
    fanned = fanouts.handled
    peers = [Peer("p_a", 0), Peer("p_b", 1)]
    for peer in peers:
        hub.join(peer, gid, peer.seat, 0)
    hub._on_game(gid, 2)  # our own wake-up, before the commit's reply was processed...
    hub.committed(gid, entries)  # ...which then sends the events at once
    await checked_tasks(hub)
    assert await xranges(store) == 0  # the wake-up's task found every socket served
    # ...and so did the follow, whose game version counts as a wake-up too.
    assert fanned == [(gid, 2), (gid, 2)]
    assert fanouts.delivered_ == [(gid, 1, False)]  # every socket had the commit at once
    for peer in peers:
        assert [m["seq"] for m in peer.got] == [1, 2]


async def test_a_wake_up_reads_the_stream_once_for_the_sockets_behind(game):
    store, gid, _ = game
    fanouts = Fanouts()
    hub = Hub(store, HERE, fanout=fanouts)
    fanned = fanouts.handled
    peers = [Peer("p_a", 0), Peer("p_b", 1)]
    for peer in peers:
        hub.join(peer, gid, peer.seat, 0)
    # Another instance's commits: the follow takes the game's version as their
    # wake-up, and only the stream has the events.
    await checked_tasks(hub)
    assert await xranges(store) == 1
    assert fanned == [(gid, 2)]
    for peer in peers:
        assert [m["seq"] for m in peer.got] == [1, 2]


async def test_a_late_socket_is_served_from_the_log_and_one_that_saw_another_event_is_resynced(
    game,
):
    store, gid, entries = game
    hub = Hub(store, HERE)
    hub.committed(gid, entries)  # dealt and moved here before the sockets joined
    late, rewound = Peer("p_a", 0), Peer("p_b", 1)
    hub.join(late, gid, 0, 0)
    hub.join(rewound, gid, 1, 1).time = entries[0].time - 5  # saw another event 1
    await hub.deliver(late, gid)
    assert await xranges(store) == 0  # from the log
    assert [(m["seq"], m["event"]["kind"]) for m in late.got] == [(1, "start"), (2, "move")]
    await hub.deliver(rewound, gid)  # the log holds event 1, of another time
    assert [(m["seq"], m["event"]["kind"]) for m in rewound.got] == [(2, "state")]
    assert rewound.subs[gid].seen == 2 and rewound.subs[gid].time == entries[1].time


async def test_a_wake_up_resyncs_a_socket_that_saw_another_event_at_its_seq(game):
    store, gid, entries = game
    hub = Hub(store, HERE)
    hub.committed(gid, entries)
    rewound = Peer("p_b", 1)
    hub.join(rewound, gid, 1, 1).time = entries[0].time - 5  # saw an event 1 Redis lost
    hub._on_game(gid, 2)  # a wake-up: the log holds events 1 and 2
    await asyncio.sleep(0)
    await asyncio.gather(*hub._tasks)
    assert [(m["seq"], m["event"]["kind"]) for m in rewound.got] == [(2, "state")]


async def test_a_commit_at_a_seq_a_socket_saw_resyncs_it_unless_it_saw_that_very_event(game):
    store, gid, entries = game
    hub = Hub(store, HERE)
    same, other = Peer("p_a", 0), Peer("p_b", 1)
    hub.join(same, gid, 0, 2).time = entries[1].time  # got seq 2 from a read already
    hub.join(other, gid, 1, 2).time = entries[1].time + 5  # saw a seq 2 Redis lost
    hub.committed(gid, entries)
    await asyncio.gather(*hub._tasks)
    assert same.got == []
    assert [(m["seq"], m["event"]["kind"]) for m in other.got] == [(2, "state")]


def seqs(peer: Peer, gid: str) -> list[int]:
    """The seqs of the events the socket got for a game, in the order it got them."""
    return [m["seq"] for m in peer.got if m["game"] == gid]


async def test_a_game_dealt_here_reaches_its_players_sockets_without_a_stream_read(redis_url):
    client = connect(redis_url, 4)
    gw = await open_redis(redis_url, 8)
    store = Store(gw, 16)
    hub = Hub(store, HERE)
    games = Games(store, Settings(redis_url=redis_url), listeners=[hub])
    try:
        # Seat 1 is a bot: its moves are committed here before the people join.
        dealt = await games.create([Seat("p_a", "a", None), Seat("p_b", "b", "greedy")], seed=7)
        await asyncio.gather(*games._tasks)
        await client.config_resetstat()
        peers = [Peer("p_a", 0), Peer(None, None)]  # type: ignore[arg-type]
        for peer in peers:  # as their `match` arrives
            hub.join(peer, dealt.id, peer.seat, 0)
            await hub.deliver(peer, dealt.id)
        version = (await games.load(dealt.id)).version
        assert await xranges(store) == 0
        for peer in peers:
            assert seqs(peer, dealt.id) == list(range(1, version + 1))
        hub._on_game(dealt.id, version)  # the last wake-up: every local socket has them all
        assert hub.recent.get(dealt.id).events == []
    finally:
        await games.close()
        await client.aclose()
        await gw.aclose()


async def test_our_commits_reach_a_socket_reading_a_gap_at_their_wake_up_without_a_read(game):
    store, gid, entries = game
    fanouts = Fanouts()
    hub = Hub(store, HERE, fanout=fanouts)
    fanned = fanouts.handled
    busy, free = Peer("p_a", 0), Peer("p_b", 1)
    for peer in (busy, free):
        hub.join(peer, gid, peer.seat, 0)
    lock = held_lock(busy, gid)
    await lock.acquire()  # as if it were reading the stream
    hub.committed(gid, entries)
    assert seqs(free, gid) == [1, 2] and seqs(busy, gid) == []
    assert fanouts.delivered_ == [(gid, 1, True)]  # `busy` gets it at the wake-up
    # No wake-up of our own commit comes: the hub makes one, and the follow's game
    # version is one too; `busy` waits for its lock in a task.
    await until(lambda: is_true(lock.asked >= 2))  # the hub's task waits for the lock
    assert seqs(busy, gid) == []
    lock.release()
    await checked_tasks(hub)
    assert seqs(busy, gid) == [1, 2] and seqs(free, gid) == [1, 2]
    assert fanned and set(fanned) == {(gid, 2)}
    assert await xranges(store) == 0


async def test_our_commits_reach_a_socket_reading_a_gap_though_no_wake_up_of_them_comes(game):
    # A hub with a channel of its own hears no wake-up of its own commits: it makes
    # one for a socket that could not take them at once.
    store, gid, _ = game
    fanouts = Fanouts()
    channel = wake_channel("i_here")
    hub = Hub(store, channel, fanout=fanouts)
    games = Games(store, Settings(), listeners=[hub], own_channel=channel)
    busy, free = Peer("p_a", 0), Peer("p_b", 1)
    for peer in (busy, free):
        hub.join(peer, gid, peer.seat, 2)
    await asyncio.gather(*hub._tasks)  # followed; nothing to send
    lock = held_lock(busy, gid)
    await lock.acquire()  # as if it were reading the stream
    await play_moves(games, gid, 1)
    assert seqs(free, gid) == [3] and seqs(busy, gid) == []
    await until(lambda: is_true(lock.asked == 2))  # the hub made a wake-up for `busy`
    assert seqs(busy, gid) == []
    lock.release()
    await until(lambda: is_true(seqs(busy, gid) == [3]))
    await asyncio.gather(*hub._tasks)
    assert fanouts.delivered_ == [(gid, 3, True)] and fanouts.handled[-1] == (gid, 3)
    await games.close()


async def test_sockets_behind_get_every_event_once_in_order_whatever_the_wake_ups(redis_url):
    client = connect(redis_url, 4)
    gw = await open_redis(redis_url, 8)
    store = Store(gw, 16)
    hub = Hub(store, HERE)
    ours, theirs = (
        Games(store, Settings(), listeners=[hub]),
        Games(store, Settings()),
    )  # two instances
    rng = random.Random(5)
    try:
        dealt = await ours.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=3)
        peers = [Peer("p_a", 0), Peer("p_b", 1), Peer("p_w", None)]
        hub.join(peers[0], dealt.id, 0, 0)
        for _ in range(40):
            game = await ours.load(dealt.id)
            if game.state.over:
                break
            if rng.random() < 0.2 and len(hub.games[dealt.id]) < 3:  # a late joiner
                peer = next(p for p in peers if dealt.id not in p.subs)
                hub.join(peer, dealt.id, peer.seat, rng.choice([0, game.version]))
            side = rng.choice([ours, theirs])
            move = rng.choice(rules.legal_moves(game.state))
            player = game.players[rules.to_act(game.state)]
            await side.move(dealt.id, player, move)
            version = (await ours.load(dealt.id)).version
            if rng.random() < 0.7:  # a wake-up may be lost, repeated or come late
                woken = rng.randint(1, version)
                hub._on_game(dealt.id, woken)
                await asyncio.gather(*hub._tasks)
                # Once a wake-up is handled, every socket has the events it told of.
                assert all(p.subs[dealt.id].seen >= woken for p in hub.games[dealt.id])
        version = (await ours.load(dealt.id)).version
        hub._on_game(dealt.id, version)
        await asyncio.gather(*hub._tasks)
        for peer in peers:
            sub = peer.subs.get(dealt.id)
            if sub is not None:
                got = seqs(peer, dealt.id)
                assert got == list(range(got[0], version + 1)) if got else sub.seen == version
    finally:
        await client.aclose()
        await gw.aclose()


class LateStore(Store):
    """A Store that reads the stream at once but, while `holding`, hands the answer
    over only when `gate` is set: a read whose answer is overtaken by a wake-up."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.holding = False
        self.read = asyncio.Event()
        self.gate = asyncio.Event()

    async def events(self, game: str, since: int = 0) -> list[Entry]:
        got = await super().events(game, since)
        if self.holding:
            self.read.set()
            await self.gate.wait()
        return got


async def test_a_wake_up_during_a_sockets_first_read_is_not_lost_when_the_read_is_older(
    redis_url,
):
    client = connect(redis_url, 4)
    gw = await open_redis(redis_url, 8)
    store = LateStore(gw, 16)
    hub = Hub(store, HERE)
    elsewhere = Games(store, Settings())  # another instance: its commits reach us by wake-up
    try:
        dealt = await elsewhere.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=3)
        peer = Peer("p_a", 0)
        hub.join(peer, dealt.id, 0, 0)  # its `match` came
        store.holding = True
        first = asyncio.ensure_future(hub.deliver(peer, dealt.id))
        await store.read.wait()  # it has read seq 1 and waits for the answer
        store.holding = False
        player = dealt.players[rules.to_act(dealt.state)]
        await elsewhere.move(dealt.id, player, rules.legal_moves(dealt.state)[0])
        store.gate.set()  # the read's answer (seq 1 only) comes in...
        hub._on_game(dealt.id, 2)  # ...just after the wake-up of seq 2
        await first
        await asyncio.gather(*hub._tasks)
        assert seqs(peer, dealt.id) == [1, 2]
    finally:
        await client.aclose()
        await gw.aclose()


async def test_a_wake_up_drops_the_games_copy_it_makes_old(redis_url):
    client = connect(redis_url, 4)
    gw = await open_redis(redis_url, 8)
    store = Store(gw, 16)
    copies = Copies(Settings())
    hub = Hub(store, HERE, woken=copies)
    games = Games(store, Settings(), copies=copies, listeners=[hub])
    try:
        dealt = await games.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=7)
        assert copies.get(dealt.id) is not None  # as written here, at seq 1

        def wake(seq: int) -> None:
            data = f"{dealt.id} {seq}".encode()
            hub.channels()[GAMES_CHANNEL](data)

        wake(1)  # our own commit's wake-up: the copy is the game as it is
        assert copies.get(dealt.id) is not None
        wake(2)  # another instance moved: the next move here reads the game again
        assert copies.get(dealt.id) is None
    finally:
        await games.close()
        await client.aclose()
        await gw.aclose()


async def test_a_heard_game_of_a_newer_format_is_no_copy(redis_url):
    # A newer release's commit heard mid-upgrade: no move here plays on what this
    # release would misread (the move reads the game instead, which refuses it).
    gw = await open_redis(redis_url, 8)
    store = Store(gw, 16)
    copies = Copies(Settings())
    games = Games(store, Settings(), copies=copies)
    try:
        dealt = await games.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=7)
        data = unpack(await gw.hget(store.keys_of(dealt.id).game, "data"))
        for fmt, kept in ((formats.WRITTEN, True), (formats.NEWEST + 1, False)):
            heard = f"{dealt.id}_{fmt}"
            copies.stepped(heard, 1, dealt.deadline, pack({**data, formats.FIELD: fmt}))
            assert (copies.get(heard) is not None) is kept, fmt
    finally:
        await games.close()
        await gw.aclose()


def test_a_match_on_the_player_channel_ends_the_players_wait_in_the_queue() -> None:
    waiting = Waiting(None, None, None)  # type: ignore[arg-type]  # no Redis: nothing to requeue
    hub = Hub(None, HERE, players=waiting)  # type: ignore[arg-type]
    waiting.add("p_a", "a", 2, 4, 25)
    waiting.add("p_b", "b", 2, 4, 25)
    hub.heard_player(pack(["p_a", {"type": "table", "code": "X"}, 1]))
    assert waiting.queued.keys() == {"p_a", "p_b"}
    hub.heard_player(pack(["p_a", {"type": "match", "game": "g_1", "seat": 0}, 2]))
    assert waiting.queued.keys() == {"p_b"}  # seated: Redis losing its ticket is no matter


async def test_a_tables_matches_in_one_message_reach_each_players_sockets(redis_url) -> None:
    # Store.publish_seats: one PUBLISH for every seat's `match` (a queue table whose
    # tickets were all taken by instances that read it); each goes to its player's
    # sockets here, and ends their wait in the queue, as one message each would.
    store = Store(await open_redis(redis_url, 8), 16)
    pubsub_client = connect(redis_url, 1, blocking=True)
    waiting = Waiting(None, None, None)  # type: ignore[arg-type]  # nothing to requeue
    hub = Hub(store, HERE, players=waiting)
    peers = [Peer("p_a", 0), Peer("p_b", 1), Peer("p_b", 1)]
    for peer in peers:
        hub.add_player(peer)  # type: ignore[arg-type]
    for player in ("p_a", "p_b", "p_c"):
        waiting.add(player, player, 2, 4, 25)
    running, ready = started(hub, pubsub_client)
    try:
        await until(lambda: is_true(ready.is_set()))
        before = await publishes(store.redis.client)
        players = ["p_a", "p_b", "p_c"]
        matches = [(p, {"type": "match", "game": "g_1", "seat": i}) for i, p in enumerate(players)]
        await store.publish_seats("g_1", matches)
        await until(lambda: is_true(all(peer.said for peer in peers)))
        assert await publishes(store.redis.client) - before == 1
        assert [[m["seat"] for m in peer.said] for peer in peers] == [[0], [1], [1]]
        assert waiting.queued == {}  # every seat's wait ends, p_c's too (no socket here)
    finally:
        await stopped(running, hub)
        await pubsub_client.aclose()
        await store.redis.aclose()


def test_a_message_to_a_game_reaches_its_sockets_that_are_at_its_seq_only() -> None:
    hub = Hub(None, HERE)  # type: ignore[arg-type]  # no Redis: the sockets are set by hand
    seat, watcher, behind, other = Peer("p_a", 0), Peer("p_w", None), Peer("p_b", 1), Peer("p_a", 0)
    for peer, game, seen in (
        (seat, "g_1", 7),
        (watcher, "g_1", 7),
        (behind, "g_1", 6),
        (other, "g_2", 7),
    ):
        peer.subs[game] = Sub(peer.seat, seen)
        hub.games.setdefault(game, set()).add(peer)
    for peer in (seat, other):
        hub.add_player(peer)
    told = deadline_message("g_1", 7, 1, 45_000, 30_000, "spared")
    hub.heard_player(pack([address("g_1"), told, 1]))
    assert seat.got == watcher.got == [told]  # a seat and a spectator at seq 7
    assert behind.got == other.got == []  # behind the game; the player's socket of another game
    assert seat.said == other.said == []  # not a message to the player


def _entries(count: int, start: int = 1) -> list[Entry]:
    state = rules.new_game(2, seed=1)
    snapshot = {**state.to_dict(), "auto": False}
    return [Entry(start + i, {"kind": "move"}, snapshot, 0, 1, state) for i in range(count)]


def test_the_logs_are_bounded_in_games_and_in_events_per_game() -> None:
    hub = Hub(None, HERE)  # type: ignore[arg-type]
    for k in range(LOGGED_GAMES + 50):
        hub.committed(f"g_{k}", _entries(3))
    assert len(hub.recent) == LOGGED_GAMES
    assert hub.recent.get("g_0") is None and hub.recent.get(f"g_{LOGGED_GAMES + 49}") is not None
    for start in range(1, 4 * RECENT_EVENTS, 3):  # a game dealt here, no socket joined yet
        hub.committed("g_long", _entries(3, start))
    held = hub.recent.get("g_long")
    assert len(held.events) == RECENT_EVENTS
    first = held.latest - RECENT_EVENTS + 1
    assert [p.seq for p in held.events] == list(range(first, held.latest + 1))
    assert held.since(0) is None  # its first events are gone: a socket would read the stream


async def test_a_game_log_is_dropped_once_no_local_socket_can_use_it(redis_url) -> None:
    hub = Hub(Store(await open_redis(redis_url, 2), 16), HERE)  # the games are in no Redis
    hub.committed("g_x", _entries(2))
    hub._on_game("g_x", 2)  # its own wake-up: kept for the players to come
    assert [p.seq for p in hub.recent.get("g_x").events] == [1, 2]
    hub._on_game("g_x", 4)  # another instance moved on: events we do not hold
    assert hub.recent.get("g_x") is None
    peer = Peer("p_a", 0)
    hub.committed("g_y", _entries(2))
    hub.join(peer, "g_y", 0, 2)
    hub.leave(peer, "g_y")
    assert hub.recent.get("g_y") is None
    await checked_tasks(hub)  # the follow: no such game
    await hub.store.redis.aclose()


@pytest.fixture
async def resending_store(redis_factory) -> AsyncIterator[tuple[Store, Relay, str]]:
    """A Store whose Redis connections pass a relay that can cut a reply."""
    server = redis_factory(appendonly=False)
    async with Relay(server.port) as relay:
        client = connect(f"redis://127.0.0.1:{relay.port}/0", 4)
        gw = await open_redis(f"redis://127.0.0.1:{relay.port}/0", 8)
        yield Store(gw, 16), relay, server.url
        await client.aclose()
        await gw.aclose()


async def publishes(redis: aioredis.Redis) -> int:
    """PUBLISH commands Redis has run so far."""
    stats = await redis.info("commandstats")
    return int(stats.get("cmdstat_publish", {}).get("calls", 0))


async def test_a_player_message_published_twice_by_a_resend_reaches_each_socket_once(
    resending_store,
):
    store, relay, url = resending_store
    pubsub_client = connect(url, 1, blocking=True)
    hub = Hub(store, HERE)
    peer = Peer("p_a", 0)
    hub.add_player(peer)
    running, ready = started(hub, pubsub_client)
    admin = aioredis.Redis.from_url(url)
    try:
        await until(lambda: is_true(ready.is_set()))
        await store.ping()  # connected
        before = await publishes(admin)
        # Redis runs the PUBLISH but its reply is lost with the connection:
        # redis-py sends the batch again on a new one, and Redis runs it twice.
        relay.cut_next_reply()
        await store.publish_players(
            [("p_a", {"type": "match", "game": "g_1", "seat": 0, "players": 2})]
        )
        assert await publishes(admin) - before == 2
        await store.publish_player("p_a", {"type": "table", "code": "X"})
        await admin.publish(PLAYERS_CHANNEL, pack(["p_a", {"type": "old"}]))  # no id
        await until(lambda: is_true(any(m["type"] == "old" for m in peer.said)))
        assert [m["type"] for m in peer.said] == ["match", "table", "old"]
    finally:
        await stopped(running, hub)
        await admin.aclose()
        await pubsub_client.aclose()


async def test_a_subscription_that_stops_answering_is_made_anew(redis_factory):
    # A half-open connection (or a proxy that hangs) gives no error: redis-py's
    # read would wait on it forever, and this instance would miss every wake-up.
    server = redis_factory(appendonly=False)
    async with Relay(server.port) as relay:
        pubsub_client = connect(f"redis://127.0.0.1:{relay.port}/0", 1, blocking=True)
        hub = Hub(Store(await open_redis(server.url, 2), 16), HERE)
        peer = Peer("p_a", 0)
        hub.add_player(peer)
        running, ready = started(hub, pubsub_client, silent=0.2)
        admin = aioredis.Redis.from_url(server.url)
        try:
            await until(lambda: is_true(ready.is_set()))
            assert relay.accepted == 1
            relay.freeze()  # the PING after 0.2 s of silence gets no answer
            await until(lambda: is_true(relay.accepted == 2))

            # The new subscription hears what is published from now on.
            async def heard() -> bool:
                await admin.publish(PLAYERS_CHANNEL, pack(["p_a", {"type": "hello again"}]))
                return any(m["type"] == "hello again" for m in peer.said)

            await until(heard, every=0.1)
        finally:
            await stopped(running, hub)
            await admin.aclose()
            await pubsub_client.aclose()
            await hub.store.redis.aclose()


async def test_our_own_commits_are_never_read_back_from_the_stream(redis_url):
    # A commit's wake-up comes on the subscription while its reply is still on its
    # way through the Redis batch (several loop turns): the hub waits for the
    # commit to settle, and the reply delivers the events. Before, it read the
    # stream at about every move (a full-speed load test: 1.1 XRANGE per move).
    client = connect(redis_url, 4)
    gw = await open_redis(redis_url, 8)
    pubsub_client = connect(redis_url, 1, blocking=True)
    store = Store(gw, 16)
    copies = Copies(Settings())
    fanouts = Fanouts()
    hub = Hub(store, HERE, woken=copies, fanout=fanouts)
    games = Games(store, Settings(), copies=copies, listeners=[hub])
    running, ready = started(hub, pubsub_client)
    try:
        await until(lambda: is_true(ready.is_set()))
        dealt = await games.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=3)
        peers = [Peer("p_a", 0), Peer("p_b", 1)]
        for peer in peers:
            hub.join(peer, dealt.id, peer.seat, 0)
        await client.config_resetstat()
        game = dealt
        for _ in range(12):
            if game.state.over:
                break
            player = game.players[rules.to_act(game.state)]
            await games.move(dealt.id, player, rules.legal_moves(game.state)[0])
            game = await games.load(dealt.id)
        await until(lambda: is_true(all(p.subs[dealt.id].seen == game.version for p in peers)))
        # The last commit's wake-up handled (they come in order), and what it started.
        await until(lambda: is_true((dealt.id, game.version) in fanouts.handled))
        await until(lambda: is_true(not hub._tasks))
        assert await xranges(store) == 0
    finally:
        await stopped(running, hub)
        await games.close()
        await pubsub_client.aclose()
        await client.aclose()
        await gw.aclose()


async def checked(hub: Hub) -> None:
    """What the hub does after a lost subscription, to its end."""
    hub._check_all()
    while hub._tasks:
        await asyncio.gather(*list(hub._tasks))


async def test_sockets_whose_game_went_back_get_a_state_with_the_deadline_held(game):
    # Redis lost the event at seq 3 that both sockets saw. Before, their `state` kept
    # the deadline Redis had, which may already be due: a timeout raced the seat's
    # answer to it.
    store, gid, _ = game
    hub = Hub(store, HERE, outage_grace=600)
    peers = [Peer("p_a", 0), Peer("p_b", 1)]
    for peer in peers:
        hub.join(peer, gid, peer.seat, 3).time = 12345
    before = await store.now_ms()
    await checked(hub)
    loaded = await store.load(gid)
    assert loaded.deadline >= before + 600_000  # the game's turn is 30 s
    assert await store.redis.zscore(store.keys_of(gid).deadlines, gid) == loaded.deadline
    for peer in peers:
        ((state,),) = [[m for m in peer.got if m["event"]["kind"] == "state"]]
        assert state["seq"] == 2
        assert state["deadline"] == (loaded.deadline if state["legal"] else None)
    assert sum(bool(p.got[-1]["legal"]) for p in peers) == 1


async def test_after_a_lost_subscription_only_games_that_went_back_are_held(game, redis_url):
    store, gid, entries = game
    hub = Hub(store, HERE, outage_grace=600)
    kept, behind = Peer("p_a", 0), Peer("p_b", 1)
    hub.join(kept, gid, 0, 2).time = entries[1].time  # saw seq 2 as Redis holds it
    hub.join(behind, gid, 1, 1).time = entries[0].time  # missed seq 2
    deadline = (await store.load(gid)).deadline
    await checked(hub)
    assert kept.got == [] and [m["seq"] for m in behind.got] == [2]
    assert (await store.load(gid)).deadline == deadline


async def test_a_wake_up_while_a_sockets_state_is_read_reaches_it_after_the_state(game, redis_url):
    # The state's stream read was made just before the next commit; the commit's
    # wake-up came while the socket's `seen` was still the seq Redis lost. Before,
    # it was taken as seen: the seat never heard of the move and timed out.
    store, gid, entries = game
    hub = Hub(store, HERE)
    peer = Peer("p_a", 0)
    sub = hub.join(peer, gid, 0, 5)  # saw seq 5, which Redis lost
    games = Games(store, Settings(redis_url=redis_url))
    loaded = await games.load(gid)
    async with sub.lock:  # the `state` is being read
        sub.stating = True
        mover = loaded.players[rules.to_act(loaded.state)]
        await games.move(gid, mover, rules.legal_moves(loaded.state)[0])  # seq 3
        hub._on_game(gid, 3)
        sub.seen, sub.time, sub.stating = 2, entries[1].time, False  # the state (seq 2) sent
    await checked_tasks(hub)
    assert [m["seq"] for m in peer.got] == [3]
    await games.close()


# -- wake-ups go to the instances that follow a game (lua/follow.lua) ----------------


MARKER_CHANNEL = GAMES_CHANNEL + b":~marker"  # no instance hears it; `Wakeups` does


class Wakeups:
    """Every game wake-up published, on any channel, as a raw subscriber hears them;
    a step published to the instance of wake-up channel C (on its sharded channels,
    `steps_of`) is heard as C's wake-up at the step's last seq."""

    def __init__(self, redis_url: str, steps_of: Sequence[bytes] = ()) -> None:
        self.client = aioredis.Redis.from_url(redis_url)
        self.heard: list[tuple[bytes, str]] = []  # (channel, "<game> <seq>")
        self._task: asyncio.Task[None] | None = None
        self._steps = {steps_channel(b, c): c for c in steps_of for b in range(16)}

    async def __aenter__(self) -> Wakeups:
        pubsub = self.client.pubsub()
        await pubsub.psubscribe(GAMES_CHANNEL + b"*")
        if self._steps:
            await pubsub.ssubscribe(*self._steps)

        async def listen() -> None:
            async for message in pubsub.listen():
                if message["type"] == "pmessage":
                    self.heard.append((message["channel"], message["data"].decode()))
                elif message["type"] == "smessage":
                    step = heard_step(message["data"])
                    wake = f"{step.game} {step.entries[-1].seq}"
                    self.heard.append((self._steps[message["channel"]], wake))

        self._task = asyncio.ensure_future(listen())
        self._pubsub = pubsub
        return self

    async def caught_up(self) -> None:
        """Wait until every wake-up published before this call is heard.

        A marker published now reaches this subscriber after them (Redis sends one
        connection's messages in the order they were published): once it is heard,
        no wake-up of an earlier commit is still on its way.
        """
        marker = f"caught-up {len(self.heard)}"
        await self.client.publish(MARKER_CHANNEL, marker)
        await until(lambda: is_true((MARKER_CHANNEL, marker) in self.heard))
        self.heard.remove((MARKER_CHANNEL, marker))

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        await self._pubsub.aclose()
        await self.client.aclose()


async def test_a_game_whose_sockets_are_all_here_publishes_no_wake_up_of_its_moves(redis_url):
    # Before, every commit published to one channel every instance heard: each
    # instance handled every move of the deployment, its own included (7 % of the
    # server's CPU at full speed). Now a wake-up goes to the instances
    # that follow the game, and not to the one that committed it.
    async with instances(redis_url, "i_here") as here, Wakeups(redis_url) as heard:
        [hub], games = here.hubs, here.games
        dealt = await games.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=3)
        peers = [Peer("p_a", 0), Peer("p_b", 1)]
        for peer in peers:
            hub.join(peer, dealt.id, peer.seat, 0)
        await until(lambda: is_true(all(p.subs[dealt.id].seen == 1 for p in peers)))
        await until(lambda: is_true(not hub._tasks))  # followed
        assert await here.followers(dealt.id) == set(here.channels)
        await play_moves(games, dealt.id, 10)
        game = await games.load(dealt.id)
        await until(lambda: is_true(all(p.subs[dealt.id].seen == game.version for p in peers)))
        await heard.caught_up()
        # The deal's wake-up went to every instance (nobody followed the game yet).
        assert heard.heard == [(GAMES_CHANNEL, f"{dealt.id} 1")]
    for peer in peers:
        assert [m["seq"] for m in peer.got] == list(range(1, game.version + 1))


async def test_a_game_dealt_for_a_socket_here_is_followed_by_its_first_commit(redis_url):
    # With the hub as Games' follower, a game dealt for a player with a socket here
    # lists this instance's channel in its first commit: no follow.lua call when the
    # socket joins, and no wake-up of the deal to every instance. A game none of whose
    # players has a socket here lists nobody, and its deal wakes every instance.
    async with instances(redis_url, "i_here") as here, Wakeups(redis_url) as heard:
        [hub], [channel] = here.hubs, here.channels
        games = Games(here.store, Settings(), listeners=[hub], own_channel=channel, follower=hub)
        try:
            peers = [Peer("p_a", 0), Peer("p_b", 1)]
            for peer in peers:
                hub.add_player(peer)  # type: ignore[arg-type]
            await here.client.config_resetstat()
            dealt = await games.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=3)
            for peer in peers:  # as their `match` arrives
                hub.join(peer, dealt.id, peer.seat, 0)  # type: ignore[arg-type]
                await hub.deliver(peer, dealt.id)  # type: ignore[arg-type]
            assert dealt.id in hub._followed and not hub._following  # no follow made
            stats = await here.client.info("commandstats")
            assert stats["cmdstat_hmget"]["calls"] == 1  # the commit's; no follow.lua's
            assert await here.followers(dealt.id) == {channel}
            await play_moves(games, dealt.id, 4)
            game = await games.load(dealt.id)
            await until(lambda: is_true(all(p.subs[dealt.id].seen == game.version for p in peers)))
            elsewhere = await games.create([Seat("p_x", "x", None), Seat("p_y", "y", None)], seed=3)
            assert await here.followers(elsewhere.id) == set()
            await heard.caught_up()
            assert heard.heard == [(GAMES_CHANNEL, f"{elsewhere.id} 1")]
        finally:
            await games.close()
    for peer in peers:
        assert [m["seq"] for m in peer.got] == list(range(1, game.version + 1))


async def test_an_instance_that_follows_a_game_late_gets_what_came_before_and_after(redis_url):
    # Instance A plays the game; instance B's socket starts following it at seq 1
    # while the game is further on, and B's channel is listed only once its follow
    # is done: B takes the version then as a wake-up, and hears A's next commits.
    steps = [wake_channel("i_a", steps=True), wake_channel("i_b", steps=True)]
    async with instances(redis_url, "i_a", "i_b") as both, Wakeups(redis_url, steps) as heard:
        (hub_a, hub_b), (a, b), games = both.hubs, both.channels, both.games
        dealt = await games.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=3)
        here = Peer("p_a", 0)
        hub_a.join(here, dealt.id, 0, 1)
        await until(lambda: is_true(not hub_a._tasks))
        await play_moves(games, dealt.id, 3)
        watcher = Peer("p_w", None)
        hub_b.join(watcher, dealt.id, None, 1)  # B's socket saw seq 1 only
        then = (await games.load(dealt.id)).version
        # No wake-up comes for seqs 2..then: B's follow itself catches the socket up.
        await until(lambda: is_true(watcher.subs[dealt.id].seen == then))
        assert await both.client.hget(both.store.keys_of(dealt.id).game, "w") == a + b" " + b
        await play_moves(games, dealt.id, 3)
        game = await games.load(dealt.id)
        await until(lambda: is_true(watcher.subs[dealt.id].seen == game.version))
        await heard.caught_up()
        # A's moves after B followed woke B alone; none woke A, none went to all.
        after = [c for c, w in heard.heard if int(w.split()[1]) > 4]
        assert after and set(after) == {b}
    assert [m["seq"] for m in watcher.got] == list(range(2, game.version + 1))
    assert [m["seq"] for m in here.got] == list(range(2, game.version + 1))


async def test_a_game_followed_before_it_is_dealt_is_followed_at_its_first_wake_up(redis_url):
    # A fair deal's seats follow the game from seq 0 while it waits for their seeds
    # (deals/deals.py): there is nothing to follow yet. Its deal wakes every instance
    # (nobody follows it), and B follows it then; A's later moves wake B.
    async with instances(redis_url, "i_a", "i_b") as both:
        (hub_a, hub_b), games = both.hubs, both.games
        waiting = Peer("p_b", 1)
        hub_b.join(waiting, "g_fair", 1, 0)  # before the deal
        await until(lambda: is_true(not hub_b._tasks))
        seats = [Seat("p_a", "a", None), Seat("p_b", "b", None)]
        dealt = await games.create(seats, seed=3, game_id="g_fair")
        hub_a.join(Peer("p_a", 0), dealt.id, 0, 1)
        await until(lambda: is_true(not hub_a._tasks and not hub_b._tasks))
        assert await both.followers(dealt.id) == set(both.channels)
        await play_moves(games, dealt.id, 4)
        game = await games.load(dealt.id)
        await until(lambda: is_true(waiting.subs[dealt.id].seen == game.version))
    assert [m["seq"] for m in waiting.got] == list(range(1, game.version + 1))


async def test_a_socket_that_joins_from_an_older_read_gets_our_commits_since(game):
    # A socket resumed on reconnect joins at the version its handler read; a commit
    # of ours since then went to the sockets already there, and no wake-up of it
    # comes to a hub with its own channel: the join makes one.
    store, gid, _ = game
    channel = wake_channel("i_here")
    hub = Hub(store, channel)
    games = Games(store, Settings(), listeners=[hub], own_channel=channel)
    first = Peer("p_a", 0)
    hub.join(first, gid, 0, 2)
    await asyncio.gather(*hub._tasks)  # followed
    read = await games.load(gid)  # the resumed socket's handler reads the game...
    await play_moves(games, gid, 1)  # ...we commit seq 3...
    assert seqs(first, gid) == [3]
    second = Peer("p_b", 1)
    hub.join(second, gid, 1, read.version)  # ...and then it joins, at seq 2
    await until(lambda: is_true(seqs(second, gid) == [3]))
    await games.close()


async def test_a_list_of_followers_redis_lost_is_made_again_after_a_lost_subscription(game):
    store, gid, _ = game
    channel = wake_channel("i_here")
    hub = Hub(store, channel)  # no subscription
    peer = Peer("p_a", 0)
    hub.join(peer, gid, 0, 2)
    await asyncio.gather(*hub._tasks)
    key = store.keys_of(gid).game
    assert await store.redis.hget(key, "w") == channel
    await store.redis.hdel(key, "w")  # Redis came back without its last writes
    await checked(hub)
    assert await store.redis.hget(key, "w") == channel


async def test_past_eight_followers_a_games_wake_ups_go_to_every_instance(game):
    store, gid, _ = game
    key = store.keys_of(gid).game
    for i in range(8):
        assert await store.follow([gid], wake_channel(f"i_{i}")) == [2]
    assert await store.follow([gid], wake_channel("i_0")) == [2]  # listed once
    assert len((await store.redis.hget(key, "w")).split()) == 8
    assert await store.follow([gid], wake_channel("i_8")) == [2]
    assert await store.redis.hget(key, "w") == GAMES_CHANNEL
    assert await store.follow(["g_none"], wake_channel("i_0")) == [-1]
    assert not await store.redis.exists(store.keys_of("g_none").game)


async def test_a_wake_up_whose_read_fails_while_redis_is_down_is_read_again_once_it_is_back(
    redis_factory,
):
    # Redis dies just after another instance's commit woke us; it comes back a
    # moment later (as a Cluster primary's replica takes over): the seats get the
    # event then, not at the game's next wake-up.
    server = redis_factory(appendonly=True, appendfsync="always")
    gw = await open_redis(server.url, 8)
    store = Store(gw, 16)
    games = Games(store, Settings(redis_url=server.url))
    hub = Hub(store, HERE)
    try:
        dealt = await games.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=7)
        peers = [Peer("p_a", 0), Peer("p_b", 1)]
        for peer in peers:
            hub.join(peer, dealt.id, peer.seat, 0)
        await checked_tasks(hub)
        await play_moves(games, dealt.id, 1)  # another instance's: no wake-up heard yet
        server.kill()
        hub._on_game(dealt.id, 2)  # its wake-up, heard as Redis died
        await asyncio.sleep(0.3)  # a read or two fail meanwhile
        assert [m["seq"] for m in peers[0].got] == [1]
        await asyncio.to_thread(server.start)
        await checked_tasks(hub)
        for peer in peers:
            assert [m["seq"] for m in peer.got] == [1, 2]
    finally:
        await hub.close()
        await games.close()
        await gw.aclose()
