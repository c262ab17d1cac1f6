"""Redis commands a game costs over its life, by phase and kind.

    python bench/bench_game_commands.py --games 20 --idle 25     # idle and connected rates
    python bench/bench_game_commands.py --games 40 --idle 10 --quiet   # clear game phases
    python bench/bench_game_commands.py --games 1 --idle 3 --monitor mon.txt  # who sends what

Starts a `moose serve` of its own (`moose_loadtest.spawned.Spawned`: its bundled
Redis in a temporary data folder, never another Redis), connects 4 x `--games`
players that speak PROTOCOL.md in msgpack, as `moose loadtest`'s do (guests,
greedy bots, public queue, tables of exactly 4), and reads INFO commandstats
between phases (a script's inner commands count one each, plus its EVALSHA),
after one warm-up game, unmeasured, that loads every script into Redis:

- idle: the empty server, per second;
- connected: the players connected and not queued, per second (renewals);
- start: queue, match, deal, start, until every game offers its first move;
- move: each game's first `--gate` player moves, per move (the moves of the
  window, the server's own commits included, divided by the player moves);
- end: the rest of every game to its end, its rating and results settling,
  less the rest's moves at the per-move figure, per game;
- close: every socket closed, per game.

Every phase but idle has the idle rate times its length taken off. The
periodic commands blur the phases: the deadline poller's rate changes under
load, and each connected player's presence is renewed every 20 s, which falls
in one phase or another. `--quiet` polls deadlines every 2 s (nothing in
these games waits for a deadline: bots move at once, the server plays its
seats at once) and renews presence every 20 min, for clear phases; a run
without it tells the idle and connected rates. What the start and end phases
cost per game, divided by the player moves of a game, is what they add to each
move besides the move itself.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import time
from collections import Counter
from typing import Any

import aiohttp
import redis.asyncio as aioredis

from moose.bots import make_bot
from moose.protocol import PROTOCOL_VERSION
from moose_loadtest.crowd import local_address, msg_pack, msg_unpack
from moose_loadtest.spawned import Spawned

SEATS = 4
QUIET_POLL = 2.0  # --quiet: seconds between deadline polls...
QUIET_PRESENCE = 3600  # ...and presence's lifetime (renewed every third of it)
MARKS: list[str] = []  # phases ended, for the MONITOR file
SETTLE = 1.5  # seconds for what a phase set going (results, wake-ups) to finish


class Bench:
    """The games' shared state: the move gate, who is over, how many moves went."""

    def __init__(self) -> None:
        self.gate = 0  # player moves a game may make for now
        self.changed = asyncio.Event()
        self.moves: Counter[str] = Counter()  # game -> player moves sent
        self.started: set[str] = set()  # games that offered a move
        self.over: set[str] = set()
        self.parked = 0  # players holding a move at the gate

    def raise_gate(self, gate: int) -> None:
        """Let every game make `gate` player moves in all."""
        self.gate, changed = gate, self.changed
        self.changed = asyncio.Event()
        changed.set()


class Player:
    """One socket: hello, queue once, play one game with a greedy bot."""

    def __init__(self, bench: Bench, index: int) -> None:
        self.bench = bench
        self.index = index
        # One source address a player, as players have (and as the loadtest spreads them).
        connector = aiohttp.TCPConnector(local_addr=(local_address(index), 0))
        self.session = aiohttp.ClientSession(connector=connector)
        self.bot = make_bot("greedy", index)
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.ids = itertools.count(1)
        self.game = ""
        self.seat = -1
        self.reader: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        """Open the socket and say hello."""
        self.ws = await self.session.ws_connect(self.bench_url, max_msg_size=0, compress=0)
        hello = {"type": "hello", "id": 0, "protocol": PROTOCOL_VERSION, "name": f"gc{self.index}"}
        await self.ws.send_bytes(msg_pack(hello))
        welcome = msg_unpack((await self.ws.receive()).data)
        assert welcome["type"] == "welcome", welcome
        self.reader = asyncio.create_task(self._read())

    bench_url = ""

    async def queue(self) -> None:
        """Ask for a table of exactly four."""
        assert self.ws is not None
        msg = {"type": "queue", "id": next(self.ids), "min_players": SEATS, "max_players": SEATS}
        await self.ws.send_bytes(msg_pack(msg))

    async def _read(self) -> None:
        assert self.ws is not None
        async for raw in self.ws:
            if raw.type != aiohttp.WSMsgType.BINARY:
                return
            msg = msg_unpack(raw.data)
            if msg["type"] == "match":
                self.game, self.seat = msg["game"], msg["seat"]
            elif msg["type"] == "event" and msg["game"] == self.game:
                await self._on_event(msg)
            elif msg["type"] == "error":
                print("error:", msg)

    async def _on_event(self, msg: dict[str, Any]) -> None:
        view, bench = msg["view"], self.bench
        if msg["event"].get("kind") == "over" or (view and view.get("over")):
            bench.over.add(self.game)
            return
        legal = msg.get("legal")
        if not legal or view.get("to_act") != self.seat:
            return
        bench.started.add(self.game)
        move = self.bot.choose(view, legal)
        while bench.moves[self.game] >= bench.gate:
            bench.parked += 1
            await bench.changed.wait()
            bench.parked -= 1
        bench.moves[self.game] += 1
        assert self.ws is not None
        await self.ws.send_bytes(
            msg_pack(
                {
                    "type": "move",
                    "id": next(self.ids),
                    "game": self.game,
                    "seq": msg["seq"],
                    "move": move,
                    "move_id": f"gc{self.index}-{msg['seq']}",
                }
            )
        )

    async def close(self) -> None:
        """Close the socket."""
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            self.reader.cancel()
        await self.session.close()


class Counts:
    """INFO commandstats deltas of our own Redis."""

    def __init__(self, url: str) -> None:
        self.redis = aioredis.Redis.from_url(url)
        self.last: dict[str, int] = {}
        self.at = 0.0

    async def _calls(self) -> dict[str, int]:
        stats = await self.redis.info("commandstats")
        return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}

    async def mark(self) -> None:
        """Start a phase."""
        self.last, self.at = await self._calls(), time.monotonic()

    async def delta(self) -> tuple[Counter[str], float]:
        """Commands since the mark (INFO left out) and seconds; marks anew."""
        now, t = await self._calls(), time.monotonic()
        diff = Counter({k: v - self.last.get(k, 0) for k, v in now.items()})
        diff.pop("info", None)
        diff.pop("echo", None)
        seconds = t - self.at
        self.last, self.at = await self._calls(), time.monotonic()
        self.last["info"] = now.get("info", 0)
        return +diff, seconds


def less(
    counts: Counter[str] | dict[str, float], rate: dict[str, float], seconds: float
) -> dict[str, float]:
    """`counts` less `rate` (per second) over `seconds`, each kind at least 0."""
    kinds = set(counts) | set(rate)
    out = {k: max(0.0, counts.get(k, 0) - rate.get(k, 0.0) * seconds) for k in kinds}
    return {k: v for k, v in out.items() if v > 0.05}


def scaled(counts: dict[str, float] | Counter[str], by: float) -> dict[str, float]:
    """Each count divided by `by`."""
    return {k: v / by for k, v in counts.items()}


def show(name: str, figures: dict[str, float], unit: str) -> None:
    """One phase's line: its total, then each kind, most first (and a mark in MONITOR)."""
    MARKS.append(name)
    total = sum(figures.values())
    kinds = " ".join(f"{k} {v:.3f}" for k, v in sorted(figures.items(), key=lambda kv: -kv[1]))
    print(f"{name:<10} {total:8.3f} {unit:<12} {kinds}")


async def until(test: Any, timeout: float, what: str) -> None:
    """Wait until `test()` holds."""
    deadline = time.monotonic() + timeout
    while not test():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.05)


async def warm_up(args: argparse.Namespace) -> None:
    """One game played through and its sockets closed, unmeasured: every script the
    server runs is then loaded in Redis (a first call is an EVALSHA refused and an EVAL)."""
    bench = Bench()
    bench.raise_gate(1 << 30)
    players = [Player(bench, i) for i in range(SEATS)]
    for p in players:
        await p.connect()
    for p in players:
        await p.queue()
    await until(lambda: len(bench.over) == 1, 120, "the warm-up game to end")
    await asyncio.sleep(args.settle)
    for p in players:
        await p.close()


async def measure(url: str, redis_url: str, args: argparse.Namespace) -> None:
    """Every phase, printed as it ends."""
    counts = Counts(redis_url)
    bench = Bench()
    Player.bench_url = url
    await warm_up(args)
    await asyncio.sleep(2.0)  # the server's first polls and renewals
    await counts.mark()
    await asyncio.sleep(args.idle)
    idle, secs = await counts.delta()
    rate = scaled(idle, secs)
    show("idle", rate, "/s")
    players = [Player(bench, SEATS + i) for i in range(SEATS * args.games)]
    for i in range(0, len(players), 32):
        await asyncio.gather(*(p.connect() for p in players[i : i + 32]))
    await asyncio.sleep(SETTLE)
    await counts.mark()
    await asyncio.sleep(args.idle)
    connected, secs = await counts.delta()
    show("connected", scaled(less(connected, rate, secs), secs * len(players)), "/s/player")
    for p in players:
        await p.queue()
    await until(lambda: bench.parked == args.games, 60, "games to start")
    await asyncio.sleep(SETTLE)
    raw, secs = await counts.delta()
    start = less(raw, rate, secs)
    show("start", scaled(start, args.games), "/game")
    bench.raise_gate(args.gate)
    await asyncio.sleep(0.5)  # the players held at the gate go on
    await until(lambda: bench.parked >= args.games - len(bench.over), 120, "the gate")
    await asyncio.sleep(SETTLE)
    window, secs = await counts.delta()
    gated = sum(bench.moves.values())
    ended_early = len(bench.over)
    per_move = scaled(less(window, rate, secs), gated)
    show("move", per_move, "/move")
    bench.raise_gate(1 << 30)
    await until(lambda: len(bench.over) == args.games, 300, "games to end")
    await asyncio.sleep(args.settle)
    raw, secs = await counts.delta()
    rest_moves = sum(bench.moves.values()) - gated
    moves_rest = {k: v * rest_moves for k, v in per_move.items()}
    end = less(Counter(less(raw, rate, secs)), scaled(moves_rest, 1.0), 1.0)
    show("end", scaled(end, args.games), "/game")
    for p in players:
        await p.close()
    await asyncio.sleep(SETTLE)
    raw, secs = await counts.delta()
    closed = less(raw, rate, secs)
    show("close", scaled(closed, args.games), "/game")
    moves = sum(bench.moves.values()) / args.games
    summary(args.games, moves, start, end, closed, per_move, ended_early)


Figures = dict[str, float]


def summary(
    games: int,
    moves: float,
    start: Figures,
    end: Figures,
    closed: Figures,
    per_move: Figures,
    ended_early: int,
) -> None:
    """What each game's start and end (and its players' sockets closing) add per move."""
    begin_end = (sum(start.values()) + sum(end.values())) / games
    close = sum(closed.values()) / games
    own = sum(per_move.values())
    print(f"player moves a game: {moves:.1f}; games ended inside the move window: {ended_early}")
    print(
        f"start+end per game: {begin_end:.1f} commands = {begin_end / moves:.2f} a move; "
        f"with the close: {begin_end + close:.1f} = {(begin_end + close) / moves:.2f} a move"
    )
    print(
        f"a move: {own:.2f} in the move window + {begin_end / moves:.2f} start/end "
        f"= {own + begin_end / moves:.2f}"
    )


def main() -> None:
    """Parse the flags, start the server, measure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="4-player games at once")
    parser.add_argument("--gate", type=int, default=16, help="player moves a game in the window")
    parser.add_argument("--idle", type=float, default=25.0, help="seconds of each idle window")
    parser.add_argument("--settle", type=float, default=4.0, help="seconds after the last end")
    parser.add_argument(
        "--quiet", action="store_true", help="a server with fewer periodic commands (docstring)"
    )
    parser.add_argument("--monitor", help="write every command Redis runs (MONITOR) here")
    args = parser.parse_args()
    serve = []
    if args.quiet:
        serve = ["--poll-interval", str(QUIET_POLL)]
        os.environ["MOOSE_PRESENCE_TTL"] = str(QUIET_PRESENCE)  # the server inherits it
    with Spawned(serve_args=serve) as server:
        quiet = f" --poll-interval {QUIET_POLL}, MOOSE_PRESENCE_TTL={QUIET_PRESENCE}"
        print(f"{args.games} games of 4 greedy bots; moose serve{quiet if args.quiet else ''}")
        asyncio.run(run(server.url, server.redis_url, args))


async def run(url: str, redis_url: str, args: argparse.Namespace) -> None:
    """`measure`, with MONITOR written to a file meanwhile if asked."""
    if not args.monitor:
        await measure(url, redis_url, args)
        return
    redis = aioredis.Redis.from_url(redis_url)

    async def watch() -> None:
        async with redis.monitor() as monitor:
            with open(args.monitor, "w") as out:
                async for cmd in monitor.listen():
                    while MARKS:
                        out.write(f"==== end of phase {MARKS.pop(0)}\n")
                    out.write(f"{cmd['time']:.6f} {cmd.get('client_type', '')} {cmd['command']}\n")

    task = asyncio.create_task(watch())
    try:
        await measure(url, redis_url, args)
    finally:
        task.cancel()


if __name__ == "__main__":
    main()
