"""The typed calls of the matchmaking scripts (lua/mm_*.lua).

Each call's `build` returns (KEYS, ARGV) in the order its script reads them (see
storage/scripts.py); tests/test_scripts.py checks them against the Lua.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from moose_server.storage.keys import SEEK_NAMES_KEY, mm_done_key, mm_keys, seeks_key
from moose_server.storage.scripts import Argv

__all__ = [
    "AddBotCall",
    "BotsCall",
    "CreateTableCall",
    "EnqueueCall",
    "ForgetCall",
    "FormCall",
    "JoinTableCall",
    "LeaveCall",
    "LeaveTableCall",
    "MatchCall",
    "RangeCall",
    "SeekCall",
    "StartTableCall",
    "StartedCall",
    "TableCall",
]


# -- matchmaking ----------------------------------------------------------------------


@dataclass(frozen=True)
class MatchCall:
    """A matchmaking script (lua/mm_*.lua): KEYS are every `mm_keys` and the call's
    `mm_done_key`; ARGV a nonce, then the call's fields in their order (booleans as
    1/0), as the script's header lists them."""

    SCRIPT: ClassVar[str] = ""

    def build(self, nonce: str) -> tuple[list[str], Argv]:
        """KEYS and ARGV as the script reads them; `nonce` answers a re-sent call once."""
        values = (getattr(self, f.name) for f in dataclasses.fields(self))
        keys = [*mm_keys(), mm_done_key(nonce)]
        return keys, [nonce, *(int(v) if isinstance(v, bool) else v for v in values)]


@dataclass(frozen=True)
class EnqueueCall(MatchCall):
    """Put a ticket in the queue."""

    SCRIPT: ClassVar[str] = "mm_enqueue"

    player: str
    ticket: str  # JSON {name, min, max, inst, r}
    max_players: int


@dataclass(frozen=True)
class LeaveCall(MatchCall):
    """Take a player's ticket out of the queue."""

    SCRIPT: ClassVar[str] = "mm_leave"

    player: str


@dataclass(frozen=True)
class RangeCall(MatchCall):
    """Change the sizes a waiting ticket accepts, keeping its place."""

    SCRIPT: ClassVar[str] = "mm_range"

    player: str
    min_players: int
    max_players: int


@dataclass(frozen=True)
class BotsCall(MatchCall):
    """A waiting player asks for a table of `players` with bots in the empty seats."""

    SCRIPT: ClassVar[str] = "mm_bots"

    player: str
    players: int
    offer_after_us: int  # the ticket must have waited this long


@dataclass(frozen=True)
class FormCall(MatchCall):
    """Seat whoever the queue can seat now."""

    SCRIPT: ClassVar[str] = "mm_form"

    match_wait_us: int
    bots_after_us: int  # 0 = never
    scan: int  # the oldest tickets looked at
    lease_us: int
    window: float  # rating points apart at once...
    widen: float  # ...and more a second waited
    most: int  # tables formed at most


@dataclass(frozen=True)
class ForgetCall(MatchCall):
    """Drop every ticket taken through one server instance."""

    SCRIPT: ClassVar[str] = "mm_forget"

    instance: str


@dataclass(frozen=True)
class CreateTableCall(MatchCall):
    """Open a private table with the host in seat 0."""

    SCRIPT: ClassVar[str] = "mm_create"

    code: str
    host: str
    name: str
    players: int
    ttl_us: int
    rated: bool
    host_is_bot: bool
    fair: bool = False  # the host asked for a provably fair deal
    days: int = 0  # days per move of a correspondence game; 0: real time


@dataclass(frozen=True)
class JoinTableCall(MatchCall):
    """Take the first empty seat of a private table."""

    SCRIPT: ClassVar[str] = "mm_join"

    code: str
    player: str
    name: str
    ttl_us: int
    is_bot: bool
    fair: bool = False  # the player asked for a provably fair deal


@dataclass(frozen=True)
class AddBotCall(MatchCall):
    """The host puts a bot in the first empty seat."""

    SCRIPT: ClassVar[str] = "mm_add_bot"

    code: str
    player: str
    bot: str
    ttl_us: int


@dataclass(frozen=True)
class LeaveTableCall(MatchCall):
    """A player leaves a private table."""

    SCRIPT: ClassVar[str] = "mm_leave_table"

    code: str
    player: str
    ttl_us: int


@dataclass(frozen=True)
class StartTableCall(MatchCall):
    """The host starts a private table."""

    SCRIPT: ClassVar[str] = "mm_start"

    code: str
    player: str
    lease_us: int


@dataclass(frozen=True)
class StartedCall(MatchCall):
    """The games of formed tables have been dealt: forget the tables (`key`, `more`)."""

    SCRIPT: ClassVar[str] = "mm_started"

    key: str
    more: tuple[str, ...] = ()  # sent as arguments of their own, after `key`

    def build(self, nonce: str) -> tuple[list[str], Argv]:
        """KEYS and ARGV as mm_started.lua reads them: the nonce, then every key."""
        return [*mm_keys(), mm_done_key(nonce)], [nonce, self.key, *self.more]


@dataclass(frozen=True)
class TableCall(MatchCall):
    """Read a private table."""

    SCRIPT: ClassVar[str] = "mm_table"

    code: str


@dataclass(frozen=True)
class SeekCall:
    """A correspondence ticket (lua/seek.lua): paired with the oldest other one of the same
    days per move, or queued; tickets older than `ttl_ms` are dropped first."""

    SCRIPT: ClassVar[str] = "seek"

    player: str
    name: str
    days: int
    ttl_ms: int

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as seek.lua reads them."""
        keys = [seeks_key(self.days), SEEK_NAMES_KEY]
        return keys, [self.player, self.name, self.days, self.ttl_ms]


CALLS: tuple[type[Any], ...] = (
    SeekCall,
    EnqueueCall,
    LeaveCall,
    RangeCall,
    BotsCall,
    FormCall,
    ForgetCall,
    CreateTableCall,
    JoinTableCall,
    AddBotCall,
    LeaveTableCall,
    StartTableCall,
    StartedCall,
    TableCall,
)
