"""Which turn a typed move number answers, for `moose play`.

A number is bound to the menu that was on screen when its line began to be
typed, never to whatever turn is current when it is read: a number typed for a
turn whose time ran out must not land on the next one. Just after the server
played a timed-out turn of ours, the next menu may be drawn before the player
could have read it, so a number that comes within `LATE_GRACE` seconds of it is
taken as the late answer to the turn that ran out.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LATE_GRACE", "TurnMenus"]

LATE_GRACE = 1.0  # seconds: no one reads a new menu and types a number faster


@dataclass
class TurnMenus:
    """The menu of moves on screen: the seq of the event it answers, and when it came."""

    seq: int | None = None
    shown_at: float | None = None
    timed_out: bool = False  # the server played our last turn: our time ran out

    def shown(self, seq: int, at: float) -> None:
        """A new menu of moves is on screen, for the event at `seq`."""
        self.seq, self.shown_at = seq, at

    def carried(self, seq: int) -> None:
        """The same menu now answers the event at `seq` (an `away` or `back` between)."""
        if self.seq is not None:
            self.seq = seq

    def ran_out(self) -> None:
        """Our time ran out and the server played our turn."""
        self.seq, self.timed_out = None, True

    def answered_by(self, typed_at: float) -> int | None:
        """The seq a line typed at `typed_at` answers; None when it was for an earlier turn.

        Each line settles a timeout once: the number after a "too late" is read
        against the menu as usual.
        """
        late, self.timed_out = self.timed_out, False
        if self.seq is None or self.shown_at is None or typed_at < self.shown_at:
            return None
        if late and typed_at < self.shown_at + LATE_GRACE:
            return None
        return self.seq
