"""How a Lua script is found and registered, and the typed calls of storage's own scripts.

A script reads its KEYS and ARGV by position. Each script has one frozen
dataclass whose `build` returns (KEYS, ARGV) in the order the script reads
them, so that a caller names every argument (``CommitCall(game=..., expected=...)``)
and the order lives in one place, next to the script's source: store.py's
scripts (lua/*.lua) have theirs here, a feature's are in its calls.py beside
its lua/. Key names come from keys.py; a script never builds one.
tests/test_scripts.py checks each `build` against the KEYS and ARGV indices its
script reads.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, ClassVar

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

from moose_server.storage.codec import pack
from moose_server.storage.keys import (
    GAMES_CHANNEL,
    LIVE_GAMES_KEY,
    LIVE_INFO_KEY,
    ONLINE_COUNTS_KEY,
    ONLINE_KEY,
    GameKeys,
    deadlines_key,
    polled_key,
)

__all__ = [
    "CALLS",
    "Argv",
    "ClaimCall",
    "CommitCall",
    "DeferCall",
    "FollowCall",
    "LimitCall",
    "LiveAddCall",
    "LiveRemoveCall",
    "OnlineCall",
    "SpareCall",
    "lua_folder",
    "register",
    "source",
]

Argv = list[Any]


# Scripts that change nothing: no nonce kept, no mm_end.lua.
_READ_ONLY = frozenset({"mm_table"})


def lua_folder(script: str) -> Traversable:
    """The `lua/` folder holding <script>.lua: the one of the package whose script it is."""
    root = resources.files("moose_server")
    for package in sorted(root.iterdir(), key=lambda p: p.name):
        folder = package / "lua"
        if (folder / f"{script}.lua").is_file():
            return folder
    raise FileNotFoundError(f"no package of moose_server has lua/{script}.lua")


@functools.cache
def source(script: str) -> str:
    """The text of <script>.lua; a matchmaking script comes with its prelude and epilogue,
    an arena's with the prelude naming its keys."""
    lua = lua_folder(script)
    body = (lua / f"{script}.lua").read_text()
    if script.startswith("arena_"):
        return "\n".join(((lua / "arena_lib.lua").read_text(), body))
    if not script.startswith("mm_"):
        return body
    end = "return main()\n" if script in _READ_ONLY else (lua / "mm_end.lua").read_text()
    return "\n".join(((lua / "mm_lib.lua").read_text(), body, end))


def register(redis: aioredis.Redis, call: type[Any]) -> AsyncScript:
    """The script of a call type on a bare client (play/ceiling.py measures Redis alone
    with one); the server's own calls go through the gateway (gateway.py)."""
    return redis.register_script(source(call.SCRIPT))


# -- games --------------------------------------------------------------------------


@dataclass  # not frozen: made for every step, and a frozen one's __init__ costs 3x (~3 us)
class CommitCall:
    """One step of a game (lua/commit.lua): version check, move id, state, events, deadline.

    `data`, each event and its state snapshot may come packed already (bytes); a
    snapshot of None is not kept. `deadline_ms`: from now (> 0), 0 clears it, -1
    keeps it. `ttl` > 0 ends the game: its hash is kept that long (s), its stream
    and move ids `grace_ms`. `auto`: the server plays the seat to act next;
    `autos`, where given, says it per event (a step with forced passes folded in).
    `record`: the packed record of a rated game this commit ends (kept
    `record_ttl` s). `due`: a timeout's, the deadline it fires for; a deadline
    deferred since (DeferCall) makes the commit stale.
    """

    SCRIPT: ClassVar[str] = "commit"

    game: str
    expected: int  # the version the step was made on
    data: dict[str, Any] | bytes
    events: Sequence[tuple[dict[str, Any] | bytes, dict[str, Any] | bytes | None]]
    deadline_ms: int
    move_field: str = ""  # keys.move_field of the player's move id; "" for none
    ttl: int = 0
    record: bytes = b""
    record_ttl: int = 0
    auto: bool = False
    autos: Sequence[bool] = ()  # per event; () : `auto` for every event
    grace_ms: int = 0
    channel: bytes = GAMES_CHANNEL  # the wake-up's while no instance follows the game
    due: int = 0  # a timeout's deadline (ms), which the game must still have; 0: any
    own: bytes = b""  # the committing instance's wake-up channel: its hub has the events
    # msgpack [event, state, ...] (every event with the state after it): the followers'
    # wake-up on their sharded step channels; None: wake-ups only (a cluster).
    step: bytes | None = None
    # The game now waits days for a person's move: its stream is written anew at its
    # size, without the room a stream keeps for entries to come (lua/commit.lua).
    compact: bool = False
    # A channel listed as the game's follower if none is yet: the dealing instance's,
    # whose sockets play the game, with the game's first step (no follow.lua call).
    follow: bytes = b""

    def build(self, keys: GameKeys, now: int = 0) -> tuple[list[str], Argv]:
        """KEYS and ARGV as commit.lua reads them, for the game's `keys`; `now`: Redis'
        time (ms) as the caller tells it (Store.redis_now), 0 for the script's TIME."""
        argv: Argv = [
            self.expected,
            self.move_field,
            _packed(self.data),
            self.deadline_ms,
            self.game,
            self.channel,
            self.ttl,
            min(self.grace_ms, self.ttl * 1000) if self.ttl else 0,
            self.record,
            self.record_ttl,
            len(self.events),
            self.due,
            self.own,
            b"" if self.step is None else keys.steps,
            self.step or b"",
            int(self.compact),
            self.follow,
            now,
        ]
        autos = self.autos or [self.auto] * len(self.events)
        for (event, state), auto in zip(self.events, autos, strict=True):
            argv += [_packed(event), b"" if state is None else _packed(state), int(auto)]
        return [keys.game, keys.events, keys.deadlines, keys.unrated, keys.record, keys.moves], argv


@dataclass(frozen=True)
class FollowCall:
    """An instance follows a game (lua/follow.lua): the game's wake-ups come to its
    `channel`, or to `everyone` once `most` channels are listed."""

    SCRIPT: ClassVar[str] = "follow"

    channel: bytes
    everyone: bytes = GAMES_CHANNEL
    most: int = 8

    def build(self, keys: GameKeys) -> tuple[list[str], Argv]:
        """KEYS and ARGV as follow.lua reads them, for the game's `keys`."""
        return [keys.game], [self.channel, self.everyone, self.most]


@dataclass(frozen=True)
class ClaimCall:
    """Claim the due deadlines of one bucket (lua/claim.lua), or move them after an outage."""

    SCRIPT: ClassVar[str] = "claim"

    bucket: int
    lease_ms: int
    limit: int  # entries claimed at most
    outage_ms: int  # no claim of the bucket for longer: the service was down
    grace_ms: int  # then every deadline is at least this far after it is back
    # The Redis time of the caller's last claim of this bucket (0: none): a poll
    # stamp older than it means Redis lost its last writes, an outage too.
    seen_ms: int = 0

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as claim.lua reads them."""
        keys = [deadlines_key(self.bucket), polled_key(self.bucket)]
        return keys, [self.lease_ms, self.limit, self.outage_ms, self.grace_ms, self.seen_ms]


@dataclass(frozen=True)
class DeferCall:
    """Defer a game's deadlines `grace_ms` from now at least (lua/defer.lua): its
    players are being told that Redis lost its last writes."""

    SCRIPT: ClassVar[str] = "defer"

    game: str
    grace_ms: int

    def build(self, keys: GameKeys) -> tuple[list[str], Argv]:
        """KEYS and ARGV as defer.lua reads them, for the game's `keys`."""
        return [keys.game, keys.deadlines], [self.game, self.grace_ms]


@dataclass(frozen=True)
class SpareCall:
    """Move a game's deadline, due now, `grace_ms` from now, once a turn
    (lua/spare.lua): the seat to act is a player whose instance died."""

    SCRIPT: ClassVar[str] = "spare"

    game: str
    version: int
    due_ms: int
    grace_ms: int

    def build(self, keys: GameKeys) -> tuple[list[str], Argv]:
        """KEYS and ARGV as spare.lua reads them, for the game's `keys`."""
        return [keys.game, keys.deadlines], [self.game, self.version, self.due_ms, self.grace_ms]


@dataclass(frozen=True)
class LimitCall:
    """Take a token from a rate limit (lua/limit.lua), or give one back (`give`)."""

    SCRIPT: ClassVar[str] = "limit"

    key: str  # keys.limit_key
    interval_ms: int
    burst: int = 0
    give: bool = False

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as limit.lua reads them."""
        return [self.key], [self.interval_ms, self.burst, "give" if self.give else "take"]


@dataclass(frozen=True)
class LiveAddCall:
    """List a public game among the live ones (lua/live_add.lua), keeping the newest `kept`."""

    SCRIPT: ClassVar[str] = "live_add"

    game: str
    summary: bytes  # packed
    kept: int
    started: int = 0  # the game's start (Redis ms, its first commit's); 0: Redis' clock now

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as live_add.lua reads them."""
        return [LIVE_GAMES_KEY, LIVE_INFO_KEY], [self.game, self.summary, self.kept, self.started]


@dataclass(frozen=True)
class LiveRemoveCall:
    """Forget games of the index of live games (lua/live_remove.lua)."""

    SCRIPT: ClassVar[str] = "live_remove"

    games: tuple[str, ...]

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as live_remove.lua reads them."""
        return [LIVE_GAMES_KEY, LIVE_INFO_KEY], list(self.games)


@dataclass(frozen=True)
class OnlineCall:
    """Write an instance's count of players (lua/online.lua); it answers the service's."""

    SCRIPT: ClassVar[str] = "online"

    instance: str
    players: int
    ttl_ms: int  # until the entry lapses

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as online.lua reads them."""
        return [ONLINE_KEY, ONLINE_COUNTS_KEY], [self.instance, self.players, self.ttl_ms]


def _packed(value: dict[str, Any] | bytes) -> bytes:
    return value if isinstance(value, bytes) else pack(value)


# The storage's own calls, one per script of storage/lua/; each feature lists its
# own in its calls.py (tests/test_scripts.py checks that none is missing).
CALLS: tuple[type[Any], ...] = (
    CommitCall,
    ClaimCall,
    DeferCall,
    FollowCall,
    LimitCall,
    LiveAddCall,
    LiveRemoveCall,
    OnlineCall,
    SpareCall,
)
