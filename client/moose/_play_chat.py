"""Table chat in `moose play`: lines shown in the log, typed lines said.

A line starting with `/say ` or `'` is said at our game (or our private table
before it starts); `/mute SEAT` and `/unmute SEAT` hide a seat's lines for this
session; `/block SEAT` blocks its player (their chat no longer reaches you).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from moose.client import Client

__all__ = ["CHAT_COMMANDS", "SAY", "TableChat"]

Message = dict[str, Any]
SAY = ("/say ", "'")  # a typed line starting so is said at the table
CHAT_COMMANDS = frozenset({"/say", "/mute", "/unmute", "/block"})


class TableChat:
    """The chat side of `moose_play.Play`: it has the client, the game and the log."""

    client: Client
    game: str | None
    code: str | None
    names: list[str] | None
    lines_shown: set[str]
    table_seats: list[Message | None]  # a private table's seats, before its game

    def say(self, line: str) -> None:
        """Add a line to the log (Play's)."""
        raise NotImplementedError

    def show_chat(self, msg: Message) -> None:
        """A chat line of our game or table, once (the client hides muted seats)."""
        place = msg.get("game") or msg.get("code")
        if place not in (self.game, self.code) or msg.get("line") in self.lines_shown:
            return
        self.lines_shown.add(str(msg.get("line")))
        seat = f" (seat {msg['seat']})" if msg.get("seat") is not None else ""
        self.say(f"[chat] {msg.get('name')}{seat}: {msg.get('text')}")

    async def chat_backlog(self) -> None:
        """The lines said at our game before we came (or while we were away)."""
        from moose.client import ServerError

        if self.game is None:
            return
        with contextlib.suppress(ServerError):
            for line in await self.client.chat_history(self.game):
                self.show_chat({"type": "chat", **line})

    async def seat_at_table(self, word: str, seat: int) -> None:
        """`/mute`, `/unmute` or `/block` a seat of our private table before its game:
        a table's chat lines name the player, not the seat."""
        assert self.code is not None
        taken = self.table_seats[seat] if 0 <= seat < len(self.table_seats) else None
        player = taken.get("player") if taken else None
        if taken is None or player is None:
            self.say(f"seat {seat} of table {self.code} has no player")
        elif word == "/block":
            answer = await self.client.block(str(player))
            self.say(f"blocked {answer['name']}: you no longer see their chat")
        else:
            self.client.mute(self.code, player, muted=word == "/mute")
            self.say(f"{taken.get('name')} {'muted' if word == '/mute' else 'unmuted'}")

    async def chat_command(self, line: str) -> None:
        """`/say TEXT` or `'TEXT`; `/mute SEAT`, `/unmute SEAT`, `/block SEAT`."""
        from moose.client import ServerError

        word, _, rest = line.partition(" ")
        try:
            if line.startswith("'") or word == "/say":
                text = line[1:] if line.startswith("'") else rest
                if self.game is None and self.code is None:
                    self.say("you are at no table yet: nobody to talk to")
                    return
                place = {"game": self.game} if self.game else {"code": self.code}
                await self.client.say(text, **place)
            elif not rest.strip().isdigit() or (self.game or self.code) is None:
                self.say(f"{word} takes a seat number, at a table or in a game")
            elif self.game is None:
                await self.seat_at_table(word, int(rest))
            elif word in ("/mute", "/unmute"):
                self.client.mute(self.game, int(rest), muted=word == "/mute")
                self.say(f"seat {int(rest)} {'muted' if word == '/mute' else 'unmuted'}")
            else:
                seat = int(rest)
                name = (self.names or [])[seat] if seat < len(self.names or []) else str(seat)
                answer = await self.client.block(name, game=self.game)
                self.say(f"blocked {answer['name']}: you no longer see their chat")
        except ServerError as exc:
            self.say(f"refused: {exc.message} ({exc.code})")
