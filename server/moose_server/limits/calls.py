"""The typed calls of the holds' scripts (lua/hold.lua, lua/sessions.lua).

Each call's `build` returns (KEYS, ARGV) in the order its script reads them (see
storage/scripts.py); tests/test_scripts.py checks them against the Lua.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from moose_server.storage.scripts import Argv

__all__ = ["HoldCall", "SessionsCall"]


# -- holds: what one client holds ---------------------------------------------


@dataclass(frozen=True)
class HoldCall:
    """Take, swap or drop an id in what one client holds (lua/hold.lua)."""

    SCRIPT: ClassVar[str] = "hold"

    key: str  # keys.hold_key
    op: str  # "take" (only under `limit`), "swap" (`old` becomes `id`), "drop"
    id: str
    limit: int = 0
    ttl_ms: int = 0
    old: str = ""

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as hold.lua reads them."""
        return [self.key], [self.op, self.limit, self.ttl_ms, self.id, self.old]


@dataclass(frozen=True)
class SessionsCall:
    """One more, one fewer, or a renewed lease of one process' bot sessions of an address
    (lua/sessions.lua)."""

    SCRIPT: ClassVar[str] = "sessions"

    key: str  # keys.sessions_key
    op: str  # "enter", "leave", "renew"
    process: str
    limit: int = 0
    lease_ms: int = 0

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as sessions.lua reads them."""
        return [self.key], [self.op, self.process, self.limit, self.lease_ms]


CALLS: tuple[type[Any], ...] = (
    HoldCall,
    SessionsCall,
)
