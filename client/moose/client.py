"""The async client library: one WebSocket to a Moose House server (PROTOCOL.md).

    async with moose.connect("ws://127.0.0.1:8080/ws", name="alice") as client:
        await client.queue(2, 4)
        async for msg in client.events():  # `match`, `table` and `event` messages
            ...

The client says hello, keeps the session token and matches each answer to its
request by `id`. When the socket drops it reconnects by itself (exponential
backoff with full jitter, `moose.backoff`: attempt n waits uniform(0, min(5 s,
0.1 s * 2**n)); at once after close code 1012) to the same URL, or, given a
list of URLs (several instances), to the others first, in a random order of
its own, so that a dead instance's players spread over the rest; it says hello
with its token, resumes every game it follows with `sync` from the last seq it
saw, and resends the requests in flight (a move keeps its `move_id`, so the
server applies it once).

Errors, one tree::

    MooseError
     ├── ConnectError      the first connection failed: nothing answers at that URL
     ├── ConnectionLost    the socket dropped for good, or the client was closed
     └── ServerError       the server refused a request: `code`, `message`

This module is the public API. Underneath, `_connection.Connection` runs the
socket (hello, pacing, answers, reconnects) and `_session.Session` the games
(events in order, sync, the inbox); `Client` adds the requests and the bot loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from moose._connection import Message
from moose._errors import ConnectError, ConnectionLost, MooseError, ServerError
from moose._session import _Events, _Game, is_final
from moose._together import Together
from moose.bots import SEARCHING, Bot, make_bot

log = logging.getLogger("moose.client")

__all__ = [
    "Client",
    "ConnectError",
    "ConnectionLost",
    "GameResult",
    "MooseError",
    "ServerError",
    "connect",
    "is_final",
    "play_bot",
]


@dataclass(frozen=True)
class GameResult:
    """How one game ended for the seat a bot played."""

    game: str
    seat: int
    names: list[str]
    scores: list[int]
    winners: list[int]
    moves: int = 0

    @property
    def won(self) -> bool:
        """Whether this seat is among the winners."""
        return self.seat in self.winners


@dataclass
class _Seat:
    """A bot's seat in a game being played."""

    seat: int
    names: list[str]
    moves: int = 0
    moved: int = 0  # the seq of the event our last move made: earlier events are answered


T = TypeVar("T")
RETRY_CODES = frozenset({"rate_limited", "unavailable"})  # unavailable: Redis is down
RETRIES = 60  # at about a second apart: a minute of Redis outage


class Client(Together):
    """A connection to a Moose House server; use `async with moose.connect(...)`."""

    async def __aenter__(self) -> Client:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- requests -------------------------------------------------------------

    async def ping(self) -> float:
        """Measure the server clock's offset from ours (ms) and keep it."""
        t0 = time.time() * 1000
        answer = await self._request("ping")
        t1 = time.time() * 1000
        self.clock_offset = answer["server_time"] - (t0 + t1) / 2
        return self.clock_offset

    def server_time(self) -> float:
        """The server's clock now, in ms since the epoch, as far as we know it."""
        return time.time() * 1000 + self.clock_offset

    async def queue(
        self, min_players: int = 2, max_players: int = 6, *, fair: bool = False
    ) -> Message:
        """Join the public queue; a `match` event follows when a table forms.

        `fair`: ask for a provably fair deal, to which we send a random seed.
        """
        self._queue_args = {"min_players": min_players, "max_players": max_players}
        if fair:
            self._queue_args["fair"] = True
        self.fair = fair
        return await self._request("queue", **self._queue_args)

    async def leave_queue(self) -> Message:
        """Leave the public queue."""
        self._queue_args = None
        try:
            return await self._request("leave_queue")
        except ServerError as exc:
            # After a reconnect the server has already dropped us from the queue.
            if exc.code != "not_queued" or self.reconnects == 0:
                raise
            return {"type": "left"}

    async def create_table(
        self, players: int, *, fair: bool = False, days: int | None = None
    ) -> Message:
        """Create a private table of `players` seats; the answer holds its join code.

        `fair`: our seat sends a random seed to the game's provably fair deal.
        `days`: a correspondence game, that many days a move (1, 2, 3, 5, 7 or 14).
        """
        self.fair = fair
        fields: dict[str, Any] = {"fair": True} if fair else {}
        if days is not None:
            fields["days"] = days
        return await self._request("create_table", players=players, **fields)

    async def my_games(self) -> list[Message]:
        """Our unfinished games, those where it is our move first (PROTOCOL.md `my_games`)."""
        return list((await self._request("my_games"))["games"])

    async def vacation(self, days: int) -> Message:
        """Hold the clocks of our correspondence games `days` days (and a turn)."""
        return await self._request("vacation", days=days)

    async def join_table(self, code: str, *, fair: bool = False) -> Message:
        """Take a seat at a private table (`fair`: as for `create_table`)."""
        self.fair = fair
        return await self._request("join_table", code=code, **({"fair": True} if fair else {}))

    async def add_bot(self, code: str, bot: str = "greedy") -> Message:
        """Seat a server-side bot at your table (host only)."""
        return await self._request("add_bot", code=code, bot=bot)

    async def start_table(self, code: str) -> Message:
        """Start the game at your table (host only)."""
        return await self._request("start_table", code=code)

    async def leave_table(self, code: str) -> Message:
        """Leave a private table before it starts."""
        return await self._request("leave_table", code=code)

    async def move(
        self, game: str, move: Message, *, seq: int | None = None, move_id: str | None = None
    ) -> Message:
        """Play `move`; `seq` defaults to the last event seen. Returns the `moved` answer.

        Sending the same `move_id` again (a retry after `unavailable`) applies it once.
        Should the server lose the move's event, the client sends it again by itself.
        """
        known = self._games.get(game)
        if seq is None and known is not None:
            seq = known.seq
        move_id = move_id or f"{uuid.uuid4().hex[:16]}-{next(self._ids)}"
        self.remember_move(game, seq, move, move_id)
        try:
            return await self._request("move", game=game, move=move, seq=seq, move_id=move_id)
        except ServerError as exc:
            if exc.code not in RETRY_CODES:
                self.forget_move(game, seq, move_id)  # refused: nothing to send again
            if exc.code == "no_such_game":
                self._gone(game)
            raise

    async def watch(self, game: str, code: str | None = None) -> Message:
        """Follow a game as a spectator: its events arrive through `events()`.

        A private table's game is shown to its players and to whoever gives its
        join `code`.
        """
        known = self._games.setdefault(game, _Game(seat=None))
        known.watching, known.code = True, code
        return await self._request("watch", game=game, **({"code": code} if code else {}))

    async def unwatch(self, game: str) -> Message:
        """Stop following a game as a spectator."""
        known = self._games.get(game)
        if known is not None:
            known.watching = False
        return await self._request("unwatch", game=game)

    # -- accounts, ratings ------------------------------------------------------

    async def register(self, password: str) -> Message:
        """Claim our name as an account with `password`; we keep our player id."""
        answer = await self._request("register", password=password)
        self.token, self.account = answer["token"], True
        return answer

    async def change_password(self, password: str, new_password: str) -> Message:
        """Change the account's password; its other sessions are logged out."""
        answer = await self._request(
            "change_password", password=password, new_password=new_password
        )
        self.token = answer["token"]
        return answer

    async def logout_all(self) -> Message:
        """Log the account out everywhere else: every earlier token is refused."""
        answer = await self._request("logout_all")
        self.token = answer["token"]
        return answer

    async def leaderboard(
        self, kind: str = "humans", limit: int = 20, pool: str = "realtime"
    ) -> list[Message]:
        """The best players of the humans' or the bots' leaderboard of a rating pool
        ("realtime" or "correspondence"), best first."""
        answer = await self._request("leaderboard", kind=kind, limit=limit, pool=pool)
        players: list[Message] = answer["players"]
        return players

    async def profile(self, player: str | None = None, *, name: str | None = None) -> Message:
        """A player's rating, rank and history (by id, or an account by name; default: ours)."""
        return await self._request("profile", player=player, name=name)

    async def report(self, player: str, reason: str, game: str | None = None) -> Message:
        """Report a player to the moderators (an account's name or a player id; with
        `game`, the name shown at that table); the `reported` answer."""
        return await self._request("report", player=player, reason=reason, game=game)

    async def record(self, game: str, code: str | None = None) -> Message:
        """The record of a finished game (RULES.md section 7); `code` as for `watch`."""
        answer = await self._request("record", game=game, **({"code": code} if code else {}))
        record: Message = answer["record"]
        return record

    async def games(self, *, follow: bool = False) -> Message:
        """The live public games (a `game_list`); `follow`: every change through `events()`."""
        self._follow_games = follow
        return await self._request("games", follow=follow)

    # -- arena tournaments ---------------------------------------

    async def arenas(self) -> list[Message]:
        """The arenas, running and upcoming first (each: id, name, for, state, ...)."""
        answer = await self._request("arenas")
        arenas: list[Message] = answer["arenas"]
        return arenas

    async def arena(self, arena: str) -> Message:
        """One arena: its summary, standings and games."""
        return await self._request("show_arena", arena=arena)

    async def join_arena(
        self, arena: str, min_players: int | None = None, max_players: int | None = None
    ) -> Message:
        """Join an arena (or resume after a pause); `match` events follow as tables form."""
        sizes = {
            k: v
            for k, v in (("min_players", min_players), ("max_players", max_players))
            if v is not None
        }
        return await self._request("join_arena", arena=arena, **sizes)

    async def pause_arena(self, arena: str) -> Message:
        """Stop being seated in an arena (`join_arena` resumes)."""
        return await self._request("pause_arena", arena=arena)

    async def leave_arena(self, arena: str) -> Message:
        """Leave an arena; the points already won stay in the standings."""
        return await self._request("leave_arena", arena=arena)

    async def watch_arena(self, arena: str) -> Message:
        """The arena now; `events()` then yields an `arena` message on every change."""
        answer = await self._request("watch_arena", arena=arena)
        self._arenas_watched.add(arena)
        return answer

    async def unwatch_arena(self, arena: str) -> Message:
        """Stop watching an arena."""
        self._arenas_watched.discard(arena)
        return await self._request("unwatch_arena", arena=arena)

    async def run_arena_bot(
        self,
        bot: Bot | str,
        arena: str,
        *,
        min_players: int | None = None,
        max_players: int | None = None,
        on_result: Callable[[GameResult], None] | None = None,
    ) -> list[GameResult]:
        """Join `arena` and play every game it seats us in with `bot`, until it is over."""
        if isinstance(bot, str):
            bot = make_bot(bot)
        await self._retrying(self.join_arena, arena, min_players, max_players)
        state = (await self.watch_arena(arena))["arena"]["state"]
        results: dict[str, GameResult] = {}
        seats: dict[str, _Seat] = {}
        while state != "over" or seats:
            msg = await self._next_event()
            game = msg.get("game")
            if msg["type"] == "arena" and msg["arena"]["id"] == arena:
                state = msg["arena"]["state"]
                await self._unpause(arena, msg, min_players, max_players)
            elif msg["type"] == "match" and msg.get("seat") is not None:
                seats[msg["game"]] = _Seat(msg["seat"], msg.get("names") or [])
            elif msg["type"] == "event" and game in seats:
                result = await self._bot_event(bot, seats[game], msg)
                if result is not None:
                    results[game] = result
                    del seats[game]
                    if on_result is not None:
                        on_result(result)
            elif msg["type"] == "gone" and isinstance(game, str):
                seats.pop(game, None)
        await self.unwatch_arena(arena)
        return list(results.values())

    async def _unpause(
        self, arena: str, msg: Message, min_players: int | None, max_players: int | None
    ) -> None:
        """Join again when the server paused us (our seat was away as a game ended)."""
        mine = [s for s in msg.get("standings") or () if s.get("player") == self.player]
        if mine and mine[0]["state"] == "paused" and msg["arena"]["state"] == "running":
            with contextlib.suppress(ServerError):
                await self._retrying(self.join_arena, arena, min_players, max_players)

    async def _next_event(self) -> Message:
        """The next message `events()` would yield."""
        async for msg in self.events():
            return msg
        raise ConnectionLost("the connection closed")

    # -- chat, blocks and follows ------------------------------------

    async def say(self, text: str, game: str | None = None, code: str | None = None) -> Message:
        """Say a line at a game we follow (or at the private table `code`); `said`."""
        return await self._request("say", text=text, game=game, code=code)

    async def chat_history(
        self,
        game: str | None = None,
        code: str | None = None,
        *,
        room: str | None = None,
        since: str | None = None,
    ) -> list[Message]:
        """The lines kept of a room (default: ours), oldest first, muted seats left out."""
        answer = await self._request("chat_history", game=game, code=code, room=room, since=since)
        lines: list[Message] = answer["lines"]
        return [ln for ln in lines if not self.chat.is_muted(ln)]

    def mute(self, game: str, who: int | str, muted: bool = True) -> None:
        """Hide (or show again) the chat of a seat (int) or player id in a game, for us."""
        self.chat.mute(game, who, muted)

    async def block(self, player: str, game: str | None = None) -> Message:
        """Block a player (id, account name, or with `game` the name at its table)."""
        return await self._request("block", player=player, game=game)

    async def unblock(self, player: str, game: str | None = None) -> Message:
        """Unblock a player."""
        return await self._request("unblock", player=player, game=game)

    async def blocks(self) -> list[Message]:
        """The players we blocked."""
        players: list[Message] = (await self._request("blocks"))["players"]
        return players

    async def follow(self, player: str, game: str | None = None) -> Message:
        """Follow a player (named as for `block`)."""
        return await self._request("follow", player=player, game=game)

    async def unfollow(self, player: str, game: str | None = None) -> Message:
        """Stop following a player."""
        return await self._request("unfollow", player=player, game=game)

    async def following(self) -> Message:
        """The players we follow (each `online`, with their unfinished `games`)."""
        return await self._request("following")

    async def report_line(self, line: Message, reason: str) -> Message:
        """Report a chat line (a `chat` message) to the moderators, its text attached."""
        where = {"code": line["code"]} if line.get("code") else {"game": line["game"]}
        return await self._request(
            "report",
            player=line["player"],
            reason=reason,
            chat=line["line"],
            room=line["room"],
            **where,
        )

    def events(self) -> _Events:
        """An async iterator of `match`, `table`, `event`, `deadline` (a turn goes on past
        its deadline: `deadline(game, seq)` has it when it is ours), `chat` and (when
        followed) `game_list`."""
        return _Events(self)

    @property
    def active_games(self) -> list[str]:
        """The unfinished games this player sits at."""
        return [g for g, k in self._games.items() if k.seat is not None and not k.over]

    async def run_bot(
        self,
        bot: Bot | str,
        games: int | None = 1,
        *,
        min_players: int = 2,
        max_players: int = 6,
        stop: Callable[[], bool] | None = None,
        on_result: Callable[[GameResult], None] | None = None,
        fair: bool = False,
        accept_challenges: bool = False,
    ) -> list[GameResult]:
        """Play `games` games from the public queue with `bot`; the result of each.

        `fair`: ask for provably fair deals and send a random seed to each.

        `games=None` plays until `stop()` is true after a game ends. A game the
        server lost (`gone`) does not count: the bot queues again. A game whose
        end the server lost is played again, and `on_result` hears of it again.
        With `accept_challenges` the bot does not queue: it accepts every challenge
        sent to it and plays those games.
        """
        if isinstance(bot, str):
            bot = make_bot(bot)
        if accept_challenges:
            async with self._accepting():
                return await self._play_bot(bot, games, None, stop, on_result)
        queue = (min_players, max_players, fair)
        return await self._play_bot(bot, games, queue, stop, on_result)

    @contextlib.asynccontextmanager
    async def _accepting(self) -> AsyncIterator[None]:
        """Accept every challenge sent to us while inside."""

        async def accept() -> None:
            async for offer in self.challenges():
                try:
                    await self.challenge_accept(offer["challenge"])
                except ServerError as exc:  # expired or cancelled meanwhile: the next one
                    log.info("challenge %s not accepted: %s", offer["challenge"], exc)

        task = asyncio.create_task(accept())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _play_bot(
        self,
        bot: Bot,
        games: int | None,
        queue: tuple[int, int, bool] | None,
        stop: Callable[[], bool] | None,
        on_result: Callable[[GameResult], None] | None,
    ) -> list[GameResult]:
        """run_bot's loop: play every game we are matched in; queue (`queue`: sizes, fair)."""
        results: list[GameResult] = []
        ended: dict[str, int] = {}  # game -> its index in results
        seats: dict[str, _Seat] = {}

        def more() -> bool:
            done = len(results) + len(seats)
            return (games is None or done < games) and not (stop is not None and stop())

        if more() and queue:
            await self._queue_bot(*queue)
        async for msg in self.events():
            game = msg.get("game")
            if msg["type"] == "match" and msg.get("seat") is not None:
                # An id that ended before is a new deal (Redis lost that game): a new result.
                ended.pop(msg["game"], None)
                seats[msg["game"]] = _Seat(msg["seat"], msg.get("names") or [])
                continue
            if msg["type"] == "event" and game in ended and game not in seats:
                if is_final(msg):
                    continue
                # The server lost this game's end: it is being played again.
                before = results[ended[game]]
                seats[game] = _Seat(before.seat, before.names)
            if msg["type"] == "event" and game in seats:
                result = await self._bot_event(bot, seats[game], msg)
                if result is None:
                    continue
                if game not in ended:
                    ended[game] = len(results)
                    results.append(result)
                results[ended[game]] = result
                if on_result is not None:
                    on_result(result)
            elif msg["type"] != "gone" or game not in seats:
                continue
            del seats[game]
            if not seats and more():
                if queue:
                    await self._queue_bot(*queue)
            elif not seats:
                break
        return results

    async def _queue_bot(self, min_players: int, max_players: int, fair: bool = False) -> None:
        """Queue, through an outage; a ticket Redis kept after losing its match stands."""
        try:
            await self._retrying(self.queue, min_players, max_players, fair=fair)
        except ServerError as exc:
            if exc.code != "already_queued":
                raise

    async def _retrying(self, request: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        """A request, sent again while the server answers `unavailable` or `rate_limited`."""
        for attempt in range(1, RETRIES):
            try:
                return await request(*args, **kwargs)
            except ServerError as exc:
                if exc.code not in RETRY_CODES:
                    raise
                await asyncio.sleep(min(1.0, 0.1 * attempt))
        return await request(*args, **kwargs)

    async def _bot_event(self, bot: Bot, seat: _Seat, msg: Message) -> GameResult | None:
        """Act on one event of a bot's game; the result when the game is over."""
        view, event = msg.get("view") or {}, msg.get("event") or {}
        if event.get("kind") in ("start", "state"):
            seat.names = event.get("names") or seat.names
        if event.get("kind") == "state":
            seat.moved = 0  # the game as it is now: maybe before our last move (Redis lost it)
        if is_final(msg):
            return GameResult(
                game=msg["game"],
                seat=seat.seat,
                names=seat.names,
                scores=event.get("scores") or view.get("scores") or [],
                winners=event.get("winners") or view.get("winners") or [],
                moves=seat.moves,
            )
        kind, flags = event.get("kind"), event.get("away") or []
        away = (kind == "away" and event.get("seat") == seat.seat) or (
            kind == "state" and seat.seat < len(flags) and bool(flags[seat.seat])
        )
        if away:
            # A running bot is not away: any message takes the seat back.
            with contextlib.suppress(ServerError):
                await self._retrying(self.ping)
        legal = msg.get("legal")
        if legal and view.get("to_act") == seat.seat and msg["seq"] >= seat.moved:
            await self._bot_move(seat, msg, await _think(bot, view, legal))
        return None

    async def _bot_move(self, seat: _Seat, msg: Message, move: Message) -> None:
        """Send a bot's move, again with the same move id while the server is unavailable."""
        move_id = f"{uuid.uuid4().hex[:16]}-{next(self._ids)}"
        try:
            answer = await self._retrying(
                self.move, msg["game"], move, seq=msg["seq"], move_id=move_id
            )
        except ServerError as exc:
            # The game moved on (a timeout, or a newer event is queued), or the server
            # lost it (`gone` follows): wait for what comes next.
            if exc.code not in ("stale_seq", "not_your_turn", "game_over", "no_such_game"):
                raise
            return
        seat.moves += 1
        seat.moved = answer["seq"]


def connect(
    url: str | Sequence[str],
    *,
    name: str | None = None,
    token: str | None = None,
    binary: bool = True,
    password: str | None = None,
    bot: bool = False,
) -> Client:
    """A client for `async with`: connects and says hello on entry, closes on exit.

    `url` may be a list of instances' URLs: reconnects go round it. With
    `password`, `name` is an account's to log in to; `bot` says we are a program.
    """
    return Client(url, name=name, token=token, binary=binary, password=password, bot=bot)


async def play_bot(
    url: str | Sequence[str],
    bot: Bot | str,
    games: int = 1,
    *,
    name: str | None = None,
    min_players: int = 2,
    max_players: int = 6,
    seed: int | None = None,
    fair: bool = False,
) -> list[GameResult]:
    """Connect, play `games` games from the public queue with `bot`, and disconnect.

    `fair`: ask for provably fair deals, to each of which the bot sends a random seed.
    """
    if isinstance(bot, str):
        bot = make_bot(bot, seed)
    name = name or f"{bot.name}-{uuid.uuid4().hex[:4]}"
    async with connect(url, name=name, bot=True) as client:
        return await client.run_bot(
            bot, games, min_players=min_players, max_players=max_players, fair=fair
        )


async def _think(bot: Bot, view: Message, legal: list[Message]) -> Message:
    """The bot's move; a searching bot thinks in a worker thread, so that this
    client's heartbeats and the other bots of the process go on meanwhile."""
    if getattr(bot, "name", None) in SEARCHING:
        return await asyncio.to_thread(bot.choose, view, legal)
    return bot.choose(view, legal)
