"""Matchmaking: the public queue and private tables, with every fact in Redis.

Several server instances share one queue. Each state change is one Lua script
(lua/mm_*.lua) over keys that share the ``{mm}`` hash tag, so it is atomic and
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
from dataclasses import dataclass
from importlib import resources
from typing import Any

from moose_server.accounts.names import distinct
from moose_server.errors import Refusal
from moose_server.storage.batch import Batcher

__all__ = [
    "BOT_NAMES",
    "CODE_ALPHABET",
    "FormedTable",
    "MatchError",
    "Matchmaker",
    "Seat",
    "TableInfo",
    "mm_keys",
]

MIN_PLAYERS, MAX_PLAYERS = 2, 6
HASH_TAG = "{mm}"


def queue_key(prefix: str) -> str:
    """Sorted set: player -> ticket time (Redis microseconds, strictly increasing)."""
    return f"{prefix}:{HASH_TAG}:queue"


def tickets_key(prefix: str) -> str:
    """Hash: player -> ticket JSON {name, min, max, inst}."""
    return f"{prefix}:{HASH_TAG}:tickets"


def counts_key(prefix: str) -> str:
    """Hash: requested max_players -> players waiting with it."""
    return f"{prefix}:{HASH_TAG}:counts"


def clock_key(prefix: str) -> str:
    """String: the last ticket time handed out."""
    return f"{prefix}:{HASH_TAG}:clock"


def tables_key(prefix: str) -> str:
    """Hash: join code -> private table JSON {host, players, seats}."""
    return f"{prefix}:{HASH_TAG}:tables"


def expiry_key(prefix: str) -> str:
    """Sorted set: join code -> when the table expires (Redis microseconds)."""
    return f"{prefix}:{HASH_TAG}:table_expiry"


def seated_key(prefix: str) -> str:
    """Hash: player -> join code of the private table they sit at."""
    return f"{prefix}:{HASH_TAG}:seated"


def done_key(prefix: str) -> str:
    """Hash: call nonce -> the script's reply, so a re-sent call is answered once."""
    return f"{prefix}:{HASH_TAG}:done"


def done_at_key(prefix: str) -> str:
    """Sorted set: call nonce -> when its reply was stored."""
    return f"{prefix}:{HASH_TAG}:done_at"


def instances_key(prefix: str) -> str:
    """Hash: server instance id -> tickets taken through it (to find a dead one's)."""
    return f"{prefix}:{HASH_TAG}:instances"


def starting_key(prefix: str) -> str:
    """Hash: start key -> a formed table whose game is not dealt yet (see mm_lib.lua)."""
    return f"{prefix}:{HASH_TAG}:starting"


def starting_at_key(prefix: str) -> str:
    """Sorted set: start key -> when another instance may deal it (Redis microseconds)."""
    return f"{prefix}:{HASH_TAG}:starting_at"


def mm_keys(prefix: str) -> list[str]:
    """Every matchmaking key, in the order the scripts read KEYS."""
    return [
        queue_key(prefix),
        tickets_key(prefix),
        counts_key(prefix),
        clock_key(prefix),
        tables_key(prefix),
        expiry_key(prefix),
        seated_key(prefix),
        done_key(prefix),
        done_at_key(prefix),
        instances_key(prefix),
        starting_key(prefix),
        starting_at_key(prefix),
    ]


# No 0/O, 1/I/L: a join code is read aloud and typed by hand. 31**8 = 8.5e11
# codes: with the guess limit (limits.CodeGuard) finding any one of the tables
# waiting takes far longer than a table waits (deploy/README.md has the sums).
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 8
_CODE_RE = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")

try:
    from moose.bots import BOTS as _BOTS

    BOT_NAMES: frozenset[str] = frozenset(_BOTS)
except ImportError:  # the bots module is optional for the server
    BOT_NAMES = frozenset({"random", "greedy"})

_SCRIPTS = ("enqueue", "leave", "form", "forget", "create", "join", "add_bot", "leave_table",
            "start", "started", "table")  # fmt: skip
_READ_ONLY = frozenset({"table"})


@dataclass(frozen=True)
class Seat:
    """One seat of a table: a human has a player id, a bot has a bot name."""

    player: str | None
    name: str
    bot: str | None  # the server's bot playing it (its kind)
    is_bot: bool = False  # a player who said hello as a bot

    def as_dict(self) -> dict[str, Any]:
        """The seat as PROTOCOL.md writes it in a `table` message."""
        return {"name": self.name, "player": self.player, "bot": self.bot,
                "is_bot": self.bot is not None or self.is_bot}  # fmt: skip


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

    def as_message(self) -> dict[str, Any]:
        """The `table` message of PROTOCOL.md (without `id`)."""
        filled = [i for i, s in enumerate(self.seats) if s is not None]
        shown = iter(distinct([s.name for s in self.seats if s is not None], filled))
        seats = [None if s is None else {**s.as_dict(), "name": next(shown)} for s in self.seats]
        return {"type": "table", "code": self.code, "host": self.host,
                "players": self.players, "seats": seats, "rated": self.rated}  # fmt: skip


class MatchError(Refusal):
    """A player's request the matchmaker refuses; `code` is a PROTOCOL.md error code."""


def _load_script(name: str) -> str:
    lua = resources.files("moose_server.storage") / "lua"
    body = (lua / f"mm_{name}.lua").read_text()
    end = "return main()\n" if name in _READ_ONLY else (lua / "mm_end.lua").read_text()
    return "\n".join(((lua / "mm_lib.lua").read_text(), body, end))


def _seat(data: dict[str, Any]) -> Seat:
    return Seat(data.get("player"), data["name"], data.get("bot"), bool(data.get("is_bot")))


def _table_info(code: str, data: dict[str, Any]) -> TableInfo:
    seats = [None if s is None else _seat(s) for s in data["seats"]]
    return TableInfo(code, data["host"], int(data["players"]), seats, bool(data.get("rated")))


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
    }
    return MatchError(kind, messages.get(kind, kind))


def _check_count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MatchError("bad_message", f"{what} must be an integer")
    if not MIN_PLAYERS <= value <= MAX_PLAYERS:
        raise MatchError("bad_message", f"{what} must be {MIN_PLAYERS} to {MAX_PLAYERS}")
    return value


def normalize_code(code: str) -> str:
    """A join code as typed (any case, spaces) in its stored form, or `bad_code`."""
    clean = code.strip().upper().replace(" ", "").replace("-", "") if isinstance(code, str) else ""
    if not _CODE_RE.fullmatch(clean):
        raise MatchError("bad_code", f"no private table has the code {str(code)[:16]!r}")
    return clean


class Matchmaker:
    """The public queue and the private tables of one service, shared by all instances."""

    def __init__(
        self,
        redis: Any,
        *,
        match_wait: float,
        queue_bots_after: float = 0,
        bot: str = "greedy",
        table_ttl: float = 3600,
        instance: str = "",
        prefix: str = "moose",
        scan: int = 128,
        tables: int = 8,
        lease: float = 30.0,
        batch: Batcher | None = None,
        window: float = 100.0,
        widen: float = 100.0,
    ) -> None:
        if bot not in BOT_NAMES:
            raise ValueError(f"unknown bot {bot!r} (known: {', '.join(sorted(BOT_NAMES))})")
        self.redis = redis
        self.match_wait = match_wait
        self.queue_bots_after = queue_bots_after
        self.bot = bot
        self.table_ttl = table_ttl
        self.instance = instance
        self.prefix = prefix
        # One form_tables call looks at the `scan` oldest tickets and forms `tables` at
        # most: a few milliseconds of Redis at most, whatever the queue's length.
        self.scan = scan
        self.tables = tables
        self.lease = lease  # a formed table not dealt within this is handed out again
        self._keys = mm_keys(prefix)
        self._scripts = {name: redis.register_script(_load_script(name)) for name in _SCRIPTS}
        self.batch = batch or Batcher(redis)  # the scripts run through it (as Store's calls)
        # Queue tables of players within `window` rating points, `widen` more a second waited.
        self.window, self.widen = window, widen

    async def _run(self, script: str, *args: Any, code: str | None = None) -> Any:
        # A fresh nonce per call: redis-py re-sends it unchanged when it retries (a
        # batch whose connection was lost).
        nonce = secrets.token_hex(8)
        raw = await self.batch.run_script(self._scripts[script], self._keys, [nonce, *args])
        data = json.loads(raw)
        if isinstance(data, dict) and "err" in data:
            raise _error(data, code)
        return data

    # -- the public queue ----------------------------------------------------

    async def enqueue(
        self, player: str, name: str, min_players: int = 2, max_players: int = 6,
        skill: int = 1500,
    ) -> int:  # fmt: skip
        """Queue a player for a table of min..max seats; return the ticket's time (ms).

        `skill` (ratings.skill) is what the queue compares to seat players of a level.
        """
        low = _check_count(min_players, "min_players")
        high = _check_count(max_players, "max_players")
        if low > high:
            raise MatchError("bad_message", "min_players must not exceed max_players")
        ticket = json.dumps({"name": name, "min": low, "max": high, "inst": self.instance,
                             "r": skill})  # fmt: skip
        data = await self._run("enqueue", player, ticket, high)
        return int(data["since"])

    async def leave(self, player: str) -> bool:
        """Take the player out of the queue; False when they were not queued."""
        return bool((await self._run("leave", player))["left"])

    async def form_tables(self) -> list[FormedTable]:
        """Seat whoever the queue can seat now (see mm_form.lua); atomic across instances.

        At most `tables` new tables a call: when it formed that many, call again.
        Tables formed earlier whose game was not dealt within the lease come again.
        Deal each table's game, then call `started(table.key)`.
        """
        args = (_us(self.match_wait), _us(self.queue_bots_after), self.scan, _us(self.lease),
                self.window, self.widen, self.tables)  # fmt: skip
        rows = await self._run("form", *args)
        return [self._formed(key, entry) for key, entry in rows or []]

    def full(self, tables: list[FormedTable]) -> bool:
        """Whether a `form_tables` call formed as many tables as it may: maybe more wait."""
        return sum(1 for t in tables if t.source == "queue") >= self.tables

    def _formed(self, key: str, entry: dict[str, Any]) -> FormedTable:
        if "t" in entry:
            seats = [_seat(s) for s in entry["seats"]]
            return FormedTable(seats, f"table:{entry['t']}", key, bool(entry.get("rated")))
        bots, flat = int(entry["q"][0]), entry["q"][1:]
        seats = [Seat(flat[i], flat[i + 1], None) for i in range(0, len(flat), 2)]
        seats += [Seat(None, f"{self.bot}-bot {n}", self.bot) for n in range(1, bots + 1)]
        return FormedTable(seats=seats, source="queue", key=key)

    async def started(self, key: str) -> None:
        """The game of the formed table `key` is dealt: it is not handed out again."""
        await self._run("started", key)

    async def queue_sizes(self) -> dict[str, int]:
        """Players waiting, by requested max_players ("2".."6")."""
        counts = await self.redis.hgetall(counts_key(self.prefix))
        sizes = {str(k): 0 for k in range(MIN_PLAYERS, MAX_PLAYERS + 1)}
        for key, value in counts.items():
            sizes[key.decode() if isinstance(key, bytes) else str(key)] = int(value)
        return sizes

    async def ticket_instances(self) -> dict[str, int]:
        """The instances that took the tickets waiting now, with how many each."""
        counts = await self.redis.hgetall(instances_key(self.prefix))
        return {k.decode(): int(v) for k, v in counts.items() if int(v) > 0}

    async def forget_instance(self, instance: str) -> int:
        """Drop the tickets taken through a dead instance; return how many."""
        return int((await self._run("forget", instance))["dropped"])

    # -- private tables --------------------------------------------------------

    async def create_table(
        self, host: str, name: str, players: int, rated: bool = False, is_bot: bool = False
    ) -> TableInfo:
        """Open a private table of `players` seats with the host in seat 0."""
        count = _check_count(players, "players")
        for _ in range(20):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            try:
                ttl = _us(self.table_ttl)
                data = await self._run("create", code, host, name, count, ttl, int(rated),
                                       int(is_bot))  # fmt: skip
            except MatchError as exc:
                if exc.code == "code_taken":  # 31**8 codes: a clash is rare, retry
                    continue
                raise
            return _table_info(code, data)
        raise RuntimeError("no free join code after 20 tries")

    async def join_table(
        self, code: str, player: str, name: str, is_bot: bool = False
    ) -> TableInfo:
        """Take the first empty seat of the table with that join code."""
        code = normalize_code(code)
        ttl = _us(self.table_ttl)
        data = await self._run("join", code, player, name, ttl, int(is_bot), code=code)
        return _table_info(code, data)

    async def add_bot(self, code: str, player: str, bot: str) -> TableInfo:
        """The host puts a built-in bot in the first empty seat."""
        code = normalize_code(code)
        if bot not in BOT_NAMES:
            known = ", ".join(sorted(BOT_NAMES))
            raise MatchError("bad_message", f"unknown bot {str(bot)[:24]!r} (known: {known})")
        data = await self._run("add_bot", code, player, bot, _us(self.table_ttl), code=code)
        return _table_info(code, data)

    async def leave_table(self, code: str, player: str) -> TableInfo | None:
        """Leave a table; a leaving host hands it to the next human, or closes it (None)."""
        code = normalize_code(code)
        data = await self._run("leave_table", code, player, _us(self.table_ttl), code=code)
        return None if data.get("closed") else _table_info(code, data)

    async def start_table(self, code: str, player: str) -> FormedTable:
        """The host starts the table with its filled seats (at least 2); the table is removed."""
        code = normalize_code(code)
        data = await self._run("start", code, player, _us(self.lease), code=code)
        seats = [_seat(s) for s in data["seats"]]
        return FormedTable(seats, f"table:{code}", data["key"], bool(data.get("rated")))

    async def seated_table(self, player: str) -> TableInfo | None:
        """The private table the player sits at (not started yet), or None."""
        code = await self.redis.hget(seated_key(self.prefix), player)
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
        return _table_info(code, await self._run("table", code, code=code))


def _us(seconds: float) -> int:
    return max(0, round(seconds * 1_000_000))
