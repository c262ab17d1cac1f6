"""Table chat on the client side: lines in order, once each, muted seats.

`ChatLog` keeps, per room (a game's "players" or "spectators", a table's
"table"), the id of the last line delivered, so that a reconnected session asks
`chat_history` for what it missed; while that answer is on its way the room's
live lines wait, then both go out in `line` order, each once. It also keeps the
seats muted for this session (muting is the client's: PROTOCOL.md "Muting a seat").
"""

from __future__ import annotations

from typing import Any

__all__ = ["ChatLog", "line_order"]

Message = dict[str, Any]
Room = tuple[str, str]


def line_order(line_id: str) -> tuple[int, int]:
    """A `line` id ("<ms>-<n>") as a sortable pair."""
    ms, _, n = line_id.partition("-")
    return int(ms), int(n or 0)


def where(msg: Message) -> Room:
    """(game id or table code, room) of a `chat` line."""
    return str(msg.get("game") or msg.get("code")), str(msg.get("room"))


class ChatLog:
    """What the session saw of each chat room, and whom it muted."""

    def __init__(self) -> None:
        self.last: dict[Room, str] = {}  # room -> last line id delivered
        self.held: dict[Room, list[Message]] = {}  # rooms whose history is on its way
        self.muted: set[tuple[str, Any]] = set()  # (game, seat) or (game, player id)

    def take(self, msg: Message) -> list[Message]:
        """The lines to deliver now that this live `chat` line came: it, unless seen,
        muted or waiting for its room's history."""
        room = where(msg)
        if room in self.held:
            self.held[room].append(msg)
            return []
        return self._fresh(room, [msg])

    def _fresh(self, room: Room, lines: list[Message]) -> list[Message]:
        out = []
        for msg in sorted(lines, key=lambda m: line_order(str(m.get("line", "0")))):
            line, seen = msg.get("line"), self.last.get(room)
            if not isinstance(line, str) or (seen and line_order(line) <= line_order(seen)):
                continue  # had it already (live, then in a history)
            self.last[room] = line
            if not self.is_muted(msg):
                out.append(msg)
        return out

    def hold(self) -> list[tuple[str, str, str]]:
        """(target, room, last line id) of every room seen; their live lines wait
        until `caught_up`."""
        for room in self.last:
            self.held.setdefault(room, [])
        return [(t, r, line) for (t, r), line in self.last.items()]

    def caught_up(self, room: Room, lines: list[Message]) -> list[Message]:
        """A room's history came (`lines`: `chat` lines): what to deliver, in order."""
        return self._fresh(room, [*lines, *self.held.pop(room, [])])

    def is_muted(self, msg: Message) -> bool:
        """Whether the line's seat or player is muted in its game."""
        target, _ = where(msg)
        return (target, msg.get("seat")) in self.muted or (target, msg.get("player")) in self.muted

    def mute(self, game: str, who: Any, muted: bool = True) -> None:
        """Hide (or show again) the lines of a seat (an int) or a player id in a game."""
        (self.muted.add if muted else self.muted.discard)((game, who))
