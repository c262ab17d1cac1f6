"""Games in play: a move from load to commit, event streams, deadlines, results.

What other features may use of it is exported here (tests/test_layers.py).
"""

from __future__ import annotations

from moose_server.play.codes import CODE_ALPHABET, CODE_LENGTH, clean_code
from moose_server.play.correspondence import DAYS, check_days, days_info, is_correspondence
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
    "DAYS",
    "NOT_SHOWN",
    "Game",
    "GameError",
    "Games",
    "Hub",
    "Results",
    "Seat",
    "check_days",
    "clean_code",
    "days_info",
    "is_correspondence",
    "match_message",
    "seat_info",
    "seat_info_of",
    "summary",
    "table_match",
]
