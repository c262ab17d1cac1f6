"""Table chat: who may say what where, and its delivery.

Rooms: a game has one for its seats ("players") and one for its spectators
("spectators"); a seat never gets a spectators' line while the game runs (as on
Lichess), and may read that room once the game is over. A private table has one
("table") for whoever sits at it before it starts. A socket speaks in the room
of the place it has at a game (`watch`/`sync`/a `match` gave it one).

A line is at most `MAX_TEXT` characters once control and format characters are
taken out; every line kept costs a token of the limiter's `chat` (limits/rates.py):
the speaker's and their address's, shared by every instance.
Lines are kept and published in one step (social/chat_store.py); each instance's
subscription (net/subscription.py) hears them on `CHAT_CHANNEL` and hands them
here (`heard`), and one task gives them, in the order heard, to the hub's local
sockets of the room, leaving out those whose player blocked the speaker
(social/blocks.py).
"""

from __future__ import annotations

import asyncio
import logging
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from moose.messages import ChatHistory, Say
from moose_server.errors import Refusal
from moose_server.limits.limiter import Limiter
from moose_server.matchmaking import Matchmaker, normalize_code
from moose_server.net.session import Peer, Sub
from moose_server.play import Games, Hub
from moose_server.social.blocks import Blocks
from moose_server.social.chat_store import ChatStore
from moose_server.storage.codec import unpack
from moose_server.storage.failures import StorageError

__all__ = ["MAX_TEXT", "Chat", "clean_text"]

log = logging.getLogger(__name__)

MAX_TEXT = 200
QUEUED = 10_000  # lines heard and not yet delivered, at most (more: the oldest go)
KEEP = {"\u200c", "\u200d"}  # joiners: format characters that emoji and scripts need
LINE_ID = re.compile(r"^\d{1,15}-\d{1,15}$")
Message = dict[str, Any]


def clean_text(text: str) -> str:
    """A chat line as kept: control and format characters out, spaces collapsed;
    `bad_message` when nothing is left, `chat_too_long` past MAX_TEXT characters."""
    kept = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Cf", "Cs") and ch not in KEEP else ch
        for ch in text
    )
    kept = " ".join(kept.split())
    if not kept:
        raise Refusal("bad_message", "a chat line needs some text")
    if len(kept) > MAX_TEXT:
        raise Refusal(
            "chat_too_long", f"a chat line holds at most {MAX_TEXT} characters, not {len(kept)}"
        )
    return kept


def _reaches(sub: Sub | None, room: str, line: Message) -> bool:
    """Whether a socket with this place at the game gets a line of `room`."""
    if sub is None:
        return False
    if room == "players":
        return sub.seat is not None
    return sub.seat is None or bool(line.get("open"))


def chat_message(target: str, room: str, line_id: str, line: Message) -> Message:
    """The `chat` message of PROTOCOL.md for one line."""
    where = "code" if room == "table" else "game"
    out = {
        "type": "chat",
        where: target,
        "room": room,
        "line": line_id,
        "player": line["player"],
        "name": line["name"],
        "text": line["text"],
    }
    if line.get("seat") is not None:
        out["seat"] = line["seat"]
    return out


class Chat:
    """Says, reads back and delivers table chat."""

    def __init__(
        self,
        chat: ChatStore,
        limiter: Limiter,
        blocks: Blocks,
        games: Games,
        matchmaker: Matchmaker,
        hub: Hub,
    ) -> None:
        self.chat = chat
        self.limiter = limiter  # chat lines per player and per address
        self.blocks = blocks
        self.games = games
        self.matchmaker = matchmaker
        self.hub = hub  # its sockets get the lines
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()

    async def say(self, peer: Peer, name: str, address: str, msg: Say) -> Message:
        """Say `msg.text` in the room of the game or table `msg` names."""
        assert peer.player is not None
        text = clean_text(msg.text)
        target, room, line = await self._place(peer, msg)
        line.update(player=peer.player, name=name, text=text)
        async with self.limiter.attempt("chat", player=peer.player, address=address):
            line_id = await self.chat.say(target, room, line)
        return {
            "type": "said",
            "room": room,
            "line": line_id,
            "text": text,
            ("code" if room == "table" else "game"): target,
        }

    async def _place(self, peer: Peer, msg: Say) -> tuple[str, str, Message]:
        """(target, room, the line's fields of the place) where this socket speaks."""
        assert peer.player is not None
        if msg.code is not None:
            code, seated = await self._table(peer.player, msg.code)
            return code, "table", {"to": seated}
        if msg.game is None:
            raise Refusal("bad_message", "'say' needs a 'game' or a 'code'")
        sub = peer.subs.get(msg.game)
        if sub is None:
            raise Refusal("not_in_game", f"watch or sync game {msg.game} first")
        if sub.seat is not None:
            return msg.game, "players", {"seat": sub.seat}
        game = await self.games.load(msg.game)
        return msg.game, "spectators", {"open": game.finished}

    async def _table(self, player: str, code: str) -> tuple[str, list[str]]:
        """The table's code and its seated players, when `player` sits at it."""
        info = await self.matchmaker.table(normalize_code(code))
        seated = [s.player for s in info.seats if s is not None and s.player is not None]
        if player not in seated:  # as for a code no table has: a code is not told by this
            raise Refusal("bad_code", f"no private table has the code {info.code}")
        return info.code, seated

    async def history(self, peer: Peer, msg: ChatHistory, blocked_too: bool = False) -> Message:
        """The lines kept of a room this socket may read, after `since`, without those
        of players its player blocked (with them: `blocked_too`, to report one)."""
        assert peer.player is not None
        since = msg.since
        if since is not None and not LINE_ID.match(since):
            raise Refusal("bad_message", "'since' is the id of a chat line, like '1700000000000-0'")
        target, room = await self._readable(peer, msg)
        lines = await self.chat.history(target, room, since)
        blocked = set() if blocked_too else set(await self.blocks.of(peer.player))
        shown = [
            chat_message(target, room, ln.pop("id"), ln)
            for ln in lines
            if ln["player"] not in blocked
        ]
        for line in shown:
            del line["type"]
        where = "code" if room == "table" else "game"
        return {"type": "chat_history", where: target, "room": room, "lines": shown}

    async def _readable(self, peer: Peer, msg: ChatHistory) -> tuple[str, str]:
        """(target, room) of a room this socket may read."""
        assert peer.player is not None
        if msg.code is not None:
            return (await self._table(peer.player, msg.code))[0], "table"
        game_id = msg.game
        sub = peer.subs.get(game_id) if game_id is not None else None
        if game_id is None or sub is None:
            raise Refusal("not_in_game", "watch or sync the game first (or name a table's code)")
        own = "players" if sub.seat is not None else "spectators"
        room = msg.room or own
        if room not in ("players", "spectators"):
            raise Refusal("bad_message", "a game's rooms are 'players' and 'spectators'")
        if room != own and (room == "players" or not (await self.games.load(game_id)).finished):
            raise Refusal("not_in_game", f"the {room}' chat is not yours to read now")
        return game_id, room

    # -- delivery -------------------------------------------------------------------

    def heard(self, data: bytes) -> None:
        """A line on the chat channel, from the subscription (net/subscription.py); never
        waits."""
        if self.queue.qsize() >= QUEUED:
            self.queue.get_nowait()  # a stalled Redis: the oldest line is dropped
        self.queue.put_nowait(data)

    async def run(self) -> None:
        """Deliver the lines heard, one after the other, in the order heard."""
        while True:
            data = await self.queue.get()
            try:
                await self._deliver(data)
            except (StorageError, OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("a chat line was not delivered: %r", exc)

    async def _deliver(self, data: bytes) -> None:
        head, room_b, id_b, packed = data.split(b"\n", 3)
        target, room, line_id, line = head.decode(), room_b.decode(), id_b.decode(), unpack(packed)
        peers = list(self._peers(target, room, line))
        if not peers:
            return
        players = sorted({p.player for p in peers if p.player is not None})
        blockers = await self.blocks.blockers(players, line["player"])
        message = chat_message(target, room, line_id, line)
        for peer in peers:
            if peer.player not in blockers:
                peer.send(message)

    def _peers(self, target: str, room: str, line: Message) -> Iterable[Peer]:
        if room == "table":
            return [p for player in line.get("to", ()) for p in self.hub.players.get(player, ())]
        peers = self.hub.games.get(target, ())
        return [p for p in peers if _reaches(p.subs.get(target), room, line)]
