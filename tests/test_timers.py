"""The deadline loop: a due deadline fires once, whoever claims it; a dead claimer only delays."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import aiohttp
import msgpack
import pytest
import redis
import redis.asyncio

from moose import rules
from moose_server.play.game import Game
from moose_server.play.games import Games
from moose_server.play.seats import Seat
from moose_server.play.timers import Timers
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import PLAYERS_CHANNEL, GameKeys, deadlines_key, polled_key
from moose_server.storage.store import Store, connect

from helpers import table_game

SEATS = [Seat("p_a", "ann", None), Seat("p_b", "bob", None)]
Message = dict[str, Any]


@pytest.fixture
async def parts(redis_url: str) -> Any:
    """(store, games that deal with an instant deadline, two timers with hour-long turns)."""
    client = connect(redis_url, 8)
    gw = await open_redis(redis_url, 8)
    store = Store(gw, 16)
    quick = Games(store, Settings(redis_url=redis_url, turn_time=0.001))
    slow = Settings(redis_url=redis_url, turn_time=3600, lease=60)
    timers = [Timers(store, Games(store, slow), slow) for _ in range(2)]
    yield store, quick, timers
    for part in (quick, *(t.games for t in timers)):
        await part.close()
    await client.aclose()
    await gw.aclose()


async def wait_version(store: Store, game: str, above: int, poll: Any) -> int:
    """Run `poll()` until the game's version is above `above`; the new version."""
    async with asyncio.timeout(20):
        while (version := (await store.load(game)).version) <= above:
            await poll()
    return version


async def overdue(store: Store, quick: Games) -> tuple[Game, int]:
    """A new game of SEATS (due in a millisecond) once its deadline has passed, and
    Redis' time then (a fast Redis answers sooner than a millisecond)."""
    game = await quick.create(SEATS)
    deadline = (await store.load(game.id)).deadline
    while (now := await store.now_ms()) <= deadline:
        await asyncio.sleep(0.001)
    return game, now


async def test_a_due_deadline_fires_once_with_two_instances_polling(parts):
    store, quick, (t1, t2) = parts
    game = await quick.create(SEATS)

    async def both() -> None:
        await asyncio.gather(t1.tick(), t2.tick())

    assert await wait_version(store, game.id, 1, both) == 2
    for _ in range(5):
        await both()
    loaded = await store.load(game.id)
    assert loaded.version == 2 and len(loaded.data["moves"]) == 1
    event = (await store.events(game.id, 1))[0].event
    assert event["auto"] == "timeout" and event["seat"] == game.state.turn


async def test_a_claimer_that_dies_only_delays_the_timeout(parts):
    store, quick, (t1, _) = parts
    game = await quick.create(SEATS)
    async with asyncio.timeout(20):
        while not await store.claim(50):  # claimed by an instance that then dies
            pass
    assert await wait_version(store, game.id, 1, t1.tick) == 2


async def test_a_deadline_claimed_before_a_move_does_not_fire(parts):
    store, quick, (t1, _) = parts
    game = await quick.create(SEATS)
    async with asyncio.timeout(20):
        while not (claimed := await store.claim(60_000)):
            pass
    owner = SEATS[game.state.turn].player
    await t1.games.move(game.id, owner, rules.legal_moves(game.state)[0])
    await t1.games.timeout(game.id, claimed[0][1])  # the stale claim is applied late
    loaded = await store.load(game.id)
    assert loaded.version == 2 and loaded.data["misses"] == [0, 0]


async def test_after_a_gap_in_the_polls_due_deadlines_move_to_a_grace_and_fire_later(parts):
    store, quick, _ = parts
    game = await quick.create(SEATS)  # due at once
    bucket = store.bucket(game.id)
    await store.claim(60_000, 1000, 5000)  # stamps the bucket's poll key (and claims it)
    # As if no instance had claimed this bucket for 30 s (Redis down, nobody running).
    now = await store.now_ms()
    await store.redis.zadd(deadlines_key(bucket), {game.id: now - 10})
    await store.redis.set(polled_key(bucket), now - 30_000)
    assert await store.claim(60_000, 1000, 5000) == []  # before: claimed at once
    moved = await store.redis.zscore(deadlines_key(bucket), game.id)
    assert now + 5000 <= moved < now + 6000
    assert await store.claim(60_000, 1000, 5000) == []  # not due until the grace is over


class Watched(Games):
    """Real games that count the timeouts being played at the same moment."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.now = self.most = 0

    async def timeout(self, game_id: str, now: int, spare: Any = None) -> None:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await super().timeout(game_id, now, spare)
        finally:
            self.now -= 1


async def test_the_timeouts_of_one_poll_are_played_side_by_side(parts):
    # One after another, a poll that claimed many on a busy instance took so long
    # that the next one looked like an outage (every deadline moved a grace later).
    store, quick, _ = parts
    games = [await quick.create(SEATS) for _ in range(6)]
    slow = Settings(redis_url=quick.settings.redis_url, turn_time=3600)
    watched = Watched(store, slow)
    timers = Timers(store, watched, slow)
    try:
        due = 0
        async with asyncio.timeout(20):
            while due < len(games):
                due += await timers.tick()
        for game in games:
            assert (await store.load(game.id)).version == 2
        assert due == len(games) and watched.most > 1
    finally:
        await watched.close()


class Held(Games):
    """Real games whose timeouts wait until the test lets them go on."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.started: list[str] = []
        self.go = asyncio.Event()

    async def timeout(self, game_id: str, now: int, spare: Any = None) -> None:
        self.started.append(game_id)
        await self.go.wait()
        await super().timeout(game_id, now, spare)


async def test_the_polls_go_on_while_the_timeouts_they_claimed_are_played(parts):
    # A poll that waited for its timeouts came late on a busy instance, and a gap
    # in the polls is taken for an outage.
    store, quick, _ = parts
    slow = Settings(redis_url=quick.settings.redis_url, turn_time=3600, poll_interval=0.02)
    held = Held(store, slow)
    timers = Timers(store, held, slow)
    task = asyncio.create_task(timers.run())
    try:
        first = await quick.create(SEATS)
        async with asyncio.timeout(20):
            while first.id not in held.started:
                await asyncio.sleep(0.01)
            second = await quick.create(SEATS)  # due while the first is still being played
            while second.id not in held.started:
                await asyncio.sleep(0.01)
        held.go.set()
        async with asyncio.timeout(20):
            for game in (first, second):
                while (await store.load(game.id)).version < 2:
                    await asyncio.sleep(0.01)
        timers.stop()
        async with asyncio.timeout(20):
            await task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await held.close()


async def test_a_gap_left_by_a_slow_instance_is_no_outage(parts):
    # Its claims went through, only late (its loop busy): before, the gap was taken
    # for an outage and every deadline moved a grace later.
    store, quick, (t1, _) = parts
    await t1.tick()  # claims go through from the start
    game, now = await overdue(store, quick)  # due in a millisecond, and past
    bucket = store.bucket(game.id)
    await store.redis.set(polled_key(bucket), now - 30_000)  # no claim for 30 s...
    store._claimed[bucket] = now - 30_000  # ...this instance's own last one among them
    assert await t1.tick() == 1  # played, not moved
    assert (await store.load(game.id)).version == 2


async def test_a_poll_stamp_older_than_our_last_claim_holds_every_deadline_a_grace(parts):
    # Redis came back without its last writes: the stamp of the bucket's
    # last poll went back with them, however short the gap. Before, a deadline of a
    # game that went back fired at once, before its players were told.
    store, quick, (t1, _) = parts
    await t1.tick()  # claims go through from the start
    game, now = await overdue(store, quick)  # due in a millisecond, and past
    bucket = store.bucket(game.id)
    await store.redis.set(polled_key(bucket), now - 200)  # our last claim's stamp, lost
    assert await t1.tick() == 0  # held, not played
    held = await store.redis.zscore(deadlines_key(bucket), game.id)
    grace = t1.settings.outage_grace * 1000
    assert now + grace - 1000 < held < now + grace + 1000  # the grace
    assert (await store.load(game.id)).version == 1
    assert await t1.tick() == 0  # no outage again: the stamp is ours now


async def test_a_deadline_an_outage_moved_is_told_to_every_socket_of_its_game(parts, redis_url):
    # The same `deadline` message as a spared turn's (deadlines.py), reason "outage":
    # before, the countdowns showed a deadline the server no longer kept.
    store, quick, (t1, _) = parts
    await t1.tick()  # claims go through from the start
    game, now = await overdue(store, quick)  # due in a millisecond, and past
    await store.redis.set(polled_key(store.bucket(game.id)), now - 30_000)  # no claim for 30 s
    listener = redis.asyncio.Redis.from_url(redis_url)
    async with listener.pubsub() as pubsub:
        await pubsub.subscribe(PLAYERS_CHANNEL)
        assert await t1.tick() == 0  # moved, not played
        async with asyncio.timeout(10):
            while (heard := await pubsub.get_message(True, timeout=1)) is None:
                pass
    await listener.aclose()
    address, message, _ = msgpack.unpackb(heard["data"])
    loaded = await store.load(game.id)
    assert loaded.version == 1 and loaded.deadline > now
    assert address == f"game:{game.id}"
    assert message == {
        "type": "deadline",
        "game": game.id,
        "seq": 1,
        "to_act": rules.to_act(game.state),
        "deadline": loaded.deadline,
        "server_time": message["server_time"],
        "reason": "outage",
    }
    assert now <= message["server_time"] < loaded.deadline
    assert store.take_moved() == []  # told once: the next claim has nothing to tell


async def test_only_a_deadline_an_outage_set_is_told_as_moved_by_it(parts, redis_url):
    # A move after the outage set the game's deadline: its event tells it.
    store, quick, (t1, _) = parts
    moved_on, held = await quick.create(SEATS), await quick.create(SEATS)
    (deadline,) = await store.defer([held.id], 60_000)  # an outage's hold, as claim.lua's
    listener = redis.asyncio.Redis.from_url(redis_url)
    async with listener.pubsub() as pubsub:
        await pubsub.subscribe(PLAYERS_CHANNEL)
        stale = (await store.load(moved_on.id)).deadline - 1  # not the game's deadline now
        await t1._announce([(moved_on.id, stale), (held.id, deadline - 1)], wait=0)
        async with asyncio.timeout(10):
            while (heard := await pubsub.get_message(True, timeout=1)) is None:
                pass
    await listener.aclose()
    address, message, _ = msgpack.unpackb(heard["data"])
    # The first message heard: the held game's (its deadline is its hash's 'held').
    assert (address, message["deadline"]) == (f"game:{held.id}", deadline), message


def _players_turn(events: dict[Any, Message]) -> tuple[Any, Message]:
    """The raw client whose event has legal moves, and that event."""
    ((client, event),) = [(c, e) for c, e in events.items() if e["legal"]]
    return client, event


async def _last_events(clients: list[Any], game: str) -> dict[Any, Message]:
    """Each client's latest event of the game, once one of them has legal moves."""
    latest: dict[Any, Message] = {}
    while not any(e["legal"] for e in latest.values()) or len(latest) < len(clients):
        for client in clients:
            with contextlib.suppress(TimeoutError):
                latest[client] = await client.expect(type="event", game=game, timeout=0.2)
    return latest


def _timeouts(redis_url: str, game: str) -> list[Message]:
    """The game's `timeout` moves, read from its stream."""
    with redis.Redis.from_url(redis_url) as r:
        store_key = next(iter(r.scan_iter(GameKeys(game, "*").events)))
        rows = r.xrange(store_key)
    events = [msgpack.unpackb(fields[b"e"]) for _, fields in rows]
    return [e for e in events if e.get("auto") == "timeout"]


FLAGS = ("--turn-time", "2", "--poll-interval", "0.05", "--match-wait", "0.2")


async def test_an_outage_longer_than_a_turn_does_not_cost_the_player_the_turn(
    moose_serve, redis_factory, ws_client
):
    redis_server = redis_factory(appendonly=True)
    proc = moose_serve("--redis", redis_server.url, *FLAGS)
    a, b = await ws_client(proc.url, "ann"), await ws_client(proc.url, "bob")
    game, _ = await table_game([a, b])
    player, event = _players_turn(await _last_events([a, b], game))
    await asyncio.to_thread(redis_server.stop)  # AOF written: nothing is lost
    move = {"game": game, "seq": event["seq"], "move": event["legal"][0], "move_id": "m-1"}
    assert (await player.request("move", **move))["code"] == "unavailable"
    await asyncio.sleep(3)  # the 2 s turn runs out while Redis is down
    await asyncio.to_thread(redis_server.start)
    await wait_ready(proc.http)
    await asyncio.sleep(1)  # the player tries again a second later: within the grace
    answer = await player.request("move", **move)
    assert answer["type"] == "moved", answer  # before: the deadline fired at once
    assert _timeouts(redis_server.url, game) == []
    assert "the service was down" in proc.log.read_text()


async def test_a_restart_of_moose_serve_does_not_play_the_waiting_turn_at_once(
    moose_serve, ws_client, tmp_path
):
    data = str(tmp_path / "data")
    proc = moose_serve("--data-dir", data, *FLAGS)
    a, b = await ws_client(proc.url, "ann"), await ws_client(proc.url, "bob")
    game, _ = await table_game([a, b])
    player, event = _players_turn(await _last_events([a, b], game))
    assert proc.stop() == 0
    await asyncio.sleep(3)  # stopped longer than the 2 s turn
    again = moose_serve("--data-dir", data, *FLAGS, port=proc.port)
    back = await ws_client(again.url, None)
    assert (await back.hello(token=player.token))["games"] == [game]
    await asyncio.sleep(1)  # the player moves a second after the server is back
    move = {"game": game, "seq": event["seq"], "move": event["legal"][0], "move_id": "m-2"}
    answer = await back.request("move", **move)
    assert answer["type"] == "moved", answer  # before: played by timeout as it started
    redis_url = f"unix://{tmp_path / 'data' / 'redis' / 'redis.sock'}"
    assert _timeouts(redis_url, game) == []


async def wait_ready(http: str) -> None:
    """Until the instance's /readyz answers 200 (Redis is reachable again)."""
    async with asyncio.timeout(30), aiohttp.ClientSession() as session:
        while True:
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(f"{http}/readyz") as resp:
                    if resp.status == 200:
                        return
            await asyncio.sleep(0.05)
