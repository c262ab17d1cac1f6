"""Correspondence games: a turn lasts days instead of seconds.

A private table, a challenge (and the rematch of such a game) may ask for
`days` per move, one of `DAYS`; the game keeps it (`Game.days`) and every
deadline of a person's turn is that many days (steps.py). Everything else is as
in a real-time game: a seat whose time runs out is played for, one that keeps
running out is away until its player sends anything. Other features (the
notifications, the page) tell such a game by `is_correspondence`.
"""

from __future__ import annotations

from typing import Any, Protocol

from moose_server.errors import Refusal

__all__ = ["DAYS", "DAY_MS", "check_days", "days_info", "is_correspondence"]

DAYS = (1, 2, 3, 5, 7, 14)  # the days per move a game may ask for
DAY_MS = 86_400_000


class HasDays(Protocol):
    """A game, or anything else that knows its days per move (None: real time)."""

    @property
    def days(self) -> int | None:
        """Days per move, or None for a real-time game."""


def check_days(value: Any) -> int | None:
    """A message's `days` (absent or null: None, real time), or bad_message."""
    if value is None:
        return None
    if isinstance(value, bool) or value not in DAYS:
        allowed = ", ".join(map(str, DAYS))
        raise Refusal("bad_message", f"days must be one of {allowed} (or absent: real time)")
    return int(value)


def is_correspondence(game: HasDays) -> bool:
    """Whether the game is played days per move (not in real time)."""
    return game.days is not None


def days_info(days: int | None) -> dict[str, Any]:
    """`days` of `match`, `start`, `state` and `table`: only for a correspondence game."""
    return {"days": days} if days is not None else {}
