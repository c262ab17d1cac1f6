"""The typed calls of the fair deals' scripts (lua/deal_*.lua).

Each call's `build` returns (KEYS, ARGV) in the order its script reads them (see
storage/scripts.py); tests/test_scripts.py checks them against the Lua.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from moose_server.storage.keys import GameKeys
from moose_server.storage.scripts import Argv

__all__ = ["DealCloseCall", "DealOpenCall", "DealSeedCall"]


# -- provably fair deals ------------------------------------------------------


@dataclass(frozen=True)
class DealOpenCall:
    """A fair deal waits for the seats' seeds (lua/deal_open.lua); its deadline member
    fires `seed_time_ms` from now. `ttl` (s) bounds the deal hash should nobody deal it."""

    SCRIPT: ClassVar[str] = "deal_open"

    keys: GameKeys
    data: bytes  # packed
    seed_time_ms: int
    ttl: int
    fair_seats: tuple[int, ...]

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as deal_open.lua reads them."""
        k = self.keys
        return [k.deal, k.game, k.deadlines], [
            k.deal_member,
            self.data,
            self.seed_time_ms,
            self.ttl,
            *self.fair_seats,
        ]


@dataclass(frozen=True)
class DealSeedCall:
    """A seat's seed for a waiting deal (lua/deal_seed.lua); the last one closes it."""

    SCRIPT: ClassVar[str] = "deal_seed"

    keys: GameKeys
    seat: int
    seed: str
    nonce: str  # a resent call (redis-py's retry) gets the first answer

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as deal_seed.lua reads them."""
        return [self.keys.deal, self.keys.game], [self.seat, self.seed, self.nonce]


@dataclass(frozen=True)
class DealCloseCall:
    """Close a waiting deal to seeds and read it (lua/deal_close.lua)."""

    SCRIPT: ClassVar[str] = "deal_close"

    keys: GameKeys

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as deal_close.lua reads them."""
        return [self.keys.deal, self.keys.deadlines], [self.keys.deal_member]


CALLS: tuple[type[Any], ...] = (
    DealOpenCall,
    DealSeedCall,
    DealCloseCall,
)
