"""A seat of a table or a game: who sits there, a person (by player id) or a bot.

The one type for a seat: the matchmaker forms tables of them, the dealer deals
a game for them (`Games.create`), and results look up their ratings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Seat"]


@dataclass(frozen=True)
class Seat:
    """One seat of a table: a human has a player id, a bot has a bot name."""

    player: str | None
    name: str
    bot: str | None  # the server's bot playing it (its kind)
    is_bot: bool = False  # a player who said hello as a bot
    fair: bool = False  # asked for a provably fair deal: may send a seed

    def as_dict(self) -> dict[str, Any]:
        """The seat as PROTOCOL.md writes it in a `table` message."""
        return {
            "name": self.name,
            "player": self.player,
            "bot": self.bot,
            "is_bot": self.bot is not None or self.is_bot,
        }
