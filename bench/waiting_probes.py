"""The probes of bench/bench_waiting_scale.py, and the one real game its clones copy.

Raw protocol clients (JSON frames, bench/bench_following_flood.py's `Sock`):

- `template_game`: two guests play a correspondence table's first moves and
  leave it waiting for a person's move (the game the clones copy);
- `Mover`: a guest's real-time game against a server bot; `move` times one move
  from `move` sent to its `moved` answer (a new game when one ends);
- `lobby`: the same guest's `my_games` and `games`, each answer timed;
- `tick`: the deadline loop's claim of every bucket (claim.lua, one batch, as
  timers.py sends it), timed. It claims at most 0 entries, so that it never takes
  a deadline from the server (a bot's safety deadline), and takes no gap for an
  outage: with nothing due it costs what an idle poll of the server costs.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bench_following_flood import Sock, connect

from moose import bots
from moose_server.storage.gateway import Gateway
from moose_server.storage.scripts import ClaimCall
from moose_server.storage.store import Store

Message = dict[str, Any]
NEVER_MS = 10**12  # an outage threshold no gap reaches


def _turn(msg: Message | None, seat: int, acted: int) -> bool:
    """Whether the event `msg` asks `seat` for a move (one after seq `acted`, where the
    seat moved last: its next turn's event may come before the `moved` answer)."""
    return bool(msg and msg["seq"] > acted and msg.get("legal") and msg["view"]["to_act"] == seat)


def _drain(sock: Sock, game: str, last: Message | None) -> tuple[Message | None, bool]:
    """The last pushed event of `game` so far (or `last`), and whether the game is over."""
    over = False
    while not sock.pushed.empty():
        msg = sock.pushed.get_nowait()
        if msg.get("type") == "event" and msg.get("game") == game:
            last, over = msg, over or bool(msg["view"]["over"])
    return last, over


async def template_game(session: Any, url: str, moves: int, days: int) -> tuple[str, list[Sock]]:
    """A correspondence table of two guests, `moves` moves played (fewer if the game
    would end), left waiting for a person's move: its id, and the seats' sockets."""
    host = await connect(session, url, "host", "192.0.2.10")
    guest = await connect(session, url, "guest", "192.0.2.11")
    table = await host.request("create_table", players=2, days=days)
    await guest.request("join_table", code=table["code"])
    started = await host.request("start_table", code=table["code"])
    assert started["type"] == "table", started
    socks, seats, game = [host, guest], [-1, -1], ""
    for i, sock in enumerate(socks):
        while (msg := await asyncio.wait_for(sock.pushed.get(), 30))["type"] != "match":
            pass
        game, seats[i] = msg["game"], msg["seat"]
    bot, last, acted, made = bots.make_bot("greedy", 1), [None, None], [0, 0], 0
    deadline = time.monotonic() + 60
    while made < moves and time.monotonic() < deadline:
        for i, sock in enumerate(socks):
            last[i], over = _drain(sock, game, last[i])
            if over:
                raise RuntimeError("the template game ended: ask for fewer moves")
            msg = last[i]
            if msg is not None and _turn(msg, seats[i], acted[i]):
                move = bot.choose(msg["view"], msg["legal"])
                answer = await sock.request("move", game=game, move=move, seq=msg["seq"])
                made += answer["type"] == "moved"
                acted[i] = msg["seq"]
        await asyncio.sleep(0.005)
    return game, socks


class Mover:
    """A guest's real-time games against a server bot, one move of theirs at a time."""

    def __init__(self, sock: Sock) -> None:
        self.sock = sock
        self.bot = bots.make_bot("greedy", 2)
        self.game, self.seat, self.last, self.acted = "", -1, None, 0
        self.games = 0  # games started

    async def _new_game(self) -> None:
        table = await self.sock.request("create_table", players=2)
        await self.sock.request("add_bot", code=table["code"], bot="greedy")
        started = await self.sock.request("start_table", code=table["code"])
        if started["type"] != "table":
            raise RuntimeError(f"the probe's table did not start: {started}")
        while (msg := await asyncio.wait_for(self.sock.pushed.get(), 30))["type"] != "match":
            pass
        self.game, self.seat, self.last, self.acted = msg["game"], msg["seat"], None, 0
        self.games += 1

    async def move(self) -> float:
        """One move of the guest's (a new game first when there is none): ms to `moved`."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if not self.game:
                await self._new_game()
            self.last, over = _drain(self.sock, self.game, self.last)
            if over:
                self.game = ""
                continue
            msg = self.last
            if msg is None or not _turn(msg, self.seat, self.acted):
                await asyncio.sleep(0.002)
                continue
            move = self.bot.choose(msg["view"], msg["legal"])
            start = time.perf_counter()
            answer = await self.sock.request("move", game=self.game, move=move, seq=msg["seq"])
            took = (time.perf_counter() - start) * 1000
            self.acted = msg["seq"]
            if answer["type"] == "moved":
                return took
            if answer.get("code") == "rate_limited":  # not ours: this move again, later
                self.acted = 0
                await asyncio.sleep(answer["retry_after"] / 1000)
        raise RuntimeError(f"no turn of the guest's within 30 s: {self.last}")


async def lobby(sock: Sock) -> tuple[float, float, int]:
    """ms of `my_games` and of `games` answered, and how many games `my_games` listed."""
    start = time.perf_counter()
    mine = await sock.request("my_games")
    middle = time.perf_counter()
    listed = await sock.request("games")
    end = time.perf_counter()
    assert mine["type"] == "my_games" and listed["type"] == "game_list", (mine, listed)
    return (middle - start) * 1000, (end - middle) * 1000, len(mine["games"])


async def tick(store: Store, redis: Gateway, lease_ms: int) -> float:
    """ms of one claim of every bucket in one batch (claiming nothing)."""
    calls = [ClaimCall(b, lease_ms, 0, NEVER_MS, 5000) for b in range(store.buckets)]
    start = time.perf_counter()
    await redis.all([redis.run(c, *c.build()) for c in calls])
    return (time.perf_counter() - start) * 1000
