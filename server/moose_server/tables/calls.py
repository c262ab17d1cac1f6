"""The typed calls of the rematch and challenge scripts (lua/invite_*.lua).

Each call's `build` returns (KEYS, ARGV) in the order its script reads them (see
storage/scripts.py); tests/test_scripts.py checks them against the Lua.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from moose_server.storage.keys import offer_key, open_offers_key
from moose_server.storage.scripts import Argv

__all__ = ["InviteAnswerCall", "InviteOfferCall"]


# Rematch and challenge offers (tables/invites.py).


@dataclass(frozen=True)
class InviteOfferCall:
    """Make an offer unless one is open (lua/invite_offer.lua); counts a challenger's."""

    SCRIPT: ClassVar[str] = "invite_offer"

    offer: str  # its id
    sender: str
    data: str  # the offer as JSON
    wait_ms: int
    most_open: int  # 0: not counted (a rematch)
    grace_ms: int

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as invite_offer.lua reads them."""
        keys = [offer_key(self.offer), open_offers_key(self.sender)]
        return keys, [self.data, self.wait_ms, self.most_open, self.grace_ms]


@dataclass(frozen=True)
class InviteAnswerCall:
    """Accept, decline, cancel or expire an offer, atomically (lua/invite_answer.lua)."""

    SCRIPT: ClassVar[str] = "invite_answer"

    offer: str
    sender: str
    action: str
    player: str
    reason: str = ""
    next_game: str = ""

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as invite_answer.lua reads them."""
        keys = [offer_key(self.offer), open_offers_key(self.sender)]
        return keys, [self.action, self.player, self.reason, self.next_game]


CALLS: tuple[type[Any], ...] = (
    InviteOfferCall,
    InviteAnswerCall,
)
