"""Bots that play queue games on the client library's public API, and what they did.

`Bot` queues for 2-player games, plays each with a greedy brain, sends a move
again with its move id while the server says `unavailable`, and takes a move
refused `stale_seq` (or `not_your_turn`) as past: the events it missed come
(PROTOCOL.md) and it answers the last. `Fleet` keeps what every bot was told
and every move acknowledged, for the fault tests to judge (test_lost_writes,
test_cluster_failover).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from moose.bots import make_bot
from moose.client import Client, ServerError, is_final

__all__ = ["BOTS", "ENV", "FLAGS", "Ack", "Bot", "Fleet"]

Message = dict[str, Any]

# The servers a fleet plays on: quick matches and polls, short turns.
BOTS = 12
TURN = "3"  # seconds: a turn, and a trap's answer
FLAGS = (
    "--turn-time",
    TURN,
    "--answer-time",
    TURN,
    "--match-wait",
    "0.2",
    "--poll-interval",
    "0.05",
    "--drain-grace",
    "1",
)
# Finished games keep their events and move ids past the test's end.
ENV = {"MOOSE_MATCH_INTERVAL": "0.05", "MOOSE_INSTANCE_TTL": "3", "MOOSE_GAME_GRACE": "600"}


@dataclass(frozen=True)
class Ack:
    """A move the server acknowledged (`moved`)."""

    bot: str
    player: str
    game: str
    seat: int
    seq: int  # the seq of its event, as `moved` said
    move: Message
    move_id: str
    at: float  # time.time() when `moved` came


@dataclass
class Fleet:
    """What every bot did and was told."""

    acked: list[Ack] = field(default_factory=list)
    seated: dict[str, dict[str, int]] = field(default_factory=dict)  # game -> bot -> seat
    gone: set[tuple[str, str]] = field(default_factory=set)  # (bot, game) told `gone`
    ended: set[tuple[str, str]] = field(default_factory=set)  # (bot, game) saw its end
    stopping: bool = False
    unavailable: int = 0  # moves the server answered `unavailable` (sent again)
    refused: int = 0  # moves refused as behind the game (`stale_seq`, `not_your_turn`)
    trace: list[tuple[float, str, str, str]] = field(
        default_factory=list
    )  # (time, bot, game, what)

    def note(self, bot: str, game: str, what: str) -> None:
        """Keep what a bot was told or did, for a failure's message."""
        self.trace.append((time.time(), bot, game, what))

    def story(self, game: str) -> str:
        """What the bots of `game` were told and did, in order."""
        return "\n".join(f"{t:.3f} {bot} {what}" for t, bot, g, what in self.trace if g == game)


class Bot:
    """A greedy bot on the client library's public API: `events()` and `move`."""

    def __init__(self, client: Client, fleet: Fleet, seed: int, think: float = 0.05) -> None:
        self.client, self.fleet = client, fleet
        self.think = think  # seconds the bot takes over a move
        self.name = client.name or ""
        self.brain = make_bot("greedy", seed=seed)
        self.seats: dict[str, int] = {}  # game -> our seat
        self.playing: set[str] = set()  # games not ended, not gone
        self.moved: dict[str, int] = {}  # game -> seq of our last move's event
        self.ids = itertools.count(1)
        self.states: list[Message] = []
        self.waiting: Message | None = None  # an event of ours to answer once playing
        self.queued = False

    async def run(self) -> None:
        """Play queue games until the fleet stops, then finish the games under way."""
        playing = asyncio.create_task(self.play())
        try:
            while not (self.fleet.stopping and not self.playing and await self.left()):
                assert not playing.done(), playing.result()
                await asyncio.sleep(0.2)
        finally:
            playing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await playing

    async def left(self) -> bool:
        """Out of the queue: never queued, or left it (not just matched)."""
        if not self.queued:
            return True
        try:
            await self.client.leave_queue()
        except ServerError as exc:
            assert exc.code in ("not_queued", "unavailable"), exc
            return False  # matched: the `match` is on its way (or Redis lost the ticket)
        self.queued = False
        return True

    async def play(self) -> None:
        await self.queue()
        async for msg in self.client.events():
            game = msg.get("game")
            if msg["type"] == "match" and msg.get("seat") is not None:
                self.queued = False
                self.seats[game] = msg["seat"]
                self.playing.add(game)
                self.moved.pop(game, None)
                self.fleet.seated.setdefault(game, {})[self.name] = msg["seat"]
            elif msg["type"] == "gone" and game in self.seats:
                self.fleet.gone.add((self.name, game))
                await self.finished(game)
            elif msg["type"] == "event" and game in self.seats:
                await self.on_event(game, msg)

    async def on_event(self, game: str, msg: Message) -> None:
        if is_final(msg):
            self.fleet.ended.add((self.name, game))
            await self.finished(game)
            return
        self.playing.add(game)  # a game whose end Redis lost is played again
        self.fleet.note(self.name, game, f"event {msg['seq']} {msg['event']['kind']}")
        if msg["event"]["kind"] == "state":
            self.moved.pop(game, None)  # the game as it is now
        view, legal = msg["view"], msg.get("legal")
        if legal and view["to_act"] == self.seats[game] and msg["seq"] >= self.moved.get(game, 0):
            await asyncio.sleep(self.think)
            await self.move(game, msg["seq"], self.brain.choose(view, legal))

    async def move(self, game: str, seq: int, move: Message) -> None:
        move_id = f"{self.name}-{next(self.ids)}"
        for attempt in range(1, 100):
            self.fleet.note(self.name, game, f"move on {seq}")
            try:
                answer = await self.client.move(game, move, seq=seq, move_id=move_id)
            except ServerError as exc:
                self.fleet.note(self.name, game, f"refused: {exc.code}")
                if exc.code == "unavailable":  # Redis is down: the same move id again
                    self.fleet.unavailable += 1
                    await asyncio.sleep(min(0.5, 0.05 * attempt))
                    continue
                assert exc.code in ("stale_seq", "not_your_turn", "game_over", "no_such_game"), exc
                self.fleet.refused += exc.code in ("stale_seq", "not_your_turn")
                return
            self.moved[game] = answer["seq"]
            ack = Ack(
                self.name,
                self.client.player or "",
                game,
                self.seats[game],
                answer["seq"],
                move,
                move_id,
                time.time(),
            )
            self.fleet.acked.append(ack)
            return

    async def finished(self, game: str) -> None:
        self.playing.discard(game)
        if not self.playing and not self.fleet.stopping:
            await self.queue()

    async def queue(self) -> None:
        for attempt in range(1, 100):
            try:
                await self.client.queue(2, 2)
            except ServerError as exc:
                if exc.code == "already_queued":
                    self.queued = True
                    return
                assert exc.code == "unavailable", exc
                await asyncio.sleep(min(0.5, 0.05 * attempt))
                continue
            self.queued = True
            return
