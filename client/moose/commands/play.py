"""`moose play`: a person plays one game in the terminal, from the queue or a private table."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import os
import sys
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the client pulls in aiohttp: imported when the command runs
    from rich.console import Console, RenderableType
    from rich.live import Live

    from moose._term import InputReader
    from moose.client import Client

Message = dict[str, Any]
DEFAULT_URL = os.environ.get("MOOSE_URL", "ws://127.0.0.1:8080/ws")
_LOG_LINES = 200
_QUIT = {"q", "quit", "exit"}
_REDRAW = 0.05  # seconds between redraws of the live screen, at least


def add_parser(subparsers: Any) -> None:
    """Register `moose play`."""
    p = subparsers.add_parser(
        "play",
        help="play a game in the terminal",
        description="Play There's a Moose in the House against people and bots on a server. "
        "Type the number of a move and Enter; `quit` leaves.",
    )
    p.add_argument("--url", default=DEFAULT_URL, help="server WebSocket URL (default %(default)s)")
    p.add_argument("--name", default=None, help="your name at the table (default: your login)")
    p.add_argument(
        "--login",
        action="store_true",
        help="play as the account --name (asks its password, or MOOSE_PASSWORD)",
    )
    add_players_option(p, "table size wanted from the public queue, e.g. 2-4 or 3 (default 2-4)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--code", help="join the private table with this join code")
    where.add_argument("--create", type=int, metavar="N", help="create a private table of N seats")
    p.add_argument(
        "--bots",
        default="",
        metavar="BOT,BOT",
        help="with --create: seat these server bots (random, greedy), then start",
    )
    p.add_argument(
        "--start-when-full",
        action="store_true",
        help="with --create: start as soon as every seat is taken",
    )
    p.add_argument(
        "--plain",
        action="store_true",
        help="line-by-line output even on a terminal (the default when piped)",
    )
    p.set_defaults(func=run)


def add_players_option(p: argparse.ArgumentParser, help: str) -> None:
    """`--players MIN-MAX`: the table size wanted from the queue, (2, 4) by default."""
    p.add_argument("--players", type=players_range, default=(2, 4), metavar="MIN-MAX", help=help)


def players_range(text: str) -> tuple[int, int]:
    """`2-4` or `3` as (min, max) seats, each 2 to 6."""
    lo, _, hi = text.partition("-")
    try:
        low, high = int(lo), int(hi or lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN-MAX such as 2-4, not {text!r}") from None
    if not 2 <= low <= high <= 6:
        raise argparse.ArgumentTypeError(f"seats must be 2 to 6 with MIN <= MAX, not {text!r}")
    return low, high


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose play`."""
    if args.create is not None and not 2 <= args.create <= 6:
        print("moose play: --create takes 2 to 6 seats", file=sys.stderr)
        return 2
    if args.bots and args.create is None:
        print("moose play: --bots needs --create", file=sys.stderr)
        return 2
    return asyncio.run(_main(args))  # Ctrl-C: `cli.main` exits with 130


async def _main(args: argparse.Namespace) -> int:
    from rich.console import Console

    from moose._term import InputReader
    from moose.client import Client, ConnectError, ServerError

    live = not args.plain and sys.stdin.isatty() and sys.stdout.isatty()
    console = Console(highlight=False)
    password = None
    if args.login:
        from moose.commands.account import ask

        password = ask("password: ", "MOOSE_PASSWORD")
    client = Client(args.url, name=args.name or _login(), password=password)
    try:
        await client.open()
    except ConnectError:
        console.print(f"cannot reach {args.url}: is `moose serve` running?", markup=False)
        return 1
    except ServerError as exc:
        console.print(f"the server refused the connection: {exc}", markup=False)
        return 1
    session = Session(client, console, args)
    reader = InputReader(keys=live, on_change=session.refresh)
    session.reader = reader
    try:
        reader.start()
        with session.live_screen(live):
            return await session.run()
    finally:
        reader.close()
        await client.close()


def _login() -> str:
    with contextlib.suppress(Exception):
        return getpass.getuser()[:24] or "player"
    return "player"


class Session:
    """One player's game: the lobby, then the events of the game and their moves."""

    def __init__(self, client: Client, console: Console, args: argparse.Namespace) -> None:
        self.client = client
        self.console = console
        self.args = args
        self.reader: InputReader | None = None
        self.live: Live | None = None
        self.log: deque[str] = deque(maxlen=_LOG_LINES)
        self.code: str | None = None
        self.table: Message | None = None
        self.started = False
        self.game: str | None = None
        self.seat: int | None = None
        self.names: list[str] | None = None
        self.seats: Message = {}  # the game's `bots` and `ratings`, from `match` or `start`
        self.over_ratings: list[Message | None] | None = None  # a rated game's, at its end
        self.last: Message | None = None  # the latest event of our game
        self.acted_on = -1  # the seq of the event we last sent a move for
        self._redraw_due = False

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
            self.console.print(line, markup=False)
            sys.stdout.flush()
        else:
            self.refresh()

    def refresh(self) -> None:
        """Redraw the live screen soon (typing, new events): at most every REDRAW seconds.

        A redraw renders the whole screen; one per keystroke and per line said
        took the whole event loop on a busy machine, and the game's events waited.
        """
        if self.live is not None and not self._redraw_due:
            self._redraw_due = True
            asyncio.get_running_loop().call_later(_REDRAW, self._redraw)

    def _redraw(self) -> None:
        self._redraw_due = False
        if self.live is not None:
            self.live.refresh()

    def render(self, final: bool = False) -> RenderableType:
        """The live screen."""
        from moose import _render

        view = self.last.get("view") if self.last else None
        legal = self.legal() if not final else None
        status = "" if self.client.connected else "  [reconnecting...]"
        game = f"game {self.game}, seat {self.seat}" if self.game else "lobby"
        header = f"moose play: {self.client.name} at {self.client.url}, {game}{status}"
        log_room = max(3, self.console.height - 12 - len(legal or ()) - len(self.names or ()))
        buffer = self.reader.buffer if self.reader else ""
        prompt = "" if final else f"> {buffer}"
        return _render.screen(
            view,
            self.names,
            legal=legal,
            seconds_left=self.seconds_left(),
            log=list(self.log)[-log_room:],
            header=header,
            prompt=prompt,
            seats=self.seats,
            over_ratings=self.over_ratings,
        )

    def show_turn(self) -> None:
        """In line mode, print the board and the numbered moves when it is our move."""
        from moose import _render

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
        """Seconds to our deadline, on the server's clock."""
        deadline = self.last.get("deadline") if self.last and self.legal() else None
        if not isinstance(deadline, int | float):
            return None
        return (deadline - self.client.server_time()) / 1000

    # -- the session ---------------------------------------------------------------------

    async def run(self) -> int:
        """Lobby, then the game, while reading typed lines; the exit code."""
        from moose.client import ConnectionLost, ServerError

        self.say(f"connected to {self.client.url} as {self.client.name}")
        try:
            await self.lobby()
        except ServerError as exc:
            self.say(f"the server refused: {exc.message} ({exc.code})")
            return 1
        follow = asyncio.create_task(self.follow())
        typing = asyncio.create_task(self.read_lines())
        try:
            done, _ = await asyncio.wait({follow, typing}, return_when=asyncio.FIRST_COMPLETED)
            return (follow if follow in done else typing).result()
        except ConnectionLost as exc:
            self.say(f"lost the connection: {exc}")
            return 1
        finally:
            for task in (follow, typing):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def lobby(self) -> None:
        """Queue, create a table (and seat bots) or join one."""
        args = self.args
        if args.create is not None:
            table = await self.client.create_table(args.create)
            self.code = table["code"]
            self.say(
                f"table {self.code} created with {args.create} seats; others join with:"
                f"  moose play --code {self.code}"
            )
            await self.on_table(table)
            for bot in filter(None, (b.strip() for b in args.bots.split(","))):
                await self.on_table(await self.client.add_bot(self.code, bot))
            if not self.auto_start():
                self.say("type `start` to start with the seats taken so far")
        elif args.code:
            self.code = args.code.strip().upper()
            await self.on_table(await self.client.join_table(self.code))
        else:
            low, high = args.players
            await self.client.queue(low, high)
            self.say(f"waiting in the queue for a table of {low}-{high} players...")

    def auto_start(self) -> bool:
        """Whether the host starts the table by itself once every seat is taken."""
        return bool(self.args.start_when_full or self.args.bots)

    async def on_table(self, table: Message) -> None:
        """A table changed: show it, and start it when it is full and we may."""
        self.table = table
        seats = table.get("seats") or []
        taken = [s for s in seats if s]
        who = ", ".join(s.get("name") or s.get("bot") or "?" for s in taken)
        self.say(f"table {table.get('code')}: {len(taken)}/{len(seats)} seats: {who}")
        full = bool(seats) and len(taken) == len(seats)
        is_host = table.get("host") == self.client.player
        if is_host and full and self.auto_start() and not self.started:
            await self.start()

    async def start(self) -> None:
        """Start our private table (host only)."""
        if self.code is None or self.started:
            return
        self.started = True
        await self.client.start_table(self.code)

    async def follow(self) -> int:
        """Handle the server's messages until our game is over."""
        from moose import _render
        from moose.client import is_final

        async for msg in self.client.events():
            if msg["type"] == "table" and self.game is None:
                await self.on_table(msg)
            elif msg["type"] == "match" and self.game is None:
                self.game, self.seat = msg["game"], msg["seat"]
                self.names = msg.get("names") or self.names
                self.take_seats(msg)
                self.say(f"game {self.game}: you are seat {self.seat} of {msg.get('players')}")
                self.say(self.seats_line())
            elif msg["type"] == "event" and msg.get("game") == self.game:
                event = msg.get("event") or {}
                if event.get("kind") in ("start", "state"):
                    self.names = event.get("names") or self.names
                    self.take_seats(event)
                if event.get("kind") == "over":
                    self.over_ratings = event.get("ratings")
                self.last = msg
                self.say(_render.describe_event(msg, self.names, self.seat))
                if is_final(msg):
                    if self.live is None:
                        self.console.print(_render.board(msg["view"], self.names, self.seats))
                        self.console.print(
                            _render.final_scores(msg["view"], self.names, self.over_ratings)
                        )
                    return 0
                if self.legal():
                    self.show_turn()
        return 1

    def take_seats(self, msg: Message) -> None:
        """Keep the seats' bot flags and ratings a `match`, `start` or `state` gives."""
        if msg.get("ratings") is not None or msg.get("bots") is not None:
            self.seats = {"bots": msg.get("bots") or [], "ratings": msg.get("ratings") or []}

    def seats_line(self) -> str:
        """Who sits where, with ratings and bots marked: `alice 1520, greedy-1 [bot] 540?`."""
        from moose import _render

        bots, ratings = self.seats.get("bots") or [], self.seats.get("ratings") or []
        out = []
        for k, name in enumerate(self.names or []):
            bot = " [bot]" if k < len(bots) and bots[k] else ""
            rating = _render.rating_text(ratings[k] if k < len(ratings) else None)
            out.append(f"{name}{bot} {rating}")
        return "seats: " + ", ".join(out)

    async def read_lines(self) -> int:
        """Act on typed lines: a move number, `start`, `quit`; never ends at end of input."""
        assert self.reader is not None
        while True:
            line = await self.reader.get()
            if line is None:
                self.say("end of input: the server plays for you when your time runs out")
                await asyncio.Event().wait()  # keep following the game to its end
                continue
            text = line.strip().lower()
            if text in _QUIT:
                self.say("you left")
                return 0
            await self.command(text)

    async def command(self, text: str) -> None:
        """One typed command."""
        from moose.client import ServerError

        try:
            if text == "start" and self.game is None:
                await self.start()
            elif text.isdigit():
                await self.choose(int(text))
            elif text in ("", "r"):
                self.show_turn() if self.legal() else self.refresh()
            else:
                self.say("type a move number, `start` (host) or `quit`")
        except ServerError as exc:
            self.say(f"refused: {exc.message} ({exc.code})")

    async def choose(self, number: int) -> None:
        """Play the legal move with this number."""
        from moose.client import ServerError

        legal = self.legal()
        if self.last is None or self.game is None or not legal:
            self.say("it is not your move")
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
