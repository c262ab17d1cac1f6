"""The typed calls of the arena scripts (lua/arena_*.lua).

Each call's `build` returns (KEYS, ARGV) in the order its script reads them (see
storage/scripts.py); tests/test_scripts.py checks them against the Lua.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from moose_server.storage.keys import ArenaKeys
from moose_server.storage.scripts import Argv

__all__ = [
    "ArenaCall",
    "ArenaCreateCall",
    "ArenaFinishCall",
    "ArenaMemberCall",
    "ArenaScoreCall",
    "ArenaSeatCall",
    "ArenaStartedCall",
]


# -- arena tournaments: every script gets one arena's ArenaKeys ----


@dataclass(frozen=True)
class ArenaCall:
    """An arena script (lua/arena_*.lua): KEYS are the arena's `ArenaKeys`; ARGV the
    call's fields in their order (booleans as 1/0), as the script's header lists them."""

    SCRIPT: ClassVar[str] = ""

    arena: str

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as the script reads them."""
        values = (getattr(self, f.name) for f in dataclasses.fields(self))
        return ArenaKeys.of(self.arena).all(), [
            int(v) if isinstance(v, bool) else v for v in values
        ]


@dataclass(frozen=True)
class ArenaCreateCall(ArenaCall):
    """Create an arena unless that id exists."""

    SCRIPT: ClassVar[str] = "arena_create"

    name: str
    who: str  # bots, people or all
    min_players: int
    max_players: int
    start_ms: int  # 0: now (Redis' clock)
    duration_ms: int
    rated: bool
    by: str


@dataclass(frozen=True)
class ArenaMemberCall(ArenaCall):
    """A member joins, pauses or leaves."""

    SCRIPT: ClassVar[str] = "arena_member"

    player: str
    action: str  # join, pause, leave
    member: str = "{}"  # JSON {name, min, max, bot, r} for join


@dataclass(frozen=True)
class ArenaSeatCall(ArenaCall):
    """Seat the waiting members; hand out again the tables not dealt in time."""

    SCRIPT: ClassVar[str] = "arena_seat"

    lease_ms: int
    scan: int


@dataclass(frozen=True)
class ArenaStartedCall(ArenaCall):
    """An arena table's game is dealt."""

    SCRIPT: ClassVar[str] = "arena_started"

    key: str


@dataclass(frozen=True)
class ArenaScoreCall(ArenaCall):
    """Apply a finished arena game's points, once."""

    SCRIPT: ClassVar[str] = "arena_score"

    game: str
    result: str  # JSON {players, points, places, away}


@dataclass(frozen=True)
class ArenaFinishCall(ArenaCall):
    """Close an arena whose window is over, or end its window now."""

    SCRIPT: ClassVar[str] = "arena_finish"

    now: bool = False
    keep: int = 30 * 86400  # a closed arena's standings and games are kept this long (s)


CALLS: tuple[type[Any], ...] = (
    ArenaCreateCall,
    ArenaMemberCall,
    ArenaSeatCall,
    ArenaStartedCall,
    ArenaScoreCall,
    ArenaFinishCall,
)
