"""The typed calls of the players' scripts: ratings, histories, account claims, password upgrades.

Each call's `build` returns (KEYS, ARGV) in the order its script reads them (see
storage/scripts.py); tests/test_scripts.py checks them against the Lua.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from moose_server.accounts.ratings import POOLS, field
from moose_server.storage.keys import (
    GUESTS_KEY,
    NAMES_KEY,
    history_key,
    listed_key,
    profile_key,
    rated_key,
    top_key,
)
from moose_server.storage.scripts import Argv

__all__ = ["AccountClaimCall", "HistoryCall", "PasswordUpgradeCall", "RateCall", "RatedSeat"]


# -- players ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RatedSeat:
    """One seat's part of a rating update (see lua/rate.lua)."""

    player: str
    name: str
    bot: bool
    mu_delta: float
    sigma_ratio: float
    entry: str  # the history entry, JSON


@dataclass(frozen=True)
class RateCall:
    """Apply a finished game's rating changes once (lua/rate.lua)."""

    SCRIPT: ClassVar[str] = "rate"

    game: str
    seats: Sequence[RatedSeat]
    marker_ttl: int  # s: how long the "rated" marker stays
    history_size: int
    guest_ttl_ms: int
    provisional_games: int
    base: float  # the display scale of ratings.display
    scale: float
    base_ordinal: float
    spread: float
    mu: float  # a newcomer's
    sigma: float
    pool: str = "realtime"  # the rating pool of the game (ratings.POOLS)

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as rate.lua reads them."""
        other = next(p for p in POOLS if p != self.pool)
        keys = [
            rated_key(self.game),
            top_key("humans", self.pool),
            top_key("bots", self.pool),
            GUESTS_KEY,
            top_key("humans", other),
            top_key("bots", other),
        ]
        argv: Argv = [
            self.marker_ttl,
            self.history_size,
            self.guest_ttl_ms,
            self.provisional_games,
            self.base,
            self.scale,
            self.base_ordinal,
            self.spread,
            self.mu,
            self.sigma,
            len(self.seats),
            field(self.pool, ""),
        ]
        for s in self.seats:
            keys += [profile_key(s.player), history_key(s.player)]
            argv += [s.player, s.name, int(s.bot), repr(s.mu_delta), repr(s.sigma_ratio), s.entry]
        return keys, argv


@dataclass(frozen=True)
class HistoryCall:
    """Put a finished game in the histories of the players it did not rate, once
    (lua/history.lua)."""

    SCRIPT: ClassVar[str] = "history"

    game: str
    entries: Sequence[tuple[str, str]]  # (player, history entry JSON)
    marker_ttl: int  # s: how long the "listed" marker stays
    history_size: int
    guest_ttl_ms: int

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as history.lua reads them."""
        keys = [listed_key(self.game)]
        argv: Argv = [self.marker_ttl, self.history_size, self.guest_ttl_ms, len(self.entries)]
        for player, entry in self.entries:
            keys += [profile_key(player), history_key(player)]
            argv.append(entry)
        return keys, argv


@dataclass(frozen=True)
class AccountClaimCall:
    """Make a player an account under a name (lua/account_claim.lua)."""

    SCRIPT: ClassVar[str] = "account_claim"

    player: str
    name_key: str  # the name's look-alike key (identity.name_key)
    name: str
    pw: str  # the password's scrypt hash
    bot: bool
    now: int  # ms

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as account_claim.lua reads them."""
        keys = [NAMES_KEY, profile_key(self.player), history_key(self.player), GUESTS_KEY]
        return keys, [self.name_key, self.player, self.name, self.pw, int(self.bot), self.now]


@dataclass(frozen=True)
class PasswordUpgradeCall:
    """Logins: a verified password's hash of older parameters replaced by one
    of today's (lua/pw_upgrade.lua), unless the password changed meanwhile."""

    SCRIPT: ClassVar[str] = "pw_upgrade"

    player: str
    old: str  # the hash the login verified
    new: str

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as pw_upgrade.lua reads them."""
        return [profile_key(self.player)], [self.old, self.new]


CALLS: tuple[type[Any], ...] = (
    RateCall,
    HistoryCall,
    AccountClaimCall,
    PasswordUpgradeCall,
)
