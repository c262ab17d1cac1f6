"""The two ceilings `moose loadtest` compares the server with, on the same machine.

- **Socket ceiling**: `echo_app()`, a bare aiohttp WebSocket server that speaks
  just enough of PROTOCOL.md for the load-test players (hello, queue, move):
  it seats players at once and answers each move with `moved` plus an `event`
  to every seat, built from real views, but with no Redis and no rules. The
  same `players.Player`s drive it with the same concurrency.
- **Storage ceiling**: `storage_ceiling()`, a bare redis-py asyncio client doing
  per move exactly what the server does in Redis: one HMGET of the game hash (and
  an HGET of its move ids, in the same round trip) and
  one EVALSHA of the server's own commit script with a payload of real size
  (a state snapshot where the server keeps one),
  one loop per concurrent game, and one pub/sub subscriber draining the wake-ups
  the script publishes (as every server instance has).

Both run in their own process: ``python -m moose_loadtest.ceilings echo PORT`` and
``python -m moose_loadtest.ceilings storage URL GAMES WARMUP DURATION`` (prints JSON).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgpack
from aiohttp import WSMsgType, web

from moose import bots, rules
from moose.protocol import PROTOCOL_VERSION
from moose_loadtest.players import msg_pack as pack

__all__ = ["GAME_MOVES", "echo_app", "storage_ceiling"]

GAME_MOVES = 52  # moves of an average 4-player game of greedy bots (measured)
POOL = 64  # the server's default redis_connections
CHANNEL = b"moose:loadtest"


def _sample(players: int) -> tuple[rules.State, list[dict[str, Any]]]:
    """A game a third of the way through, and the moves that led there."""
    state = rules.new_game(players, seed=7)
    moves: list[dict[str, Any]] = []
    bot = bots.make_bot("greedy", 7)
    while len(moves) < GAME_MOVES // 3 and not state.over:
        seat = rules.to_act(state)
        move = bot.choose(rules.view(state, seat), rules.legal_moves(state))
        state = rules.apply(state, move)
        moves.append(move)
    return state, moves


# -- the socket ceiling ---------------------------------------------------------


@dataclass
class _EchoGame:
    """A fake game: seats (sockets) and a turn that goes round."""

    id: str
    seats: list[web.WebSocketResponse]
    seq: int = 1
    turn: int = 0


@dataclass
class _Echo:
    """State of the echo server: the waiting sockets and the running fake games."""

    table: int = 4
    waiting: list[web.WebSocketResponse] = field(default_factory=list)
    ids: Any = field(default_factory=lambda: itertools.count(1))
    views: list[list[dict[str, Any]]] = field(default_factory=list)  # [to_act][seat]
    legal: list[list[dict[str, Any]]] = field(default_factory=list)  # [to_act]

    def prepare(self, n: int) -> None:
        """Real views and legal moves of a mid-game position, one set per seat to act."""
        self.table = n
        state, _ = _sample(n)
        self.views, self.legal = [], []
        for t in range(n):
            s = state.copy()
            s.turn, s.pending = t, None
            self.views.append([rules.view(s, seat) for seat in range(n)])
            self.legal.append(rules.legal_moves(s))

    async def event(self, game: _EchoGame, event: dict[str, Any], over: bool = False) -> None:
        """One `event` to every seat, each with its own view."""
        for seat, ws in enumerate(game.seats):
            view = dict(self.views[game.turn][seat])
            mine = seat == game.turn and not over
            if over:
                view["over"] = True
            msg = {"type": "event", "game": game.id, "seq": game.seq, "event": event,
                   "view": view, "legal": self.legal[game.turn] if mine else None,
                   "deadline": None, "server_time": int(time.time() * 1000)}  # fmt: skip
            with contextlib.suppress(ConnectionError, RuntimeError):
                await ws.send_bytes(pack(msg))


async def _echo_socket(request: web.Request) -> web.WebSocketResponse:
    echo: _Echo = request.app["echo"]
    ws = web.WebSocketResponse(max_msg_size=64 * 1024, compress=False)
    await ws.prepare(request)
    async for raw in ws:
        if raw.type != WSMsgType.BINARY:
            continue
        msg = msgpack.unpackb(raw.data, raw=False)
        kind, mid = msg.get("type"), msg.get("id")
        if kind == "hello":
            await ws.send_bytes(pack({"type": "welcome", "id": mid, "protocol": PROTOCOL_VERSION,
                                      "player": f"p_{next(echo.ids)}", "name": msg.get("name"),
                                      "token": "-", "server_time": 0, "games": []}))  # fmt: skip
        elif kind == "queue":
            await ws.send_bytes(pack({"type": "queued", "id": mid, "server_time": 0}))
            echo.waiting.append(ws)
            await _form(echo, request.app["games"])
        elif kind == "move":
            await _echo_move(echo, ws, msg, request.app["games"])
    with contextlib.suppress(ValueError):
        echo.waiting.remove(ws)
    return ws


async def _form(echo: _Echo, games: dict[str, _EchoGame]) -> None:
    while len(echo.waiting) >= echo.table:
        seats, echo.waiting = echo.waiting[: echo.table], echo.waiting[echo.table :]
        game = _EchoGame(f"g_{next(echo.ids)}", seats)
        games[game.id] = game
        names = [f"p{k}" for k in range(echo.table)]
        for seat, ws in enumerate(seats):
            with contextlib.suppress(ConnectionError, RuntimeError):
                await ws.send_bytes(pack({"type": "match", "game": game.id, "seat": seat,
                                          "players": echo.table, "names": names}))  # fmt: skip
        await echo.event(game, {"kind": "start", "players": echo.table, "dealer": 0,
                                "names": names})  # fmt: skip


async def _echo_move(
    echo: _Echo, ws: web.WebSocketResponse, msg: dict[str, Any], games: dict[str, _EchoGame]
) -> None:
    game = games.get(msg.get("game", ""))
    if game is None or game.seats[game.turn] is not ws:
        await ws.send_bytes(pack({"type": "error", "id": msg.get("id"), "code": "not_your_turn",
                                  "message": "not your turn"}))  # fmt: skip
        return
    game.seq += 1
    await ws.send_bytes(pack({"type": "moved", "id": msg["id"], "game": game.id,
                              "seq": game.seq}))  # fmt: skip
    event = {"kind": "move", "seat": game.turn, "move": msg["move"], "auto": None}
    game.turn = (game.turn + 1) % echo.table
    if game.seq > GAME_MOVES:
        # The last move's event ends the game as the server's `over` event does.
        over = {"kind": "over", "scores": [0] * echo.table, "winners": [0]}
        await echo.event(game, over, over=True)
        del games[game.id]
    else:
        await echo.event(game, event)


def echo_app(table: int = 4) -> web.Application:
    """The bare WebSocket server of the socket ceiling."""
    app = web.Application()
    echo = _Echo()
    echo.prepare(table)
    app["echo"], app["games"] = echo, {}
    app.router.add_get("/ws", _echo_socket)
    app.router.add_get("/readyz", _ready)
    return app


async def _ready(request: web.Request) -> web.Response:
    return web.json_response({"ready": True})


# -- the storage ceiling ----------------------------------------------------------


def _payload(players: int) -> tuple[bytes, bytes, bytes]:
    """Blobs the size of a real commit: game data, one move event, a state snapshot."""
    state, moves = _sample(players)
    data = {"state": state.to_dict(), "players": [f"p_{k:010x}" for k in range(players)],
            "names": [f"player {k}" for k in range(players)], "bots": [None] * players,
            "away": [False] * players, "misses": [0] * players, "moves": moves}  # fmt: skip
    event = {"kind": "move", "seat": 0, "move": moves[-1], "auto": None}
    snapshot = {**state.to_dict(), "auto": False}
    return pack(data), pack(event), pack(snapshot)


async def storage_ceiling(
    url: str, games: int, warmup: float, duration: float, players: int = 4
) -> dict[str, Any]:
    """Moves per second of `games` loops doing HMGET + commit EVALSHA, like the server."""
    from importlib import resources

    import redis.asyncio as aioredis
    from redis.exceptions import RedisError

    from moose_server.play.streams import keeps_snapshot

    script = resources.files("moose_server.storage").joinpath("lua", "commit.lua").read_text()
    # The server's pool holds 64 connections; at least one per loop here, because
    # loops that issue their next command at once starve the pool's other waiters
    # (redis-py's BlockingConnectionPool is not FIFO), which left 136 of 200 loops
    # idle and measured 64 concurrent games instead of 200.
    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=max(POOL, games), timeout=10
    )
    redis = aioredis.Redis(connection_pool=pool)
    listener = aioredis.Redis.from_url(url)
    commit = redis.register_script(script)
    data, event, snapshot = _payload(players)
    start = time.monotonic()
    window = (start + warmup, start + warmup + duration)
    counts, lat = [0], []
    errors: Counter[str] = Counter()
    made: list[str] = []

    async def game_loop(i: int) -> None:
        for generation in itertools.count():
            gid = f"lt_{i}_{generation}"
            keys = [f"{{lt}}:game:{gid}", f"{{lt}}:events:{gid}", "{lt}:deadlines",
                    "{lt}:unrated", f"{{lt}}:record:{gid}", f"{{lt}}:moves:{gid}"]  # fmt: skip
            made.extend([keys[0], keys[1], keys[5]])
            for version in range(GAME_MOVES):
                t0 = time.monotonic()
                if t0 >= window[1]:
                    return
                field = f"m:p_{i}:{generation}-{version}"
                try:
                    async with redis.pipeline(transaction=False) as pipe:
                        pipe.hmget(keys[0], ["v", "data", "dl"])
                        pipe.hget(keys[5], field)
                        await pipe.execute()
                    # A snapshot where the server keeps one (games.keeps_snapshot).
                    kept = snapshot if keeps_snapshot(version + 1) else b""
                    await commit(keys=keys, args=[version, field, data, 30_000, gid, CHANNEL,
                                                  0, 0, 0, b"", 0, 1, event, kept])  # fmt: skip
                except RedisError as exc:  # the pool's wait timed out: count it, go on
                    errors[type(exc).__name__] += 1
                    continue
                if t0 >= window[0]:
                    counts[0] += 1
                    lat.append((time.monotonic() - t0) * 1000)

    async def drain() -> None:
        async with listener.pubsub() as ps:
            await ps.subscribe(CHANNEL)
            async for _ in ps.listen():
                pass

    drainer = asyncio.create_task(drain())
    try:
        await asyncio.gather(*(game_loop(i) for i in range(games)))
    finally:
        drainer.cancel()
        await asyncio.gather(drainer, return_exceptions=True)
        for s in range(0, len(made), 500):
            await redis.delete(*made[s : s + 500])
        await redis.delete("{lt}:deadlines")
        await redis.aclose()
        await listener.aclose()
    lat.sort()
    pct = {f"p{q}": lat[min(len(lat) - 1, int(len(lat) * q / 100))] if lat else None
           for q in (50, 95, 99)}  # fmt: skip
    return {"moves_per_second": counts[0] / duration, "latency_ms": pct,
            "errors": dict(errors),
            "bytes": {"data": len(data), "event": len(event), "state": len(snapshot)}}  # fmt: skip


def main(argv: list[str]) -> int:
    """``echo PORT [TABLE]`` or ``storage URL GAMES WARMUP DURATION [TABLE]``."""
    if argv[0] == "echo":
        table = int(argv[2]) if len(argv) > 2 else 4
        web.run_app(echo_app(table), host="127.0.0.1", port=int(argv[1]), print=None,
                    handle_signals=True)  # fmt: skip
        return 0
    url, games, warmup, duration = argv[1], int(argv[2]), float(argv[3]), float(argv[4])
    table = int(argv[5]) if len(argv) > 5 else 4
    print(json.dumps(asyncio.run(storage_ceiling(url, games, warmup, duration, table))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
