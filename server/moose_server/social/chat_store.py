"""Table chat in Redis: one capped stream per room.

A game's rooms ("players", "spectators") live in the game's bucket (keys.chat_key)
so that lua/chat.lua can give them the lifetime of the game's events once the game
ended (`game_grace`); while it runs, a room is kept `ttl_ms` after its last line.
A private table's room ("table") lives under its join code. Each line is a msgpack
map (player, name, seat, text, time) in one stream field; its id is the stream's
("<ms>-<n>"), increasing, which is the order every instance delivers lines in:
the script keeps a line and publishes it on `CHAT_CHANNEL` in one step.
"""

from __future__ import annotations

from typing import Any

from moose_server.social.calls import ChatCall
from moose_server.storage.codec import as_text, pack, unpack
from moose_server.storage.gateway import Gateway
from moose_server.storage.keys import CHAT_CHANNEL, GameKeys, chat_key, table_chat_key

__all__ = ["ChatStore"]

Line = dict[str, Any]


class ChatStore:
    """The chat rooms of games and private tables."""

    def __init__(self, redis: Gateway, buckets: int, kept: int, ttl_ms: int) -> None:
        self.redis = redis
        self.buckets = buckets
        self.kept = kept
        self.ttl_ms = ttl_ms

    def _keys(self, target: str, room: str) -> tuple[str, str]:
        """The room's key and the key whose lifetime it takes."""
        if room == "table":
            key = table_chat_key(target)
            return key, key
        return chat_key(target, room, self.buckets), GameKeys.of(target, self.buckets).events

    async def say(self, target: str, room: str, line: Line) -> str:
        """Keep `line` in the room of `target` (a game id or a table code) and publish it;
        its id."""
        key, life = self._keys(target, room)
        call = ChatCall(key, life, CHAT_CHANNEL, target, room, pack(line), self.kept, self.ttl_ms)
        return as_text(await self.redis.run(call, *call.build()))

    async def history(self, target: str, room: str, since: str | None = None) -> list[Line]:
        """The room's lines after the id `since` (all kept, without it), oldest first."""
        key, _ = self._keys(target, room)
        low = f"({since}" if since else "-"
        rows = await self.redis.xrange(key, low, "+", count=self.kept)
        return [{"id": as_text(i), **unpack(fields[b"l"])} for i, fields in rows]
