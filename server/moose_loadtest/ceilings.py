"""The socket ceiling `moose loadtest` compares the server with, on the same machine.

`echo_app()` is a bare aiohttp WebSocket server that speaks just enough of
PROTOCOL.md for the load-test players (hello, queue, move): it seats players at
once and answers each move with `moved` plus an `event` to every seat, built
from real views, but with no Redis and no rules. The same `players.Player`s
drive it with the same concurrency. It runs in its own process:
``python -m moose_loadtest.ceilings echo PORT [TABLE]``.

The other ceiling, of storage, runs the server's own commit script on its Redis:
it measures the server from inside, so it lives with the server
(`moose_server.play.ceiling`); `phases.storage_ceiling` runs it when that
package is installed.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import msgpack
from aiohttp import WSMsgType, web

from moose import bots, rules
from moose.protocol import PROTOCOL_VERSION
from moose_loadtest.crowd import msg_pack as pack

__all__ = ["GAME_MOVES", "echo_app"]

GAME_MOVES = 52  # moves of an average 4-player game of greedy bots (measured)


def _sample(players: int) -> tuple[rules.State, list[dict[str, Any]]]:
    """A game of greedy bots a third of the way through, and the moves that led there."""
    return bots.play_game(
        [bots.make_bot("greedy", 7)] * players, seed=7, stop_after=GAME_MOVES // 3
    )


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
            msg = {
                "type": "event",
                "game": game.id,
                "seq": game.seq,
                "event": event,
                "view": view,
                "legal": self.legal[game.turn] if mine else None,
                "deadline": None,
                "server_time": int(time.time() * 1000),
            }
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
            await ws.send_bytes(
                pack(
                    {
                        "type": "welcome",
                        "id": mid,
                        "protocol": PROTOCOL_VERSION,
                        "player": f"p_{next(echo.ids)}",
                        "name": msg.get("name"),
                        "token": "-",
                        "server_time": 0,
                        "games": [],
                    }
                )
            )
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
                await ws.send_bytes(
                    pack(
                        {
                            "type": "match",
                            "game": game.id,
                            "seat": seat,
                            "players": echo.table,
                            "names": names,
                        }
                    )
                )
        await echo.event(
            game, {"kind": "start", "players": echo.table, "dealer": 0, "names": names}
        )


async def _echo_move(
    echo: _Echo, ws: web.WebSocketResponse, msg: dict[str, Any], games: dict[str, _EchoGame]
) -> None:
    game = games.get(msg.get("game", ""))
    if game is None or game.seats[game.turn] is not ws:
        await ws.send_bytes(
            pack(
                {
                    "type": "error",
                    "id": msg.get("id"),
                    "code": "not_your_turn",
                    "message": "not your turn",
                }
            )
        )
        return
    game.seq += 1
    await ws.send_bytes(pack({"type": "moved", "id": msg["id"], "game": game.id, "seq": game.seq}))
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


def main(argv: list[str]) -> int:
    """``echo PORT [TABLE]``: serve the socket ceiling until stopped."""
    table = int(argv[2]) if len(argv) > 2 else 4
    web.run_app(
        echo_app(table), host="127.0.0.1", port=int(argv[1]), print=None, handle_signals=True
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
