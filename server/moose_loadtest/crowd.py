"""Load-test players: many lean bot clients in one process, timing every step.

One `Player` is one WebSocket speaking PROTOCOL.md with msgpack frames. It says
hello, queues, and answers every event that offers it legal moves at once with
a built-in bot; it never waits for the answer to a move before reading on, so
what is timed is the server, not the client library's bookkeeping. The same
players drive the socket ceiling (`ceilings.EchoServer`), so both are
measured with the same code and concurrency.

A worker process (`run.worker_main`) runs one `Job` and sends its `Tally` back;
`run` merges the tallies of every worker. Times are
`time.monotonic()`, which is one clock for every process of a machine, so the
moment the last seat of a game saw an event can be found across processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import resource
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import msgpack

from moose.bots import make_bot
from moose.protocol import PROTOCOL_VERSION
from moose_loadtest import deployment

__all__ = [
    "SOCKETS_PER_ADDRESS",
    "Job",
    "Pacer",
    "Player",
    "SocketPacer",
    "Tally",
    "client_sessions",
    "local_address",
    "raise_nofile",
    "run_job",
]

# What a server with the default settings lets one client do: every player stays
# under it, so a run against such a server is never refused for its own pace.
SOCKET_RATE = 0.9 * deployment.RATE  # messages a second per socket (the server's: 20)...
SOCKET_BURST = deployment.BURST // 2  # ...at most this many at once (the server's: 40)
SOCKETS_PER_ADDRESS = deployment.SOCKETS_PER_ADDRESS  # open per source address

CONNECT_AT_ONCE = 64  # per worker: more overflows the server's accept backlog
HELLO_TIMEOUT = 30.0
LEAVE_ID = -1  # the id of the `leave_queue` that ends a player's run


@dataclass(frozen=True)
class Job:
    """What one worker does; every field is plain data (it crosses a process boundary)."""

    mode: str  # "games", "storm", "connections" or "matchmaking"
    url: str
    players: int  # sockets in this worker
    table: int = 4  # seats per game (queue min = max = table)
    bot: str = "greedy"
    rate: float = 0.0  # moves per second of this worker (0: as fast as the bots go)
    warmup: float = 3.0
    duration: float = 20.0
    drain: float = 60.0  # after the window, time for running games to finish
    max_games: int = 0  # stop queueing after this many games finished here (0: no cap)
    source_ips: int = 0  # connect from N loopback addresses of this worker's (0: any address)
    hold: float = 3.0  # connections mode: seconds the idle sessions stay open
    worker: int = 0
    seed: int = 0
    redis_url: str | None = None  # matchmaking mode: give each player a rating there first
    # Several instances: player i connects to spread[(worker + i) % len], so that the
    # seats of one game sit on different instances (`url` is then spread[0]).
    spread: tuple[str, ...] = ()
    kill: int = -1  # storm mode: the index in `spread` of the instance that will die


@dataclass
class Tally:
    """What one worker saw; merged by `run`."""

    moves: int = 0  # moves answered `moved` that were sent inside the window
    moves_total: int = 0
    move_ms: list[float] = field(default_factory=list)  # move -> `moved`
    event_ms: list[float] = field(default_factory=list)  # move -> the mover's own event
    match_ms: list[float] = field(default_factory=list)  # queue -> match
    sent: dict[str, float] = field(default_factory=dict)  # "game seq" -> move sent (window)
    seen: dict[str, list[float]] = field(default_factory=dict)  # "game seq" -> [last, count]
    games: set[str] = field(default_factory=set)  # games seen to finish
    errors: Counter[str] = field(default_factory=Counter)
    connected: int = 0
    connect_ms: list[float] = field(default_factory=list)
    window: tuple[float, float] = (0.0, 0.0)
    tables: dict[str, list[int]] = field(default_factory=dict)  # game -> seats' ratings
    instances: dict[str, list[int]] = field(default_factory=dict)  # game -> its seats' instances
    storm: dict[str, list[Any]] = field(default_factory=dict)  # storm mode: `storm.py`'s lists

    def as_dict(self) -> dict[str, Any]:
        """Plain data for the trip back to the parent process."""
        d = dict(self.__dict__)
        d["games"] = sorted(self.games)
        d["errors"] = dict(self.errors)
        return d


class Pacer:
    """A token bucket shared by the players of a worker: `rate` moves a second."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self._next = time.monotonic()

    async def wait(self) -> None:
        """Return when the next move may be sent (at once when the rate is 0)."""
        if self.rate <= 0:
            return
        now = time.monotonic()
        # No saving up: a late move does not earn a burst for the ones after it.
        slot = max(self._next, now)
        self._next = slot + 1.0 / self.rate
        if slot > now:
            await asyncio.sleep(slot - now)


class SocketPacer:
    """A token bucket per socket: `SOCKET_RATE` messages a second, `SOCKET_BURST` at once.

    At full speed a player of a small run would send more than the server lets a
    socket send (MOOSE_RATE); then its moves wait here instead of being refused.
    """

    def __init__(self) -> None:
        self._allowance = float(SOCKET_BURST)
        self._checked = time.monotonic()

    async def wait(self) -> None:
        """Return when one more message may be sent (at once while under the rate)."""
        now = time.monotonic()
        elapsed, self._checked = now - self._checked, now
        self._allowance = min(float(SOCKET_BURST), self._allowance + elapsed * SOCKET_RATE)
        self._allowance -= 1
        if self._allowance < 0:
            await asyncio.sleep(-self._allowance / SOCKET_RATE)


class Run:
    """What the players of one worker share: the job, the tally, the clock, the stop flag."""

    def __init__(self, job: Job, start: float) -> None:
        self.job = job
        self.tally = Tally()
        self.pacer = Pacer(job.rate)
        self.start = start
        self.window = (start + job.warmup, start + job.warmup + job.duration)
        self.tally.window = self.window
        self.queueing = True  # cleared at the window's end, or at max_games

    def in_window(self, t: float) -> bool:
        """Whether a move sent at `t` counts."""
        return self.window[0] <= t < self.window[1]

    def game_over(self, game: str) -> None:
        """A game ended (seen by one of its seats here)."""
        self.tally.games.add(game)
        if self.job.max_games and len(self.tally.games) >= self.job.max_games:
            self.queueing = False

    def matched(self, player: Player, queued_at: float, now: float) -> None:
        """A player queued at `queued_at` got its `match` at `now`."""
        self.tally.match_ms.append((now - queued_at) * 1000)

    def think(self, game: str, seq: int, view: dict[str, Any]) -> float:
        """Seconds a player waits before answering this event (0: at once, or the pacer)."""
        return 0.0


class Player:
    """One socket: hello, queue, play with a bot, queue again; every step timed."""

    def __init__(self, run: Run, index: int, session: aiohttp.ClientSession) -> None:
        self.run = run
        self.index = index
        self.session = session
        self.name = f"lt{run.job.worker}-{index}"
        self.player = ""
        self.token = ""  # the welcome's: a reconnect says hello with it
        self.bot = make_bot(run.job.bot, run.job.seed * 100_003 + index)
        spread = run.job.spread
        self.instance = (run.job.worker + index) % len(spread) if spread else 0
        self.url = spread[self.instance] if spread else run.job.url
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.seats: dict[str, int] = {}
        self._ids = itertools.count(1)
        self._moves: dict[int, float] = {}  # request id -> monotonic send time
        self._queued_at = 0.0
        self._pending_seq: dict[str, float] = {}  # game -> send time of our move
        self.last: dict[str, tuple[Any, ...]] = {}  # game -> (seq, to_act, legal?, when)
        self._paced: set[asyncio.Task[None]] = set()  # moves waiting for the pacer
        self._socket_pacer = SocketPacer()
        # Matchmaking and connections modes read from the moment they connect (`pump`),
        # so that the server's pings are answered while the other sockets connect.
        self._inbox: asyncio.Queue[dict[str, Any] | None] | None = None
        self._pump: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        """Open the socket and say hello (raises on failure)."""
        t0 = time.monotonic()
        self.ws = await self.session.ws_connect(
            self.url, autoping=True, heartbeat=None, max_msg_size=0, compress=0
        )
        hello = {"type": "hello", "id": 0, "protocol": PROTOCOL_VERSION, "name": self.name}
        await self._send(hello)
        async with asyncio.timeout(HELLO_TIMEOUT):
            welcome = await self._receive()
        if welcome is None or welcome.get("type") != "welcome":
            code = (welcome or {}).get("code", "closed")
            raise ConnectionError(f"hello refused: {code}")
        self.player, self.token = welcome["player"], welcome.get("token", "")
        self.run.tally.connect_ms.append((time.monotonic() - t0) * 1000)

    def report(self) -> None:
        """Put in the tally what this kind of player keeps of its own (a plain one: nothing)."""

    def pump(self) -> None:
        """Read every message into an inbox from now on (`_receive` takes from it)."""
        self._inbox = asyncio.Queue()

        async def read() -> None:
            assert self.ws is not None and self._inbox is not None
            while True:
                raw = await self.ws.receive()
                if raw.type != aiohttp.WSMsgType.BINARY:
                    self._inbox.put_nowait(None)
                    return
                self._inbox.put_nowait(msg_unpack(raw.data))

        self._pump = asyncio.create_task(read())

    async def close(self) -> None:
        """Close the socket (moves still waiting for the pacer are dropped)."""
        for task in self._paced:
            task.cancel()
        if self._pump is not None:
            self._pump.cancel()
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()

    async def _send(self, msg: dict[str, Any]) -> None:
        assert self.ws is not None
        await self._socket_pacer.wait()
        await self.ws.send_bytes(msg_pack(msg))

    async def _receive(self) -> dict[str, Any] | None:
        if self._inbox is not None:
            return await self._inbox.get()
        assert self.ws is not None
        raw = await self.ws.receive()
        if raw.type != aiohttp.WSMsgType.BINARY:
            return None
        return msg_unpack(raw.data)  # type: ignore[no-any-return]

    async def queue(self) -> None:
        """Ask the public queue for a table of exactly `table` seats."""
        self._queued_at = time.monotonic()
        t = self.run.job.table
        await self._send(
            {"type": "queue", "id": next(self._ids), "min_players": t, "max_players": t}
        )

    async def play(self, after: float = 0.0) -> None:
        """Queue (`after` seconds from now), then read and answer until stopped, or
        until the queue is closed and no game runs."""
        if after > 0:
            await asyncio.sleep(after)
        await self.queue()
        while True:
            msg = await self._receive()
            if msg is None:
                if self.run.queueing:
                    self.run.tally.errors["closed"] += 1
                return
            kind = msg["type"]
            if kind == "event":
                if await self._on_event(msg):
                    return
            elif kind == "moved":
                self._on_moved(msg)
            elif kind == "match":
                self.seats[msg["game"]] = msg["seat"]
                if self.run.job.spread:
                    self.run.tally.instances.setdefault(msg["game"], []).append(self.instance)
                self.run.matched(self, self._queued_at, time.monotonic())
            elif kind == "left":
                return  # out of the queue at the end of the window
            elif kind == "error":
                if msg.get("id") == LEAVE_ID:
                    continue  # not_queued: just seated, and the `match` is on its way
                self._moves.pop(msg.get("id", -1), None)
                self.run.tally.errors[msg.get("code", "?")] += 1

    def _on_moved(self, msg: dict[str, Any]) -> None:
        now = time.monotonic()
        sent = self._moves.pop(msg["id"], None)
        tally = self.run.tally
        tally.moves_total += 1
        if sent is None or not self.run.in_window(sent):
            return
        tally.moves += 1
        tally.move_ms.append((now - sent) * 1000)
        key = f"{msg['game']} {msg['seq']}"
        tally.sent[key] = sent

    async def _on_event(self, msg: dict[str, Any]) -> bool:
        """Time the event, answer it; True when this player is done."""
        now = time.monotonic()
        run, game = self.run, msg["game"]
        if now < run.window[1] + 5.0:
            key = f"{game} {msg['seq']}"
            seen = run.tally.seen.get(key)
            if seen is None:
                run.tally.seen[key] = [now, 1]
            else:
                seen[0] = max(seen[0], now)
                seen[1] += 1
        view = msg["view"]  # None unless the event offers legal moves (see msg_unpack)
        self.last[game] = (msg["seq"], view and view.get("to_act"), bool(msg.get("legal")), now)
        event = msg["event"]
        if event.get("kind") == "move" and event.get("seat") == self.seats.get(game):
            sent = self._pending_seq.pop(game, None)
            if sent is not None and run.in_window(sent):
                run.tally.event_ms.append((now - sent) * 1000)
        if event.get("kind") == "over" or (view and view.get("over")):
            if self.seats.pop(game, None) is not None:
                run.game_over(game)
                if not run.queueing:
                    return not self.seats
                await self.queue()
            return False
        legal = msg.get("legal")
        if legal and view.get("to_act") == self.seats.get(game):
            move = self.bot.choose(view, legal)
            think = run.think(game, msg["seq"], view)
            if run.pacer.rate > 0 or think > 0:
                # Wait for the pacer (or the think time) in a task: the reader goes
                # on, so what arrives meanwhile (this move's `moved` may come after
                # its event) is timed when it arrives, not when this player moves.
                task = asyncio.create_task(self._move(game, msg["seq"], move, True, think))
                self._paced.add(task)
                task.add_done_callback(self._paced.discard)
            else:
                await self._move(game, msg["seq"], move)
        return False

    async def _move(
        self, game: str, seq: int, move: dict[str, Any], paced: bool = False, think: float = 0.0
    ) -> None:
        if think > 0:
            await asyncio.sleep(think)
        if paced:
            await self.run.pacer.wait()
        mid = next(self._ids)
        sent = time.monotonic()
        self._moves[mid] = sent
        self._pending_seq[game] = sent
        await self._send(
            {
                "type": "move",
                "id": mid,
                "game": game,
                "seq": seq,
                "move": move,
                "move_id": f"{self.name}-{mid}",
            }
        )


# Players of the matchmaking phase get a rating drawn evenly from this mu range
# (sigma 2, 10 games: established), 1,152 rating points from end to end.
SEED_MU = (13.0, 37.0)
# Spread over instances: mu between runs of players seated together (~190 rating
# points; the queue's window is 100 and a game moves a rating by about 50).
SPREAD_MU = 4.0
# Seconds between the first queue of one run and the next's: more than a server's
# batch of queue requests takes on a machine not overloaded (games_on_several says).
RUN_STAGGER = 0.005


async def _seed_ratings(job: Job, players: list[Player], spread: bool = False) -> None:
    """Give every player a rating in Redis before they queue (the queue reads it).

    `spread`: players over several instances. The queue seats players of close
    ratings together, and otherwise in the order their tickets came, which comes
    in batches of one instance: left alone, most tables would sit on one
    instance. Each run of `table` players in a row (on different instances,
    round-robin) gets one rating, the runs `SPREAD_MU` apart (past the queue's
    window, even after a game's change), so that a table is one run.
    In pipelines of a few hundred: the server's heartbeats go unanswered while
    the players do not read, so this must not take long.
    """
    import random as _random

    from moose_loadtest.probes.setup import seed_ratings

    rng = _random.Random(job.seed)
    low, high = SEED_MU

    def mu(i: int) -> float:
        if not spread:
            return rng.uniform(low, high)
        return low + SPREAD_MU * (i // job.table)

    ratings = [(p.player, p.name, mu(i)) for i, p in enumerate(players)]
    await seed_ratings(job.redis_url or "", ratings)


def msg_pack(msg: dict[str, Any]) -> bytes:
    """A msgpack frame, as the client library sends it."""
    return msgpack.packb(msg, use_bin_type=True)  # type: ignore[no-any-return]


def msg_unpack(data: bytes) -> Any:
    """A decoded msgpack frame, but an event's `view` only when it offers legal moves.

    The view is most of an event's bytes, and three seats of four only need to
    know that the event came: skipping it halves the load generator's decoding
    (19 -> 9 us an event), CPU the server's machine gets back. Such an event has
    ``"view": None``.
    """
    up = msgpack.Unpacker(raw=False)
    up.feed(data)
    try:
        size = up.read_map_header()
    except msgpack.UnpackValueError:  # not a map: decode it whole
        return msgpack.unpackb(data, raw=False)
    msg, view = {}, None
    for _ in range(size):
        key = up.unpack()
        if key == "view":
            start = up.tell()
            up.skip()
            view = (start, up.tell())
        else:
            msg[key] = up.unpack()
    if view is not None:
        start, end = view
        msg["view"] = msgpack.unpackb(data[start:end], raw=False) if msg.get("legal") else None
    return msg


def raise_nofile(wanted: int) -> tuple[int, int]:
    """Raise this process's open-file limit towards `wanted` (up to the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft, hard


def local_address(index: int) -> str:
    """The `index`-th loopback source address: 127.0.0.1, 127.0.0.2, ... 127.0.1.1, ..."""
    return f"127.0.{index // 250}.{index % 250 + 1}"


def client_sessions(job: Job) -> list[aiohttp.ClientSession]:
    """One client session per source address; each worker has addresses of its own."""
    out = []
    for k in range(max(1, job.source_ips)):
        first = job.worker * job.source_ips
        local = (local_address(first + k), 0) if job.source_ips else None
        conn = aiohttp.TCPConnector(limit=0, local_addr=local, force_close=False)
        out.append(aiohttp.ClientSession(connector=conn))
    return out


async def _connect_all(run: Run, players: list[Player]) -> list[Player]:
    """Connect every player, a few at a time; return those that said hello."""
    gate = asyncio.Semaphore(CONNECT_AT_ONCE)

    async def one(p: Player) -> Player | None:
        async with gate:
            try:
                await p.connect()
                if run.job.mode not in ("games", "storm"):
                    p.pump()  # the others read in `Player.play`
                run.tally.connected += 1
                return p
            except Exception as exc:  # counted, not fatal: the report shows how many
                run.tally.errors[f"connect: {type(exc).__name__}"] += 1
                await p.close()
                return None

    done = await asyncio.gather(*(one(p) for p in players))
    return [p for p in done if p is not None]


async def run_job(job: Job, ready: Any = None, go: Any = None, progress: Any = None) -> Tally:
    """Run one job in this event loop.

    `ready()` is called once the sockets are open and `await go()` returns the
    start time (the parent's barrier); `progress` (4 shared ints) is kept at
    [moves, games, connected, seated].
    """
    raise_nofile(job.players + 256)
    sessions = client_sessions(job)
    run = Run(job, time.monotonic())
    kind: type[Player] = Player
    if job.mode == "storm":
        from moose_loadtest.storm import StormPlayer  # it builds on this module

        kind = StormPlayer
    players = [kind(run, i, sessions[i % len(sessions)]) for i in range(job.players)]
    reporter = asyncio.create_task(_report(lambda: run, progress))
    try:
        players = await _connect_all(run, players)
        if job.mode == "matchmaking" and job.redis_url:
            await _seed_ratings(job, players)
        elif job.spread and job.redis_url:
            await _seed_ratings(job, players, spread=True)
        if ready is not None:
            ready()
        start = await go() if go is not None else time.monotonic()
        run = _restart(run, start, players)
        if job.mode == "connections":
            await _idle(run, players)
        elif job.mode == "matchmaking":
            await _matchmaking(run, players)
        else:
            await _games(run, players)
            for p in players:
                p.report()
    finally:
        reporter.cancel()
        await asyncio.gather(*(p.close() for p in players))
        for s in sessions:
            await s.close()
    return run.tally


async def _report(current: Any, progress: Any) -> None:
    """Copy the counters into the shared array a few times a second."""
    if progress is None:
        return
    while True:
        t = current().tally
        progress[0], progress[1] = t.moves_total, len(t.games)
        progress[2], progress[3] = t.connected, len(t.match_ms)
        await asyncio.sleep(0.2)


def _restart(old: Run, start: float, players: list[Player]) -> Run:
    """The run with its clock started at `start` (after the connections were made)."""
    run = Run(old.job, start)
    run.tally.connected, run.tally.connect_ms = old.tally.connected, old.tally.connect_ms
    run.tally.errors = old.tally.errors
    for p in players:
        p.run = run
    return run


async def _games(run: Run, players: list[Player]) -> None:
    """Play until the window ends, then let running games finish within `drain`."""
    # Spread over instances: the runs of players seated together (`_seed_ratings`)
    # queue one after another, each run's tickets side by side in the queue, which
    # past its first tickets seats the oldest together whatever their ratings.
    stagger = RUN_STAGGER if run.job.spread else 0.0
    tasks = [asyncio.create_task(p.play(stagger * (p.index // run.job.table))) for p in players]
    stop_at = run.window[1]
    await asyncio.sleep(max(0.0, stop_at - time.monotonic()))
    run.queueing = False
    run.pacer.rate = 0  # finish quickly: the drain is not measured
    for p in players:
        if not p.seats:  # in the queue, or seated with the `match` still on its way
            with contextlib.suppress(ConnectionError, RuntimeError):
                await p._send({"type": "leave_queue", "id": LEAVE_ID})
    _, late = await asyncio.wait(tasks, timeout=run.job.drain)
    for task in late:
        task.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    for r in results:
        if isinstance(r, Exception) and not isinstance(r, asyncio.CancelledError):
            run.tally.errors[f"client: {type(r).__name__}"] += 1
    if late and run.job.mode != "storm":  # a storm's games at a human pace outlast it
        run.tally.errors["unfinished at drain"] += len(late)
        if os.environ.get("MOOSE_LOADTEST_DEBUG"):
            for p in players:
                if p.seats:
                    print("unfinished:", p.name, p.seats, p.last, file=sys.stderr)


async def _idle(run: Run, players: list[Player]) -> None:
    """Hold the sockets for `hold` seconds, reading (which answers the server's pings) as
    any client does; a socket the server closes meanwhile is counted."""

    async def read(p: Player) -> None:
        assert p.ws is not None
        while True:  # a ping is answered inside receive()
            msg = await p.ws.receive()
            if msg.type in (
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSMsgType.CLOSED,
                aiohttp.WSMsgType.ERROR,
            ):
                run.tally.errors["closed while idle"] += 1
                return

    readers = [asyncio.create_task(read(p)) for p in players]
    await asyncio.sleep(run.job.hold)
    for task in readers:
        task.cancel()
    await asyncio.gather(*readers, return_exceptions=True)


async def _matchmaking(run: Run, players: list[Player]) -> None:
    """Everyone queues at once; wait until every one of them has a `match`."""
    run.queueing = False

    async def seated(p: Player) -> None:
        await p.queue()
        while True:
            msg = await p._receive()
            if msg is None:
                run.tally.errors["closed"] += 1
                return
            if msg["type"] == "match":
                run.tally.match_ms.append((time.monotonic() - run.start) * 1000)
                ratings = [r["rating"] for r in msg.get("ratings") or [] if r]
                run.tally.tables[msg["game"]] = ratings
                return
            if msg["type"] == "error":
                run.tally.errors[msg.get("code", "?")] += 1
                return

    tasks = [asyncio.create_task(seated(p)) for p in players]
    _, late = await asyncio.wait(tasks, timeout=run.job.duration)
    for task in late:
        task.cancel()
    for r in await asyncio.gather(*tasks, return_exceptions=True):
        if isinstance(r, Exception):
            run.tally.errors[f"client: {type(r).__name__}: {r}"[:120]] += 1
    if late:
        run.tally.errors["not seated in time"] += len(late)
