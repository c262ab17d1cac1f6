"""One WebSocket: read loop -> dispatch -> bounded send queue with one writer task.

The reader decodes and checks each frame, applies the rate limit and runs one
small handler per message type (`handlers.py`). Everything sent goes through a
bounded queue drained by a single writer, so a client that reads too slowly is
dropped (close 1013) instead of stalling the hub. Client mistakes become `error`
messages with a stable code and the socket stays open; Redis trouble becomes
`unavailable`; anything else is logged and answered `internal`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from aiohttp import WSMsgType, web
from redis.exceptions import RedisError

from moose import protocol
from moose.protocol import ProtocolError
from moose_server.errors import Refusal
from moose_server.handlers import HANDLERS
from moose_server.hub import Sub
from moose_server.matchmaking import MatchError
from moose_server.services import Services
from moose_server.tasks import cancel_and_wait

__all__ = ["SERVICES", "Connection", "websocket"]

log = logging.getLogger(__name__)

SERVICES = web.AppKey("services", Services)
CLOSE_FLOOD = 1008
CLOSE_SLOW = 1013
CLOSE_RESTART = 1012
_Refusal = (ProtocolError, Refusal)


class Connection:
    """One client's socket: its player, the games it follows, its send queue."""

    def __init__(self, ws: web.WebSocketResponse, services: Services) -> None:
        self.ws = ws
        self.services = services
        settings = services.settings
        self.binary = True
        self.player: str | None = None
        self.name = ""
        self.subs: dict[str, Sub] = {}
        self.away: set[str] = set()  # games where our seat is away: back on any message
        self._queue: asyncio.Queue[bytes | str | tuple[int, str]] = asyncio.Queue(
            settings.send_queue
        )
        self._allowance = float(settings.burst)
        self._checked = asyncio.get_running_loop().time()
        self._strikes = 0
        self._closing = False
        self._tasks: list[asyncio.Task[Any]] = []

    async def run(self) -> None:
        """Serve the socket until it closes; then forget it everywhere."""
        self._tasks.append(asyncio.create_task(self._write_loop()))
        self.services.connections.add(self)
        try:
            async for raw in self.ws:
                if self._closing:
                    continue  # draining until the close handshake ends the loop
                if raw.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                    await self._frame(raw.data)
                elif raw.type == WSMsgType.ERROR:
                    break
        finally:
            await self._cleanup()

    async def _cleanup(self) -> None:
        s = self.services
        log.info(
            "disconnect %s (close code %s)",
            self.player or "before hello",
            self.ws.close_code,
            extra={"event": "disconnect", "player": self.player},
        )
        s.connections.discard(self)
        s.hub.drop(self)
        await cancel_and_wait(self._tasks)
        if self.player is not None and not s.hub.player_peers(self.player):
            with contextlib.suppress(RedisError, OSError, MatchError):
                await s.matchmaker.leave(self.player)

    # -- reading ------------------------------------------------------------------

    async def _frame(self, data: bytes | str) -> None:
        if self.player is None:
            self.binary = isinstance(data, bytes)  # answers follow the hello's encoding
        if not self._allow():
            self._limited(data)
            return
        msg_id = None
        msg = None
        try:
            msg = protocol.decode(data)
            msg_id = protocol.request_id(msg)
            mtype = protocol.check(msg)
            answer = await self._dispatch(mtype, msg)
        except _Refusal as exc:
            self.send_error(exc.code, exc.message, msg_id, _game_of(msg))
            return
        except (RedisError, OSError) as exc:
            log.warning("storage unavailable: %s", exc,
                        extra={"event": "redis_error", "player": self.player})  # fmt: skip
            self.send_error("unavailable", "the server cannot reach its storage; try again", msg_id)
            return
        except Exception:
            log.exception("request failed", extra={
                "event": "internal_error", "player": self.player, "game": _game_of(msg),
            })  # fmt: skip
            self.send_error("internal", "internal error (logged)", msg_id)
            return
        if answer is not None:
            if msg_id is not None:
                answer["id"] = msg_id
            self.send(answer)

    async def _dispatch(self, mtype: str, msg: dict[str, Any]) -> dict[str, Any] | None:
        if self.player is None and mtype != "hello":
            raise ProtocolError("hello_required", "say hello first")
        if self.player is not None and mtype == "hello":
            raise ProtocolError("already_hello", "this socket has said hello already")
        if self.away:
            await self._come_back()
        return await HANDLERS[mtype](self, msg)

    async def _come_back(self) -> None:
        """The player sent something: every seat of theirs that was away is back."""
        assert self.player is not None
        for game in list(self.away):
            self.away.discard(game)
            await self.services.games.back(game, self.player)

    def _allow(self) -> bool:
        """Token bucket: `rate` messages a second with bursts of `burst`."""
        settings = self.services.settings
        now = asyncio.get_running_loop().time()
        elapsed, self._checked = now - self._checked, now
        self._allowance = min(float(settings.burst), self._allowance + elapsed * settings.rate)
        if self._allowance >= 1:
            self._allowance -= 1
            self._strikes = 0
            return True
        self._strikes += 1
        return False

    def _limited(self, data: bytes | str) -> None:
        msg_id = None
        with contextlib.suppress(ProtocolError):  # a refused frame still gets its id back
            msg_id = protocol.request_id(protocol.decode(data))
        self.send_error("rate_limited", "too many messages; slow down", msg_id)
        if self._strikes >= self.services.settings.rate_strikes:
            log.info("closing a flooding socket of %s", self.player,
                     extra={"event": "flood", "player": self.player})  # fmt: skip
            self.close(CLOSE_FLOOD, "flooding")

    # -- writing ------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """Queue a message; a client whose queue is full is dropped."""
        if self._closing:
            return
        frame = protocol.encode(message, binary=self.binary)
        try:
            self._queue.put_nowait(frame)
        except asyncio.QueueFull:
            log.info("dropping a slow client (%s)", self.player,
                     extra={"event": "slow_client", "player": self.player})  # fmt: skip
            self._closing = True
            self._tasks[0].cancel()  # the writer is stuck on the socket: stop waiting
            self._tasks.append(asyncio.create_task(self.ws.close(code=CLOSE_SLOW)))

    def send_error(
        self, code: str, message: str, msg_id: Any = None, game: str | None = None
    ) -> None:
        """Send an error with a stable code (`game`: the game it is about, for the log)."""
        if code not in protocol.ERROR_CODES:
            log.error("unknown error code %s: %s", code, message)
            code = "internal"
        self.services.metrics.error(code)
        level = logging.INFO if code == "rate_limited" else logging.DEBUG
        if log.isEnabledFor(level):
            log.log(level, "error %s to %s: %s", code, self.player, message, extra={
                "event": "error", "code": code, "player": self.player, "game": game,
            })  # fmt: skip
        self.send(protocol.error(code, message, msg_id))

    def close(self, code: int, message: str = "") -> None:
        """Close after what is queued has been sent."""
        if self._closing:
            return
        try:
            self._queue.put_nowait((code, message))
        except asyncio.QueueFull:
            self._tasks.append(asyncio.create_task(self.ws.close(code=code)))
        self._closing = True

    async def _write_loop(self) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            while True:
                item = await self._queue.get()
                if isinstance(item, tuple):
                    await self.ws.close(code=item[0], message=item[1].encode())
                    return
                if isinstance(item, bytes):
                    await self.ws.send_bytes(item)
                else:
                    await self.ws.send_str(item)

    # -- called by the hub --------------------------------------------------------

    def note_away(self, game: str) -> None:
        """Our seat in `game` is away now."""
        self.away.add(game)

    async def on_player_message(self, message: dict[str, Any]) -> None:
        """A `match` or `table` for our player; after a match, the game's first events."""
        self.send(message)
        if message.get("type") == "match":
            game = message["game"]
            self.services.hub.join(self, game, message.get("seat"), 0)
            await self.services.hub.deliver(self, game)


async def websocket(request: web.Request) -> web.WebSocketResponse:
    """GET /ws: one client connection."""
    services = request.app[SERVICES]
    settings = services.settings
    ws = web.WebSocketResponse(
        heartbeat=settings.heartbeat, max_msg_size=settings.max_msg_size, compress=False
    )
    if services.draining:
        raise web.HTTPServiceUnavailable(text="draining")
    await ws.prepare(request)
    log.info("connect from %s", request.remote, extra={"event": "connect"})
    await Connection(ws, services).run()
    return ws


def _game_of(msg: dict[str, Any] | None) -> str | None:
    """The game a request is about, if it names one."""
    game = msg.get("game") if msg is not None else None
    return game if isinstance(game, str) else None
