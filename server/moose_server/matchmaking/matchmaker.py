"""Matchmaking: the public queue and private tables, with every fact in Redis.

Several server instances share one queue. Each state change is one Lua script
(lua/mm_*.lua, called through its dataclass of scripts.py) over the keys of
keys.mm_keys, which share the ``{mm}`` hash tag, so it is atomic and
touches one Redis Cluster slot; waiting times come from Redis' TIME, never from
an instance's clock. A player is in the queue or at one private table, never both.

Errors: `MatchError` carries a stable code of PROTOCOL.md (``already_queued``,
``not_queued``, ``bad_code``, ``table_full``, ``already_seated``, ``not_host``,
``bad_message``) and a human message; anything else is a bug or a Redis error.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from moose_server.accounts import distinct
from moose_server.errors import Refusal
from moose_server.matchmaking.calls import (
    AddBotCall,
    BotsCall,
    CreateTableCall,
    EnqueueCall,
    ForgetCall,
    FormCall,
    JoinTableCall,
    LeaveCall,
    LeaveTableCall,
    MatchCall,
    RangeCall,
    StartedCall,
    StartTableCall,
    TableCall,
)
from moose_server.play import CODE_ALPHABET, CODE_LENGTH, Seat, clean_code, days_info
from moose_server.settings import Settings
from moose_server.storage.codec import as_bytes
from moose_server.storage.gateway import Gateway
from moose_server.storage.keys import mm_key

__all__ = [
    "BOT_NAMES",
    "CODE_ALPHABET",
    "START_FIELDS",
    "FormedTable",
    "MatchError",
    "MatchOptions",
    "Matchmaker",
    "TableInfo",
    "Ticket",
    "normalize_code",
]

MIN_PLAYERS, MAX_PLAYERS = 2, 6
# The profile fields a real-time game's start takes (play/results.py: Results.profiles).
START_FIELDS = ("bot", "mu", "sigma", "games")


# The join code's alphabet and length: play/codes.py (a game keeps its table's code).
_CODE_RE = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")

try:
    from moose.bots import BOTS as _BOTS

    BOT_NAMES: frozenset[str] = frozenset(_BOTS)
except ImportError:  # the bots module is optional for the server
    BOT_NAMES = frozenset({"random", "greedy"})


@dataclass(frozen=True)
class FormedTable:
    """Seats ready for a game; `source` is "queue" or "table:<code>".

    Until `Matchmaker.started(key)`, the table waits in Redis under `key`, and
    `form_tables` hands it out again once its lease is over.
    """

    seats: list[Seat]
    source: str
    key: str = ""
    rated: bool = False  # a private table the host asked to rate (queue tables: a setting)
    days: int | None = None  # days per move of a correspondence table; None: real time
    # Players' START_FIELDS as their tickets carried them (a queue table): not read again.
    known: dict[str, dict[str, str]] = field(default_factory=dict)
    # Every seat's instance reads its `match` in one message for the table (publish_seats).
    together: bool = False

    @property
    def code(self) -> str | None:
        """The join code of a private table; None for a table from the public queue."""
        return self.source.removeprefix("table:") if self.source.startswith("table:") else None


@dataclass(frozen=True)
class TableInfo:
    """A private table waiting to start; `players` is its number of seats."""

    code: str
    host: str
    players: int
    seats: list[Seat | None]
    rated: bool = False
    days: int | None = None  # days per move of a correspondence table; None: real time

    def as_message(self) -> dict[str, Any]:
        """The `table` message of PROTOCOL.md (without `id`)."""
        filled = [i for i, s in enumerate(self.seats) if s is not None]
        shown = iter(distinct([s.name for s in self.seats if s is not None], filled))
        seats = [None if s is None else {**s.as_dict(), "name": next(shown)} for s in self.seats]
        return {
            "type": "table",
            "code": self.code,
            "host": self.host,
            "players": self.players,
            "seats": seats,
            "rated": self.rated,
            **days_info(self.days),
        }


class MatchError(Refusal):
    """A player's request the matchmaker refuses; `code` is a PROTOCOL.md error code."""


def _seat(data: dict[str, Any]) -> Seat:
    return Seat(
        data.get("player"),
        data["name"],
        data.get("bot"),
        bool(data.get("is_bot")),
        bool(data.get("fair")),
    )


def _table_info(code: str, data: dict[str, Any]) -> TableInfo:
    seats = [None if s is None else _seat(s) for s in data["seats"]]
    rated, days = bool(data.get("rated")), data.get("days")
    return TableInfo(code, data["host"], int(data["players"]), seats, rated, days)


def _started(code: str, data: dict[str, Any], key: str) -> FormedTable:
    """The formed table of a private table started (its stored entry, or the start's reply)."""
    seats = [_seat(s) for s in data["seats"]]
    return FormedTable(seats, f"table:{code}", key, bool(data.get("rated")), data.get("days"))


def _error(err: dict[str, Any], code: str | None) -> MatchError:
    kind, at = err["err"], err.get("at")
    if kind == "already_queued":
        where = f"at table {at}; leave it first" if at else "in the queue"
        return MatchError(kind, f"you are already {where}")
    if kind == "already_seated":
        return MatchError(kind, f"you are already at table {at}")
    if kind == "too_few":
        return MatchError("bad_message", "a table needs at least 2 seats filled to start")
    messages = {
        "bad_code": f"no private table has the code {code}",
        "table_full": f"every seat at table {code} is taken",
        "not_host": f"only the host of table {code} may do that",
        "not_queued": "you are not in the queue",
    }
    return MatchError(kind, messages.get(kind, kind))


def _check_count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MatchError("bad_message", f"{what} must be an integer")
    if not MIN_PLAYERS <= value <= MAX_PLAYERS:
        raise MatchError("bad_message", f"{what} must be {MIN_PLAYERS} to {MAX_PLAYERS}")
    return value


def _check_range(min_players: object, max_players: object) -> tuple[int, int]:
    low = _check_count(min_players, "min_players")
    high = _check_count(max_players, "max_players")
    if low > high:
        raise MatchError("bad_message", "min_players must not exceed max_players")
    return low, high


@dataclass(frozen=True)
class Ticket:
    """A player's place in the queue: since when (ms), the sizes it accepts, and the
    size of the table with bots its player asked for (None: not asked)."""

    since: int
    min_players: int
    max_players: int
    bots: int | None = None


def _ticket(data: dict[str, Any]) -> Ticket:
    bots = data.get("bots")
    return Ticket(
        int(data["since"]), int(data["min"]), int(data["max"]), None if bots is None else int(bots)
    )


def normalize_code(code: str) -> str:
    """A join code as typed (any case, spaces) in its stored form, or `bad_code`."""
    clean = clean_code(code)
    if not _CODE_RE.fullmatch(clean):
        raise MatchError("bad_code", f"no private table has the code {str(code)[:16]!r}")
    return clean


@dataclass(frozen=True)
class MatchOptions:
    """How the matchmaker of one instance seats players."""

    match_wait: float  # then a player is seated at a smaller table
    queue_bots_after: float = 0  # fill a waiting queue table with bots (0 = never)
    offer_after: float = 20.0  # a waiting player may ask for bots (`ask_bots`) after this
    bot: str = "greedy"  # the kind of those bots
    table_ttl: float = 3600  # a private table not started is dropped after this
    instance: str = ""  # this instance's id: its tickets are dropped should it die
    # One form_tables call looks at the `scan` oldest tickets and forms `tables` at
    # most: a few milliseconds of Redis at most, whatever the queue's length.
    scan: int = 128
    tables: int = 8
    lease: float = 30.0  # a formed table not dealt within this is handed out again
    window: float = 100.0  # queue tables of players within `window` rating points...
    widen: float = 100.0  # ...`widen` more a second waited

    def __post_init__(self) -> None:
        if self.bot not in BOT_NAMES:
            raise ValueError(f"unknown bot {self.bot!r} (known: {', '.join(sorted(BOT_NAMES))})")

    @classmethod
    def of(cls, settings: Settings) -> MatchOptions:
        """The options an instance's settings give."""
        return cls(
            match_wait=settings.match_wait,
            queue_bots_after=settings.queue_bots_after,
            offer_after=settings.queue_offer_after,
            bot=settings.queue_bot,
            instance=settings.instance_id,
            lease=settings.lease,
            window=settings.match_window,
            widen=settings.match_widen,
        )


class Matchmaker:
    """The public queue and the private tables of one service, shared by all instances."""

    def __init__(self, redis: Gateway, options: MatchOptions) -> None:
        self.redis = redis
        self.options = options

    async def _run(self, call: MatchCall, code: str | None = None) -> Any:
        """Run a matchmaking script; its JSON reply, or its refusal raised as a MatchError."""
        # A fresh nonce per call: the gateway re-sends it unchanged when it retries (a
        # batch whose connection was lost).
        keys, argv = call.build(secrets.token_hex(8))
        data = json.loads(as_bytes(await self.redis.run(call, keys, argv)))
        if isinstance(data, dict) and "err" in data:
            raise _error(data, code)
        return data

    # -- the public queue ----------------------------------------------------

    async def enqueue(
        self,
        player: str,
        name: str,
        min_players: int = 2,
        max_players: int = 6,
        skill: int = 1500,
        fair: bool = False,
        profile: dict[str, str] | None = None,
    ) -> int:
        """Queue a player for a table of min..max seats; return the ticket's time (ms).

        `skill` (ratings.skill) is what the queue compares to seat players of a level;
        `fair`: the player asks for a provably fair deal; `profile`: the player's
        START_FIELDS as read now, for the game's start (None: it reads them).
        """
        low, high = _check_range(min_players, max_players)
        ticket = json.dumps(
            {
                "name": name,
                "min": low,
                "max": high,
                "inst": self.options.instance,
                # This instance reads a table's `match` messages as one (Store.publish_seats).
                "s": self.options.instance,
                "r": skill,
                **({"fair": True} if fair else {}),
                **({"p": profile} if profile is not None else {}),
            }
        )
        data = await self._run(EnqueueCall(player, ticket, high))
        return int(data["since"])

    async def leave(self, player: str) -> bool:
        """Take the player out of the queue; False when they were not queued."""
        return bool((await self._run(LeaveCall(player)))["left"])

    async def change_range(self, player: str, min_players: int, max_players: int) -> Ticket:
        """The sizes a waiting player accepts, changed; their place in the queue is kept."""
        low, high = _check_range(min_players, max_players)
        return _ticket(await self._run(RangeCall(player, low, high)))

    async def ask_bots(self, player: str, players: int | None = None) -> Ticket:
        """A player waiting `offer_after` asks for a table of `players` (default: their
        minimum) now, the seats nobody waiting takes filled with bots by `form_tables`."""
        size = 0 if players is None else _check_count(players, "players")
        try:
            data = await self._run(BotsCall(player, size, _us(self.options.offer_after)))
        except MatchError as exc:
            if exc.code == "bad_size":
                why = "players must be within your range of sizes"
                raise MatchError("bad_message", why) from exc
            if exc.code == "too_early":
                why = f"bots are offered after {self.options.offer_after:g} s in the queue"
                raise MatchError("too_early", why) from exc
            raise
        return _ticket(data)

    async def leave_if_queued(self, player: str) -> bool:
        """`leave`, but one HEXISTS only when the player has no ticket (a socket closing).

        Tickets come and go on every instance: no ticket now is what `leave` would
        have found had it run now, so nothing is lost by not running it.
        """
        if not await self.redis.hexists(mm_key("tickets"), player):
            return False
        return await self.leave(player)

    async def form_tables(self) -> list[FormedTable]:
        """Seat whoever the queue can seat now (see mm_form.lua); atomic across instances.

        At most `tables` new tables a call: when it formed that many, call again.
        Tables formed earlier whose game was not dealt within the lease come again.
        Deal each table's game, then call `started(table.key)`.
        """
        o = self.options
        call = FormCall(
            match_wait_us=_us(o.match_wait),
            bots_after_us=_us(o.queue_bots_after),
            scan=o.scan,
            lease_us=_us(o.lease),
            window=o.window,
            widen=o.widen,
            most=o.tables,
        )
        rows = await self._run(call)
        return [self._formed(key, entry) for key, entry in rows or []]

    def full(self, tables: list[FormedTable]) -> bool:
        """Whether a `form_tables` call formed as many tables as it may: maybe more wait."""
        return sum(1 for t in tables if t.source == "queue") >= self.options.tables

    def _formed(self, key: str, entry: dict[str, Any]) -> FormedTable:
        if "t" in entry:
            return _started(entry["t"], entry, key)
        bots, flat = int(entry["q"][0]), entry["q"][1:]
        fair = set(entry.get("f") or ())  # cjson writes an empty list as {}
        seats = [
            Seat(flat[i], flat[i + 1], None, fair=flat[i] in fair) for i in range(0, len(flat), 2)
        ]
        bot = self.options.bot
        seats += [Seat(None, f"{bot}-bot {n}", bot) for n in range(1, bots + 1)]
        known = entry.get("p") or {}  # cjson writes an empty map as [] or {}
        together = entry.get("s") == 1
        return FormedTable(seats=seats, source="queue", key=key, known=known, together=together)

    async def started(self, key: str, *more: str) -> None:
        """The games of the formed tables `key` (and `more`) are dealt: they are not
        handed out again."""
        await self._run(StartedCall(key, more))

    async def queue_sizes(self) -> dict[str, int]:
        """Players waiting, by requested max_players ("2".."6")."""
        counts = await self.redis.hgetall(mm_key("counts"))
        sizes = {str(k): 0 for k in range(MIN_PLAYERS, MAX_PLAYERS + 1)}
        for key, value in counts.items():
            sizes[key.decode() if isinstance(key, bytes) else str(key)] = int(value)
        return sizes

    async def ticket_instances(self) -> dict[str, int]:
        """The instances that took the tickets waiting now, with how many each."""
        counts = await self.redis.hgetall(mm_key("instances"))
        return {k.decode(): int(v) for k, v in counts.items() if int(v) > 0}

    async def forget_instance(self, instance: str) -> int:
        """Drop the tickets taken through a dead instance; return how many."""
        return int((await self._run(ForgetCall(instance)))["dropped"])

    # -- private tables --------------------------------------------------------

    async def create_table(
        self,
        host: str,
        name: str,
        players: int,
        rated: bool = False,
        is_bot: bool = False,
        fair: bool = False,
        days: int | None = None,
    ) -> TableInfo:
        """Open a private table of `players` seats with the host in seat 0 (`days`: per
        move, a correspondence table; None: real time)."""
        count = _check_count(players, "players")
        for _ in range(20):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            try:
                ttl = _us(self.options.table_ttl)
                call = CreateTableCall(code, host, name, count, ttl, rated, is_bot, fair, days or 0)
                data = await self._run(call)
            except MatchError as exc:
                if exc.code == "code_taken":  # 31**8 codes: a clash is rare, retry
                    continue
                raise
            return _table_info(code, data)
        raise RuntimeError("no free join code after 20 tries")

    async def join_table(
        self, code: str, player: str, name: str, is_bot: bool = False, fair: bool = False
    ) -> TableInfo:
        """Take the first empty seat of the table with that join code."""
        code = normalize_code(code)
        ttl = _us(self.options.table_ttl)
        data = await self._run(JoinTableCall(code, player, name, ttl, is_bot, fair), code)
        return _table_info(code, data)

    async def add_bot(self, code: str, player: str, bot: str) -> TableInfo:
        """The host puts a built-in bot in the first empty seat."""
        code = normalize_code(code)
        if bot not in BOT_NAMES:
            known = ", ".join(sorted(BOT_NAMES))
            raise MatchError("bad_message", f"unknown bot {str(bot)[:24]!r} (known: {known})")
        ttl = _us(self.options.table_ttl)
        data = await self._run(AddBotCall(code, player, bot, ttl), code)
        return _table_info(code, data)

    async def leave_table(self, code: str, player: str) -> TableInfo | None:
        """Leave a table; a leaving host hands it to the next human, or closes it (None)."""
        code = normalize_code(code)
        ttl = _us(self.options.table_ttl)
        data = await self._run(LeaveTableCall(code, player, ttl), code)
        return None if data.get("closed") else _table_info(code, data)

    async def start_table(self, code: str, player: str) -> FormedTable:
        """The host starts the table with its filled seats (at least 2); the table is removed."""
        code = normalize_code(code)
        data = await self._run(StartTableCall(code, player, _us(self.options.lease)), code)
        return _started(code, data, data["key"])

    async def seated_table(self, player: str) -> TableInfo | None:
        """The private table the player sits at (not started yet), or None."""
        code = await self.redis.hget(mm_key("seated"), player)
        if code is None:
            return None
        try:
            info = await self.table(code.decode() if isinstance(code, bytes) else code)
        except MatchError:  # the table expired meanwhile
            return None
        seated = any(s is not None and s.player == player for s in info.seats)
        return info if seated else None

    async def table(self, code: str) -> TableInfo:
        """The private table with that join code, or `bad_code`."""
        code = normalize_code(code)
        return _table_info(code, await self._run(TableCall(code), code))


def _us(seconds: float) -> int:
    return max(0, round(seconds * 1_000_000))
