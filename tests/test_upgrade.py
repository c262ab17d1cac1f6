"""A rolling upgrade: the previous release (deploy/RELEASES, run from git) and this
checkout serve the same games over one Redis while bots play, and the instances are
upgraded one by one: this release started in a slot, then the old one stopped with
SIGTERM, its bots reconnecting to the next URL of their list (the new one).

No game is lost, every move an instance acknowledged (`moved`) is in its game's
stream as that seat's move, no turn is played by timeout (nor a seat marked away)
for a bot that was there to move, and every bot is told its game's real end.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from moose import rules
from moose.bots import make_bot
from moose.client import Client, ConnectionLost, GameResult
from moose_server.storage import formats
from moose_server.storage.codec import unpack_stored
from moose_server.storage.embedded import free_port
from moose_server.storage.store import Store

from helpers import Release, ServeProcess, open_store, previous_release

Message = dict[str, Any]

# Ready bots move at once; turns of 15 s keep a starved machine from timing out a
# bot that is merely slow to come back to the other instance.
FLAGS = (
    "--turn-time",
    "15",
    "--answer-time",
    "15",
    "--match-wait",
    "0.2",
    "--poll-interval",
    "0.05",
    "--drain-grace",
    "1",
)
ENV = {
    "MOOSE_MATCH_INTERVAL": "0.05",
    "MOOSE_LEASE": "1",
    "MOOSE_AUTO_DELAY": "0.3",
    "MOOSE_INSTANCE_TTL": "3",
}
BOTS = 6
GAMES_A_STAGE = 3  # games that end in each stage: all old, mixed, all new
RELEASES = ("old", "new")
SLOTS = (0, 1)
TIMEOUT = 100.0  # under the suite's 120 s per test


class Fleet:
    """Two slots over one Redis: each runs the previous release, then this one on a port
    of its own, started before the old one stops (as a deployment surges)."""

    def __init__(self, serve: Callable[..., ServeProcess], redis_url: str, old: Release) -> None:
        self.serve, self.redis_url, self.old = serve, redis_url, old
        self.ports = {(release, slot): free_port() for release in RELEASES for slot in SLOTS}
        self.release = {url_of(port): release for (release, _), port in self.ports.items()}
        self.procs: dict[int, ServeProcess] = {}  # slot -> the instance serving it now

    def urls(self, home: int) -> list[str]:
        """A bot's URLs: its slot's old then new instance, then the other slot's."""
        slots = (home, *(s for s in SLOTS if s != home))
        return [url_of(self.ports[(release, s)]) for s in slots for release in RELEASES]

    def start(self, release: str, slot: int) -> ServeProcess:
        """Start `release` ("old" or "new") in `slot`, until it is ready."""
        name = f"{release}{slot}"
        env = {**ENV, **self.old.env} if release == "old" else ENV
        args = ("--redis", self.redis_url, *FLAGS, "--instance-id", name)
        port = self.ports[(release, slot)]
        self.procs[slot] = self.serve(*args, port=port, env=env, log=f"{name}.log")
        return self.procs[slot]

    async def upgrade(self, slot: int) -> None:
        """Start this release in the slot, then stop the old one (SIGTERM: it drains, and
        its sockets reconnect to the next URL of their list: the new one)."""
        old = self.procs[slot]
        await asyncio.to_thread(self.start, "new", slot)
        assert await asyncio.to_thread(old.stop) == 0


def url_of(port: int) -> str:
    """The WebSocket URL of an instance on loopback `port`."""
    return f"ws://127.0.0.1:{port}/ws"


class Players:
    """Bots playing from the queue until told to stop, and what each was told."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.clients = [
            Client(fleet.urls(i % len(SLOTS)), name=f"bot{i}", reconnect_timeout=60.0)
            for i in range(BOTS)
        ]
        self.seats: dict[tuple[str, str], int] = {}  # (bot, game) -> its seat
        self.acked: dict[tuple[str, int], tuple[str, str]] = {}  # (game, seq) -> bot, release
        self.results: dict[tuple[str, str], GameResult] = {}
        self.stopping = False
        for client in self.clients:
            client.trace = self._tracer(client)

    def _tracer(self, client: Client) -> Callable[[str, Message], None]:
        name = client.name or ""

        def trace(direction: str, msg: Message) -> None:
            if direction != "recv" or not isinstance(msg.get("game"), str):
                return
            if msg.get("type") == "match":
                self.seats[(name, msg["game"])] = msg["seat"]
            elif msg.get("type") == "moved":
                self.acked[(msg["game"], msg["seq"])] = (name, self.fleet.release[client.url])

        return trace

    async def play(self, client: Client) -> None:
        """Games until `stopping`; a bot left waiting in the queue is closed then."""
        name = client.name or ""

        def done(result: GameResult) -> None:
            self.results[(name, result.game)] = result

        await client.open()
        with contextlib.suppress(ConnectionLost):  # the last one, closed by `wind_down`
            await client.run_bot(
                make_bot("greedy", seed=len(self.results) + len(name)),
                None,
                min_players=2,
                max_players=2,
                stop=lambda: self.stopping,
                on_result=done,
            )

    async def wind_down(self, tasks: list[asyncio.Task[None]]) -> None:
        """Stop: each bot ends its game and queues no more; two still in the queue are
        matched and play it out. The last one left waiting alone is closed: nobody is
        left to be matched with it. (Closing a queued bot earlier could close one
        being matched that instant: its seat would then time out.)"""
        self.stopping = True
        while left := [c for c, t in zip(self.clients, tasks, strict=True) if not t.done()]:
            if len(left) == 1 and not left[0].active_games:
                await left[0].close()
            await asyncio.sleep(0.05)

    def games_ended(self) -> set[str]:
        """The games some bot was told the end of, so far."""
        return {game for _, game in list(self.results)}

    async def ended(self, more: int) -> None:
        """Wait until `more` games more than now have ended (each seen by one bot)."""
        target = len(self.games_ended()) + more
        while len(self.games_ended()) < target:
            await asyncio.sleep(0.05)


async def stored_format(store: Store, game: str) -> object:
    """The format field of a game's data as Redis holds it (None: none)."""
    raw = await store.redis.hget(store.keys_of(game).game, "data")
    assert raw is not None, game
    return unpack_stored(raw).get(formats.FIELD)


async def check_games(store: Store, players: Players) -> set[str]:
    """Every game ended whole, with every acknowledged move and no timeout or away;
    each bot was told the real end. The games with moves acknowledged by both releases."""
    for (bot, game), seat in players.seats.items():
        loaded = await store.load(game)
        assert loaded.data is not None, f"game {game} of {bot} is lost"
        state = rules.State.from_dict(loaded.data["state"])
        entries = await store.events(game)
        assert state.over, (
            game,
            bot,
            [e.event for e in entries[-3:]],
            loaded.data["players"],
            [k for k in players.results if k[1] == game],
            loaded.data.get("ended"),
        )
        assert [e.seq for e in entries] == list(range(1, loaded.version + 1)), game
        waited = [e.event for e in entries if e.event.get("auto") == "timeout"]
        waited += [e.event for e in entries if e.event["kind"] == "away"]
        assert not waited, (game, waited)
        assert players.results[(bot, game)].scores == rules.scores(state), (bot, game)
        for (acked_game, seq), (acker, _) in players.acked.items():
            if (acker, acked_game) == (bot, game):
                event = entries[seq - 1].event
                assert (event["kind"], event["seat"], event["auto"]) == ("move", seat, None)
    served: dict[str, set[str]] = {}
    for (game, _), (_, release) in players.acked.items():
        served.setdefault(game, set()).add(release)
    return {game for game, releases in served.items() if len(releases) == 2}


async def test_a_rolling_upgrade_loses_no_game_move_or_turn(moose_serve, redis_factory, tmp_path):
    old = previous_release(Path(tmp_path) / "previous")
    redis = redis_factory(appendonly=False)
    fleet = Fleet(moose_serve, redis.url, old)
    await asyncio.gather(*(asyncio.to_thread(fleet.start, "old", slot) for slot in SLOTS))
    players = Players(fleet)
    tasks = [asyncio.create_task(players.play(c)) for c in players.clients]
    try:
        async with asyncio.timeout(TIMEOUT), open_store(redis.url) as store:
            await players.ended(GAMES_A_STAGE)
            # The previous release wrote these games: it stores no format.
            assert {await stored_format(store, g) for g in players.games_ended()} == {None}
            for slot in SLOTS:
                await fleet.upgrade(slot)
                before = players.games_ended()
                await players.ended(GAMES_A_STAGE)
            await players.wind_down(tasks)
            await asyncio.gather(*tasks)
            mixed = await check_games(store, players)
            # The last stage's games end on this release alone: it writes its format.
            last = players.games_ended() - before
            assert formats.WRITTEN in {await stored_format(store, g) for g in last}
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for client in players.clients:
            await client.close()
    assert mixed, "no game had moves answered by both releases: nothing was tested"
