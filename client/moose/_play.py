"""One person's game in the terminal, for `moose play`: the lobby, the game, typed lines.

`Play` queues, creates or joins a table (or takes back the seat of an unfinished
game the server listed at hello), follows the game's events and turns typed
lines into moves. It draws a live screen on a terminal and prints plain lines
when piped. It never strands a seat: an away seat is taken back by any typed
line, leaving a running game asks first, and leaving before a private table
starts frees the seat (`leave_table`), on `quit`, end of input and Ctrl-C alike.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from moose import _render
from moose._play_chat import CHAT_COMMANDS, SAY, TableChat
from moose._play_lobby import PlayLobby
from moose._play_together import PlayTogether
from moose._turns import TurnMenus

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live

    from moose._term import InputReader
    from moose.client import Client

__all__ = ["Play"]

Message = dict[str, Any]
LOG_LINES = 200
QUIT = frozenset({"q", "quit", "exit"})
REDRAW = 0.05  # seconds between redraws of the live screen, at least
TIMED_OUT = "too late: your time ran out and the server played that turn for you"
TOO_LATE = "too late: that number was typed for a turn that is over"


class Play(TableChat, PlayLobby):
    """One player's game: the lobby, then the events of the game and their moves."""

    def __init__(self, client: Client, console: Console, args: argparse.Namespace) -> None:
        self.client = client
        self.console = console
        self.args = args
        self.reader: InputReader | None = None
        self.live: Live | None = None
        self.log: deque[str] = deque(maxlen=LOG_LINES)
        self.code: str | None = None  # our private table, until its game starts
        self.table_seats: list[Message | None] = []
        self.started = False
        self.game: str | None = None
        self.seat: int | None = None
        self.names: list[str] | None = None
        self.seats: Message = {}  # the game's `bots` and `ratings`, from `match` or `start`
        self.seats_due = False  # the seats line waits for the `state` of a seat taken back
        self.over_ratings: list[Message | None] | None = None  # a rated game's, at its end
        self.last: Message | None = None  # the latest event of our game
        self.told: Message | None = None  # the last `deadline` message of our game
        self.acted_on = -1  # the seq of the event we last sent a move for
        self.menus = TurnMenus()  # the turn a typed number answers
        self.away = False  # our seat is played by the server until we send something
        self.over = False
        self.leaving = False  # `quit` typed once during a running game
        self.queued: Message | None = None  # the `queued` answer while we wait
        self.queued_at = 0.0  # time.monotonic() of that answer
        self._redraw = False  # a refresh is scheduled
        self.together = PlayTogether(client, self.say)  # rematch and challenges
        self.lines_shown: set[str] = set()  # chat line ids printed (live and history)

    def stay(self) -> None:
        """Our game ended and we stay for a rematch or a challenge: ready for the next."""
        ended, self.game, self.seat, self.last, self.over = self.game, None, None, None, False
        self.told = None
        self.acted_on, self.away, self.started, self.over_ratings = -1, False, False, None
        self.menus = TurnMenus()
        self.together.game_over(ended)

    # -- output -------------------------------------------------------------------------

    @contextlib.contextmanager
    def live_screen(self, enabled: bool) -> Any:
        """Draw the whole screen live (terminal), or print line by line (pipe)."""
        if not enabled:
            yield
            return
        from rich.live import Live

        with Live(
            get_renderable=self.render,
            console=self.console,
            screen=True,
            auto_refresh=True,
            refresh_per_second=4,
        ) as live:
            self.live = live
            try:
                yield
            finally:
                self.live = None
        self.console.print(self.render(final=True))  # the alternate screen is gone: keep the end

    def say(self, line: str) -> None:
        """Add a line to the log (printed at once when not live)."""
        self.log.append(line)
        if self.live is None:
            self.console.print(line, markup=False, soft_wrap=True)  # one line, for scripts
            sys.stdout.flush()
        else:
            self.refresh()

    def refresh(self) -> None:
        """Redraw the live screen soon (typing, new events): at most every REDRAW seconds.

        A redraw renders the whole screen; one per keystroke and per line said
        took the whole event loop on a busy machine, and the game's events waited.
        """
        if self.live is None or self._redraw:
            return
        self._redraw = True
        asyncio.get_running_loop().call_later(REDRAW, self._draw)

    def _draw(self) -> None:
        self._redraw = False
        if self.live is not None:
            self.live.refresh()

    def render(self, final: bool = False) -> RenderableType:
        """The live screen."""
        view = self.last.get("view") if self.last else None
        legal = self.legal() if not final else None
        status = "" if self.client.connected else "  [reconnecting...]"
        game = f"game {self.game}, seat {self.seat}" if self.game else "lobby"
        header = f"moose play: {self.client.name} at {self.client.url}, {game}{status}"
        log_room = max(3, self.console.height - 13 - len(legal or ()) - len(self.names or ()))
        buffer = self.reader.buffer if self.reader else ""
        return _render.screen(
            view,
            self.names,
            legal=legal,
            seconds_left=self.seconds_left(),
            log=list(self.log)[-log_room:],
            header=header,
            prompt="" if final else f"> {buffer}",
            banner=None if final else self.banner(),
            seats=self.seats,
            over_ratings=self.over_ratings,
        )

    def banner(self) -> str | None:
        """What the player must know right now, above the log: away, or waiting."""
        if self.away and not self.over:
            return "You are away: the server plays your seat. Press Enter to take it back."
        if self.queued is not None and self.game is None:
            waited = int(time.monotonic() - self.queued_at)
            rule = self._queue_rule()
            return f"In the queue for {waited} s. {rule[0].upper()}{rule[1:]}."
        if self.leaving:
            return "Type quit again to leave the running game, anything else to stay."
        return None

    def show_turn(self) -> None:
        """In line mode, print the board and the numbered moves when it is our move."""
        if self.live is not None or self.last is None:
            self.refresh()
            return
        view = self.last["view"]
        legal = self.legal() or []
        self.console.print(_render.board(view, self.names, self.seats))
        self.console.print(_render.hand_line(view))
        self.console.print(_render.status_line(view, self.names, self.seconds_left()))
        self.console.print(_render.choices(legal, view, self.names))
        numbers = "1" if len(legal) == 1 else f"1-{len(legal)}"
        self.console.print(f"Type a move number ({numbers}) and Enter:")
        sys.stdout.flush()

    def legal(self) -> list[Message] | None:
        """Our legal moves now, when it is our move and we have not answered yet."""
        if not self.last or self.last["seq"] == self.acted_on:
            return None
        view = self.last.get("view") or {}
        if view.get("to_act") != self.seat or view.get("to_act") is None:
            return None
        return self.last.get("legal") or None

    def seconds_left(self) -> float | None:
        """Seconds to our deadline, on the server's clock; or to another seat's, when a
        `deadline` message told it (a turn that goes on: it counts down too)."""
        other = self.told
        if (
            self.last
            and other
            and other["seq"] == self.last["seq"]
            and other["to_act"] != self.seat
        ):
            deadline: Any = other["deadline"]
        elif not self.last or not self.legal():
            return None
        else:
            # The library's copy: a `deadline` message, or a `synced` answer after a
            # reconnect, may have moved it.
            told = self.client.deadline(self.game, self.last["seq"]) if self.game else None
            deadline = told if told is not None else self.last.get("deadline")
        if not isinstance(deadline, int | float):
            return None
        return (deadline - self.client.server_time()) / 1000

    # -- the session ---------------------------------------------------------------------

    async def run(self) -> int:
        """Lobby (or the unfinished game), then the game, while reading lines; the exit code."""
        from moose.client import ConnectionLost, ServerError

        self.say(f"connected to {self.client.url} as {self.client.name}")
        if self.client.renamed_from is not None:
            self.say(
                f"an account took the name {self.client.renamed_from!r} meanwhile: "
                f"you play as {self.client.name!r}"
            )
        try:
            if self.client.welcome_games:
                self.say(f"taking your seat back in game {self.client.welcome_games[0]}")
            else:
                await self.lobby()
        except ServerError as exc:
            self.say(f"the server refused: {exc.message} ({exc.code})")
            return 1
        tasks = [
            asyncio.create_task(self.follow()),
            asyncio.create_task(self.read_lines()),
            asyncio.create_task(self.note_queue()),
            asyncio.create_task(self.together.incoming()),
        ]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            return done.pop().result()
        except ConnectionLost as exc:
            self.say(f"lost the connection: {exc}")
            return 1
        finally:
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    # -- the game ------------------------------------------------------------------------

    async def follow(self) -> int:
        """Handle the server's messages until our game is over (or gone)."""
        async for msg in self.client.events():
            mtype = msg["type"]
            if mtype == "table" and self.game is None:
                await self.on_table(msg)
            elif mtype == "match" and self.game is None:
                self.game, self.seat = msg["game"], msg["seat"]
                self.names = msg.get("names") or self.names
                self.code = None  # started: nothing to leave any more
                self.take_seats(msg)
                self.say(f"game {self.game}: you are seat {self.seat} of {msg.get('players')}")
                if self.seats:
                    self.say(self.seats_line())
                else:  # a seat taken back: its `state` event brings the ratings
                    self.seats_due = True
                await self.chat_backlog()
            elif mtype == "deadline" and msg.get("game") == self.game:
                self.told = msg  # ours: the library's deadline has it (seconds_left)
                self.say(_render.describe_deadline(msg, self.names, self.seat))
            elif mtype == "gone" and msg.get("game") == self.game:
                self.say(f"the server no longer has game {self.game} (it lost it): game over")
                return 1
            elif mtype in ("rematch_offer", "rematch_started"):
                self.together.heard(msg)
            elif mtype == "event" and msg.get("game") == self.game and self.on_event(msg):
                ended = str(msg["game"])
                if self.args.stay:
                    self.stay()  # first: a `rematch` typed at once is for this game
                await self.save_record(ended)
                if not self.args.stay:
                    return 0
            elif mtype == "chat":
                self.show_chat(msg)
        return 1

    def on_event(self, msg: Message) -> bool:
        """One event of our game: log it, follow our seat's away state; True at the end."""
        from moose.client import is_final

        event = msg.get("event") or {}
        kind = event.get("kind")
        if kind in ("start", "state"):
            self.names = event.get("names") or self.names
            self.take_seats(event)
            if self.seats_due:
                self.seats_due = False
                self.say(self.seats_line())
        if kind == "over":
            self.over_ratings = event.get("ratings")
        previous, self.last = self.last, msg
        if kind in ("away", "back") and previous is not None and previous["seq"] == self.acted_on:
            self.acted_on = msg["seq"]  # nothing a move depends on changed: still answered
        if kind in ("away", "back"):
            self.menus.carried(msg["seq"])
        elif kind == "move" and event.get("seat") == self.seat and event.get("auto") == "timeout":
            self.menus.ran_out()
        self._note_away(kind, event)
        self.say(_render.describe_event(msg, self.names, self.seat))
        if is_final(msg):
            self.over = True
            self.last = {**msg, "view": _render.final_view(msg)}  # no "Waiting for" left
            if self.live is None:
                view = self.last["view"]
                self.console.print(_render.board(view, self.names, self.seats))
                final = _render.final_scores(view, self.names, self.over_ratings)
                self.console.print(final, soft_wrap=True)  # one line, for scripts
            return True
        if self.legal():
            if kind not in ("away", "back"):
                self.menus.shown(msg["seq"], time.monotonic())
            self.show_turn()
        return False

    async def save_record(self, game: str) -> None:
        """Keep the record of our finished `game`, and say where it is."""
        from moose import _records
        from moose import record as records

        path = _records.kept_path(game)
        try:
            rec = await _records.fetch(self.client, game)  # our seat: no code needed
            path.parent.mkdir(parents=True, exist_ok=True)
            records.dump(rec, path)
        except (records.RecordError, OSError) as exc:
            self.say(f"the game's record was not saved: {exc}")
            return
        self.say(
            f"the game's record is saved in {path} (`moose verify` checks its deal, "
            f"`moose replay` its moves)"
        )

    def take_seats(self, msg: Message) -> None:
        """Keep the seats' bot flags and ratings a `match`, `start` or `state` gives."""
        if msg.get("ratings") is not None or msg.get("bots") is not None:
            self.seats = {"bots": msg.get("bots") or [], "ratings": msg.get("ratings") or []}

    def seats_line(self) -> str:
        """Who sits where, with ratings and bots marked: `0 alice 1520, 1 greedy-1 [bot] 540?`."""
        bots, ratings = self.seats.get("bots") or [], self.seats.get("ratings") or []
        out = []
        for k, name in enumerate(self.names or []):
            bot = " [bot]" if k < len(bots) and bots[k] else ""
            rating = _render.rating_text(ratings[k] if k < len(ratings) else None)
            out.append(f"{k} {name}{bot} {rating}")
        return "seats: " + ", ".join(out) + "  (`/mute SEAT`, `/block SEAT` take the number)"

    def _note_away(self, kind: str | None, event: Message) -> None:
        flags = event.get("away") or []
        was = self.away
        if kind in ("away", "back") and event.get("seat") == self.seat:
            self.away = kind == "away"
        elif kind == "state" and self.seat is not None and self.seat < len(flags):
            self.away = bool(flags[self.seat])
        if self.away and not was and self.live is None:
            self.say("(press Enter, or type anything, to take your seat back)")

    # -- typed lines ---------------------------------------------------------------------

    async def read_lines(self) -> int:
        """Act on typed lines: a move number, `start`, `quit`; never ends at end of input."""
        assert self.reader is not None
        while True:
            typed = await self.reader.get_line()
            if typed is None:
                if self.game is None and self.code is not None:
                    self.say(f"end of input: leaving table {self.code}")
                    return 0  # the caller leaves the table
                self.say("end of input: the server plays for you when your time runs out")
                await asyncio.Event().wait()  # keep following the game to its end
                continue
            line = typed.text
            text = line.strip().lower()
            if text in QUIT:
                if self.game is not None and not self.over and not self.leaving:
                    self.leaving = True
                    self.say(
                        "the game is still on: if you leave, the server plays your "
                        "turns when your time runs out, and `moose play` with the "
                        "same name takes you back to it; type quit again to leave, "
                        "anything else to stay"
                    )
                    continue
                self.say("you left")
                return 0
            self.leaving = False
            if line.strip().startswith(SAY) or text.split(" ")[0] in CHAT_COMMANDS:
                await self.chat_command(line.strip())
                continue
            await self.command(text, typed.at)

    async def command(self, text: str, typed_at: float) -> None:
        """One typed line that is not `quit`."""
        from moose.client import ServerError

        try:
            if self.away and self.game is not None:
                self.say("taking your seat back...")
                await self.client.ping()  # any message takes the seat back (event `back`)
            elif text == "start" and self.game is None:
                await self.start()
            elif text.isdigit():
                await self.choose(int(text), typed_at)
            elif await self.together.command(text):
                pass
            elif text in ("", "r"):
                self.show_turn() if self.legal() else self.refresh()
            else:
                self.say(
                    "type a move number, `start` (host), `/say TEXT` (or 'TEXT), "
                    "`/mute SEAT`, `/unmute SEAT`, `/block SEAT` or `quit`"
                )
        except ServerError as exc:
            self.say(f"refused: {exc.message} ({exc.code})")

    async def choose(self, number: int, typed_at: float) -> None:
        """Play the legal move with this number, when typed for the turn on screen now."""
        from moose.client import ServerError

        legal, late = self.legal(), self.menus.timed_out
        if self.last is None or self.game is None or not legal:
            self.menus.timed_out = False
            self.say(TIMED_OUT if late else "it is not your move")
            return
        if self.menus.answered_by(typed_at) != self.last["seq"]:
            self.say(f"{TIMED_OUT if late else TOO_LATE}: here are this turn's moves")
            self.show_turn()
            return
        if not 1 <= number <= len(legal):
            self.say(f"choose a move from 1 to {len(legal)}")
            return
        seq = self.last["seq"]
        self.acted_on = seq
        self.refresh()
        try:
            await self.client.move(self.game, legal[number - 1], seq=seq)
        except ServerError as exc:
            if exc.code in ("stale_seq", "not_your_turn", "game_over"):
                self.say("too late: the game moved on")
            else:
                self.acted_on = -1  # let the player choose again
                self.say(f"refused: {exc.message} ({exc.code})")
                self.show_turn()
