"""Moose House: the rules engine, game records, bots and the client library."""

from __future__ import annotations

from moose.rules import IllegalMove, InvalidGame, State

__all__ = ["IllegalMove", "InvalidGame", "State"]
__version__ = "0.1.0"
