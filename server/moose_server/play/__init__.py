"""Games in play: a move from load to commit, event streams, deadlines, results.

What other features may use of it is exported here (tests/test_layers.py).
"""

from __future__ import annotations

from moose_server.play.codes import CODE_ALPHABET, CODE_LENGTH, clean_code
from moose_server.play.game import (
    NOT_SHOWN,
    Game,
    GameError,
    match_message,
    seat_info,
    seat_info_of,
    summary,
    table_match,
)
from moose_server.play.games import Games
from moose_server.play.hub import Hub
from moose_server.play.results import Results
from moose_server.play.seats import Seat

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "NOT_SHOWN",
    "Game",
    "GameError",
    "Games",
    "Hub",
    "Results",
    "Seat",
    "clean_code",
    "match_message",
    "seat_info",
    "seat_info_of",
    "summary",
    "table_match",
]
