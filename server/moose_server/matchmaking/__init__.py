"""The public queue and the tables it forms, the lobby that deals them, and the live games' list.

What other features may use of it is exported here (tests/test_layers.py).
"""

from __future__ import annotations

from moose_server.matchmaking.dealer import Lobby, game_id_of
from moose_server.matchmaking.matchmaker import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    Matchmaker,
    TableInfo,
    normalize_code,
)

__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "Lobby",
    "Matchmaker",
    "TableInfo",
    "game_id_of",
    "normalize_code",
]
