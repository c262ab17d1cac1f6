"""Several `moose serve` processes over one Redis, or over a Redis Cluster.

Bot clients, each given every instance's URL (the client goes round the list
when it reconnects), play whole games with short turns, some moves late so that
deadlines fire. One instance is killed (SIGKILL) mid-game, or Redis restarts
mid-game: every game still ends, and each game's stream in Redis is checked
event by event: seqs 1..N, every state the rules' own result of the move
before, the record's moves equal to the move events, and each timeout fired
once, at or after its deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from typing import Any

import pytest

from moose import rules
from moose.bots import make_bot
from moose.client import Client, ConnectionLost, GameResult, ServerError
from moose_server.matchmaking.matchmaker import Matchmaker, MatchOptions
from moose_server.play.games import Games
from moose_server.play.seats import Seat
from moose_server.play.streams import read_events
from moose_server.settings import Settings
from moose_server.storage.embedded import EmbeddedRedis
from moose_server.storage.keys import PLAYERS_CHANNEL, mm_key
from moose_server.storage.store import Store

from helpers import ServeProcess, aof_copy, aof_restore, open_store, play_match

Message = dict[str, Any]

GAME_TIMEOUT = 60.0
FLAGS = (
    "--turn-time",
    "0.5",
    "--answer-time",
    "0.5",
    "--match-wait",
    "0.2",
    "--poll-interval",
    "0.05",
    "--drain-grace",
    "1",
)
# A heartbeat of 3 s: a busy machine does not make a live instance look dead.
ENV = {
    "MOOSE_MATCH_INTERVAL": "0.05",
    "MOOSE_LEASE": "1",
    "MOOSE_AUTO_DELAY": "0.3",
    "MOOSE_INSTANCE_TTL": "3",
}
LATE = 1.5  # a late move: a second past the 0.5 s turn, so the deadline fires first


def start_instances(
    moose_serve: Callable[..., ServeProcess], redis_url: str, count: int, *flags: str
) -> list[ServeProcess]:
    """`count` instances over `redis_url`, started at once, each with its own log."""
    args = ("--redis", redis_url, *FLAGS, *flags)
    procs = [
        moose_serve(*args, "--instance-id", f"i_{n}", wait=False, env=ENV, log=f"serve{n}.log")
        for n in range(count)
    ]
    return [p.wait_ready() for p in procs]


def urls_from(procs: list[ServeProcess], first: int) -> list[str]:
    """Every instance's URL, starting with instance `first`."""
    return [procs[(first + k) % len(procs)].url for k in range(len(procs))]


async def play(client: Client, seed: int, progress: dict[str, int]) -> tuple[str, list[int]]:
    """Queue for a 2-seat table and play it to the end, the third own move late.

    Returns the game and the seqs of the events the client delivered.
    """
    bot = make_bot("greedy", seed=seed)
    turns = 0

    async def turn(game: str, msg: Message) -> None:
        nonlocal turns
        turns += 1
        await asyncio.sleep(LATE if turns == 3 else 0.01)
        for attempt in range(1, 30):
            try:
                await client.move(game, bot.choose(msg["view"], msg["legal"]), seq=msg["seq"])
            except ServerError as exc:
                if exc.code == "unavailable":  # Redis is down: try again
                    await asyncio.sleep(0.1 * attempt)
                    continue
                # A late move lost to the deadline, or an event is on its way.
                assert exc.code in ("stale_seq", "not_your_turn", "game_over"), exc
            break

    await client.queue(2, 2)
    game, _, events = await play_match(client, progress, turn)
    return game, [msg["seq"] for msg in events]


async def check_stream(store: Store, game: str) -> Message:
    """The game's stream is whole and replays; each timeout fired once. The record."""
    entries = await read_events(store, game)
    assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
    data = (await store.load(game)).data
    assert data is not None
    state = rules.new_game(
        len(data["players"]), deck=data["state"]["deck"], dealer=data["state"]["dealer"]
    )
    assert entries[0].event["kind"] == "start" and entries[-1].event["kind"] == "over"
    fired: list[int] = []
    moves = []
    for before, entry in itertools.pairwise(entries):
        if entry.event["kind"] != "move":
            continue
        state = rules.apply(state, entry.event["move"])
        moves.append(entry.event["move"])
        snapshot = dict(entry.state)
        snapshot.pop("auto", None)
        assert snapshot == state.to_dict(), f"seq {entry.seq} is not the move's result"
        if entry.event["auto"] == "timeout":
            # The deadline of the version before: fired once, and not early.
            assert 0 < before.deadline <= entry.time
            fired.append(before.deadline)
    assert len(fired) == len(set(fired))
    assert moves == data["moves"]
    assert state.over
    record = {"players": state.n, "deck": data["state"]["deck"], "moves": data["moves"]}
    return {**record, "timeouts": len(fired)}


async def play_games(
    procs: list[ServeProcess], clients: int, *, during: Callable[[], Any] | None = None
) -> tuple[list[Client], list[tuple[str, list[int]]]]:
    """`clients` bots (spread over the instances) play; `during` runs once every game
    has a few moves in. Returns the clients and each one's game and seqs."""
    bots = [
        Client(urls_from(procs, i), name=f"bot{i}", reconnect_timeout=30.0) for i in range(clients)
    ]
    progress: dict[str, int] = {}
    try:
        async with asyncio.timeout(GAME_TIMEOUT):
            for bot in bots:
                await bot.open()
            tasks = [asyncio.create_task(play(b, i, progress)) for i, b in enumerate(bots)]
            if during is not None:
                while len(progress) < clients // 2 or min(progress.values()) < 4:
                    assert not any(t.done() for t in tasks), [t.result() for t in tasks if t.done()]
                    await asyncio.sleep(0.02)
                await during()
            results = await asyncio.gather(*tasks)
    finally:
        for bot in bots:
            await bot.close()
    return bots, results


async def check_games(redis_url: str, results: list[tuple[str, list[int]]]) -> int:
    """Every game's stream is right, and each client saw its events in order, once."""
    games = {game for game, _ in results}
    assert len(games) == len(results) // 2  # two seats a game
    for _, seqs in results:
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    timeouts = 0
    async with open_store(redis_url) as store:
        for game in games:
            timeouts += (await check_stream(store, game))["timeouts"]
    return timeouts


async def test_games_finish_when_an_instance_is_killed(backend_url, moose_serve, ws_client):
    procs = start_instances(moose_serve, backend_url, 3)
    # A player alone in the queue through the instance that will die: no table for
    # three will form, and nobody will reconnect for them.
    lonely = await ws_client(procs[0].url, "lonely")
    assert (await lonely.request("queue", min_players=3, max_players=3))["type"] == "queued"

    async def kill() -> None:
        procs[0].kill()

    bots, results = await play_games(procs, 6, during=kill)
    assert procs[0].proc is not None and procs[0].proc.returncode == -9
    # Bots 0 and 3 started on the killed instance.
    assert bots[0].reconnects >= 1 and bots[3].reconnects >= 1
    assert await check_games(backend_url, results) >= 1  # late moves made deadlines fire
    # The other instances found the dead one's heartbeat gone and dropped its ticket.
    async with open_store(backend_url) as store:
        mm = Matchmaker(store.redis, MatchOptions(match_wait=1))
        async with asyncio.timeout(30):
            while await mm.ticket_instances():
                await asyncio.sleep(0.1)
        assert (await mm.queue_sizes())["3"] == 0


@pytest.mark.parametrize("down", [0.0, 2.0], ids=["restart", "outage"])
async def test_games_finish_across_a_redis_restart(moose_serve, redis_factory, down):
    """Redis (AOF on) stops cleanly mid-game and starts again on its port and folder,
    at once or after `down` seconds, longer than a turn: moves meanwhile answer
    `unavailable`, deadlines wait, and every game then ends whole."""
    redis = redis_factory(appendonly=True)
    procs = start_instances(moose_serve, redis.url, 2)

    async def restart() -> None:
        await asyncio.to_thread(redis.stop)  # SIGTERM: the AOF is written out
        await asyncio.sleep(down)
        await asyncio.to_thread(redis.start)

    _, results = await play_games(procs, 4, during=restart)
    await check_games(redis.url, results)
    logs = "".join(p.log.read_text() for p in procs)
    assert "pub/sub connection lost" in logs  # the hubs saw it go, and came back


async def lost_games(redis_url: str, seen: dict[str, int]) -> list[str]:
    """The games whose history Redis holds no longer as far as a client saw it."""
    async with open_store(redis_url) as store:
        versions = {game: (await store.load(game)).version for game in seen}
    return [game for game, seq in seen.items() if versions[game] < seq]


class Watched:
    """Bot clients playing from the queue, and what each of them was told."""

    def __init__(self, procs: list[ServeProcess], count: int) -> None:
        self.clients = [
            Client(urls_from(procs, i), name=f"bot{i}", reconnect_timeout=60.0)
            for i in range(count)
        ]
        self.seen: dict[str, int] = {}  # game -> the highest seq any bot was sent
        self.seated: dict[str, set[str]] = {}  # game -> the bots matched to it
        self.gone: set[tuple[str, str]] = set()  # (bot, game) told `gone`
        self.results: dict[tuple[str, str], GameResult] = {}  # (bot, game) -> the last result
        self.stopping = False
        for client in self.clients:
            client.trace = self._tracer(client.name or "")

    def _tracer(self, name: str) -> Callable[[str, Message], None]:
        def trace(direction: str, msg: Message) -> None:
            game = msg.get("game")
            if direction != "recv" or not isinstance(game, str):
                return
            if msg.get("type") == "event":
                self.seen[game] = max(self.seen.get(game, 0), msg["seq"])
            elif msg.get("type") == "match":
                self.seated.setdefault(game, set()).add(name)
            elif msg.get("type") == "gone":
                self.gone.add((name, game))

        return trace

    async def play(self, client: Client) -> None:
        """Games until `stopping`; a bot left waiting in the queue is closed then."""
        name = client.name or ""

        def done(result: GameResult) -> None:
            self.results[(name, result.game)] = result

        bot = make_bot("greedy", seed=len(name))
        await client.open()
        try:
            await client.run_bot(
                bot, None, min_players=2, max_players=2, stop=lambda: self.stopping, on_result=done
            )
        except ConnectionLost:
            assert self.stopping  # closed by `stop_idle` as it queued again

    async def stop_idle(self) -> None:
        """Once stopping: close the bots that wait in the queue with no game."""
        while True:
            for client in self.clients:
                if self.stopping and not client.active_games and client.connected:
                    with contextlib.suppress(ServerError):  # not_queued: just seated
                        await client.leave_queue()
                        await client.close()
            await asyncio.sleep(0.2)


async def lose_last_writes(redis_server: EmbeddedRedis, watched: Watched) -> list[str]:
    """Copy the AOF, wait 0.8 s, kill Redis, put the copy back and start it: the
    games whose history went back (their version is below a seq a bot was sent)."""
    copy = aof_copy(redis_server)
    await asyncio.sleep(0.8)
    before = dict(watched.seen)
    redis_server.kill()  # as a host crash: what was not written is lost
    aof_restore(redis_server, copy)
    await asyncio.to_thread(redis_server.start)
    return await lost_games(redis_server.url, before)


async def check_after_loss(store: Store, watched: Watched) -> None:
    """Every game ended, or was left by all its seats; no ready bot lost a turn."""
    for game, bots in watched.seated.items():
        loaded = await store.load(game)
        if loaded.data is None:  # dealt in the lost window: every seat left it
            assert {(bot, game) for bot in bots} <= watched.gone, game
            continue
        await check_stream(store, game)  # ended, whole, replays
        events = [e.event for e in await store.events(game)]
        assert not [e for e in events if e.get("auto") == "timeout" or e["kind"] == "away"], (
            game,
            events,
        )
        final = rules.scores(rules.State.from_dict(loaded.data["state"]))
        for bot in bots:  # every seat was told the game's real end
            assert watched.results[(bot, game)].scores == final, game


async def test_redis_losing_its_last_writes_leaves_no_game_or_bot_stuck(moose_serve, redis_factory):
    """Redis (AOF, appendfsync everysec) comes back without its last 0.8 s of writes,
    as after a host crash, while bots play on two instances. Every game then ends or
    is left by every seat (`gone`), every bot stops when asked, and no ready bot
    has a turn played for it by timeout."""
    redis_server = redis_factory(appendonly=True)
    # Ready bots move at once, so the turn time costs nothing while all is well; 15 s
    # (not 3) keeps a starved 2-core machine (four test workers on it) from timing out
    # a bot that is merely slow to come back; a bot never told of the game would
    # still time out.
    procs = start_instances(
        moose_serve, redis_server.url, 2, "--turn-time", "15", "--answer-time", "15"
    )
    watched = Watched(procs, 8)
    tasks = [asyncio.create_task(watched.play(c)) for c in watched.clients]
    stopper = asyncio.create_task(watched.stop_idle())
    try:
        async with asyncio.timeout(GAME_TIMEOUT):
            while len(watched.results) < 8:  # a few games in: everyone is busy
                await asyncio.sleep(0.05)
            lost = await lose_last_writes(redis_server, watched)
            after = len(watched.results)
            while len(watched.results) < after + 8:
                await asyncio.sleep(0.05)
            watched.stopping = True
            await asyncio.gather(*tasks)  # no bot waits forever
    finally:
        for task in (*tasks, stopper):
            task.cancel()
        await asyncio.gather(*tasks, stopper, return_exceptions=True)
        for client in watched.clients:
            await client.close()
    assert lost, "the fault lost nothing: it tested nothing"
    async with open_store(redis_server.url) as store:
        await check_after_loss(store, watched)
    logs = "".join(p.log.read_text() for p in procs)
    assert "went back" in logs  # the servers saw their sockets' games go back


async def test_a_queue_ticket_redis_lost_is_taken_again(moose_serve, redis_factory, ws_client):
    # appendfsync always: the AOF copied is exactly what Redis had at that moment.
    redis_server = redis_factory(appendonly=True, extra=["--appendfsync", "always"])
    proc = moose_serve("--redis", redis_server.url, *FLAGS, env=ENV)
    ann = await ws_client(proc.url, "ann")
    copy = aof_copy(redis_server)
    assert (await ann.request("queue", min_players=2, max_players=2))["type"] == "queued"
    redis_server.kill()  # Redis loses ann's ticket
    aof_restore(redis_server, copy)
    await asyncio.to_thread(redis_server.start)
    tickets = mm_key("tickets")
    async with asyncio.timeout(30), open_store(redis_server.url) as store:
        while not await store.redis.hexists(tickets, ann.player):  # before: never again
            await asyncio.sleep(0.05)
    bob = await ws_client(proc.url, "bob")
    assert (await bob.request("queue", min_players=2, max_players=2))["type"] == "queued"
    matches = [await c.expect(type="match", timeout=30) for c in (ann, bob)]  # before: alone
    assert matches[0]["game"] == matches[1]["game"]


async def test_a_match_published_while_pub_sub_was_down_is_sent_again(
    moose_serve, redis_factory, ws_client
):
    """A game dealt (by another instance) while this one's subscription is down: its
    players here get `match` once the hub has subscribed again, and can play."""
    redis_server = redis_factory(appendonly=False)
    # Turns of a minute: no timeout plays the game while the test waits for its match.
    proc = moose_serve(
        "--redis", redis_server.url, *FLAGS, "--turn-time", "60", "--answer-time", "60", env=ENV
    )
    ann, bob = await ws_client(proc.url, "ann"), await ws_client(proc.url, "bob")
    seats = [Seat(ann.player, "ann", None), Seat(bob.player, "bob", None)]
    async with open_store(redis_server.url) as store:
        games = Games(store, Settings(redis_url=redis_server.url, turn_time=3600))
        # The hub waits 0.2 s before it subscribes again: the match is published then.
        await store.redis.client.client_kill_filter(_type="pubsub")
        game = await games.create(seats, game_id="g_unheard", seed=1)
        assert not (await store.redis.client.pubsub_numsub(PLAYERS_CHANNEL))[0][1]  # nobody heard
        starts = []
        for seat, client in enumerate((ann, bob)):  # before: never
            assert (await client.expect(type="match", timeout=30))["seat"] == seat
            starts.append(await client.expect(type="event", game=game.id, seq=1))
            assert starts[-1]["view"]["seat"] == seat
        to_act = starts[0]["view"]["to_act"]
        moved = await (ann, bob)[to_act].request(
            "move", game=game.id, seq=1, move=starts[to_act]["legal"][0]
        )
        assert moved["type"] == "moved"
