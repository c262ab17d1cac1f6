"""One small handler per client message type: check, call games/matchmaking, answer.

Each takes the socket and the checked message and returns the answer (without
`id`; the socket adds it), or raises an error with a PROTOCOL.md code.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from moose.protocol import PROTOCOL_VERSION, ProtocolError
from moose_server.games import GameError
from moose_server.hub import state_message
from moose_server.matchmaking import MatchError

if TYPE_CHECKING:
    from moose_server.ws import Connection

__all__ = ["HANDLERS"]

log = logging.getLogger(__name__)

Message = dict[str, Any]
Handler = Callable[["Connection", Message], Awaitable[Message | None]]
MAX_NAME = 24
DEFAULT_TABLE = 4


def _name(value: Any) -> str:
    if not isinstance(value, str) or not 1 <= len(value.strip()) <= MAX_NAME:
        raise ProtocolError("bad_message", f"a name is 1 to {MAX_NAME} characters")
    if not value.isprintable():
        raise ProtocolError("bad_message", "a name has printable characters only")
    return value.strip()


def _player(conn: Connection) -> str:
    assert conn.player is not None
    return conn.player


async def hello(conn: Connection, msg: Message) -> Message:
    """Start a session: a new player with a name, or an old one with a token."""
    s = conn.services
    if msg["protocol"] != PROTOCOL_VERSION:
        raise ProtocolError("protocol_version", f"this server speaks protocol {PROTOCOL_VERSION}")
    now = await s.store.now_ms()
    if msg.get("token"):
        player, name = s.tokens.check(msg["token"], now / 1000)
        s.metrics.reconnects.inc()
    else:
        if msg.get("name") is None:
            raise ProtocolError("bad_message", "'hello' needs a 'name' or a 'token'")
        player, name = f"p_{secrets.token_hex(5)}", _name(msg["name"])
    conn.player, conn.name = player, name
    s.hub.add_player(conn)
    games = await _resume(conn)
    resumed = "resumed" if msg.get("token") else "new"
    log.info("hello %s (%s, %s session, %d games)", player, name, resumed, len(games),
             extra={"event": "hello", "player": player, "games": games or None})  # fmt: skip
    return {
        "type": "welcome", "protocol": PROTOCOL_VERSION, "player": player, "name": name,
        "token": s.tokens.issue(player, name, now / 1000), "server_time": now, "games": games,
    }  # fmt: skip


async def _resume(conn: Connection) -> list[str]:
    """Follow the player's unfinished games again; an away seat comes back."""
    s, player = conn.services, _player(conn)
    found = []
    for game_id in await s.store.player_games(player):
        try:
            game = await s.games.load(game_id)
        except GameError:
            game = None
        seat = game.seat_of(player) if game is not None else None
        if game is None or seat is None or game.state.over:
            await s.store.remove_player_game([player], game_id)
            continue
        s.hub.join(conn, game_id, seat, game.version)
        if game.away[seat]:
            await s.games.back(game_id, player)
        found.append(game_id)
    return found


async def ping(conn: Connection, msg: Message) -> Message:
    """Answer with Redis' clock."""
    return {"type": "pong", "server_time": await conn.services.store.now_ms()}


async def queue(conn: Connection, msg: Message) -> Message:
    """Join the public queue."""
    low, high = msg.get("min_players", 2), msg.get("max_players", 6)
    since = await conn.services.matchmaker.enqueue(_player(conn), conn.name, low, high)
    log.info("queue %s for %s-%s seats", conn.player, low, high,
             extra={"event": "queue", "player": conn.player})  # fmt: skip
    return {"type": "queued", "min_players": low, "max_players": high, "server_time": since}


async def leave_queue(conn: Connection, msg: Message) -> Message:
    """Leave the public queue."""
    if not await conn.services.matchmaker.leave(_player(conn)):
        raise MatchError("not_queued", "you are not in the queue")
    log.info("leave_queue %s", conn.player, extra={"event": "leave_queue", "player": conn.player})
    return {"type": "left"}


async def create_table(conn: Connection, msg: Message) -> Message:
    """Open a private table with us as host."""
    mm = conn.services.matchmaker
    info = await mm.create_table(_player(conn), conn.name, msg.get("players", DEFAULT_TABLE))
    return info.as_message()


async def join_table(conn: Connection, msg: Message) -> Message:
    """Sit at a private table; everyone there hears of it."""
    s = conn.services
    info = await s.matchmaker.join_table(msg["code"], _player(conn), conn.name)
    await s.lobby.tell_table(info, skip=conn.player)
    return info.as_message()


async def add_bot(conn: Connection, msg: Message) -> Message:
    """The host seats a bot."""
    s = conn.services
    info = await s.matchmaker.add_bot(msg["code"], _player(conn), msg.get("bot", "greedy"))
    await s.lobby.tell_table(info, skip=conn.player)
    return info.as_message()


async def leave_table(conn: Connection, msg: Message) -> Message:
    """Leave a private table before it starts."""
    s = conn.services
    info = await s.matchmaker.leave_table(msg["code"], _player(conn))
    await s.lobby.tell_table(info, skip=conn.player)
    if info is None:
        return {"type": "table", "code": msg["code"], "host": None, "players": 0, "seats": []}
    return info.as_message()


async def start_table(conn: Connection, msg: Message) -> Message:
    """The host starts the game; every seated player gets `match`."""
    s = conn.services
    table = await s.matchmaker.start_table(msg["code"], _player(conn))
    await s.lobby.start(table)
    return s.lobby.started_message(msg["code"], _player(conn), table)


async def move(conn: Connection, msg: Message) -> Message:
    """Play a move in one of our games."""
    s, game, received = conn.services, msg["game"], time.perf_counter()
    seq = await s.games.move(game, _player(conn), msg["move"], msg.get("seq"), msg.get("move_id"))
    s.metrics.commit_latency.observe(time.perf_counter() - received)
    return {"type": "moved", "game": game, "seq": seq}


async def sync(conn: Connection, msg: Message) -> Message:
    """Resend the events after `since`, or the current state."""
    s, game_id = conn.services, msg["game"]
    game = await s.games.load(game_id)
    sub = conn.subs.get(game_id)
    if sub is None:
        seat = game.seat_of(_player(conn))
        if seat is None:
            raise GameError("not_in_game", f"you have no seat in game {game_id}; watch it")
        sub = s.hub.join(conn, game_id, seat, game.version)
    since = msg.get("since")
    if since is None or not 0 <= since <= game.version:
        await _send_state(conn, game_id)
        return {"type": "synced", "game": game_id, "seq": sub.seen}
    return {"type": "synced", "game": game_id, "seq": await s.hub.resend(conn, game_id, since)}


async def _send_state(conn: Connection, game_id: str) -> None:
    """One `state` event with the game as our seat sees it now."""
    s, sub = conn.services, conn.subs[game_id]
    async with sub.lock:
        game = await s.games.load(game_id)
        conn.send(state_message(game, sub.seat, await s.store.now_ms()))
        sub.seen = max(sub.seen, game.version)


async def watch(conn: Connection, msg: Message) -> Message:
    """Follow a game as a spectator (a seated player keeps their seat's view)."""
    s, game_id = conn.services, msg["game"]
    game = await s.games.load(game_id)
    s.hub.join(conn, game_id, game.seat_of(_player(conn)), game.version)
    await _send_state(conn, game_id)
    return {"type": "watching", "game": game_id, "seq": conn.subs[game_id].seen}


async def unwatch(conn: Connection, msg: Message) -> Message:
    """Stop following a game as a spectator."""
    sub = conn.subs.get(msg["game"])
    if sub is not None and sub.seat is None:
        conn.services.hub.leave(conn, msg["game"])
    return {"type": "unwatched", "game": msg["game"]}


async def record(conn: Connection, msg: Message) -> Message:
    """The record of a finished game."""
    rec = await conn.services.games.record(msg["game"])
    return {"type": "record", "game": msg["game"], "record": rec}


HANDLERS: dict[str, Handler] = {
    "hello": hello, "ping": ping, "queue": queue, "leave_queue": leave_queue,
    "create_table": create_table, "join_table": join_table, "add_bot": add_bot,
    "leave_table": leave_table, "start_table": start_table, "move": move, "sync": sync,
    "watch": watch, "unwatch": unwatch, "record": record,
}  # fmt: skip
