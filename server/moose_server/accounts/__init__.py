"""Who plays: guests and accounts, tokens, names, ratings, leaderboards, limits.

What other features may use of it is exported here (tests/test_layers.py).
"""

from __future__ import annotations

from moose_server.accounts import ratings
from moose_server.accounts.calls import HistoryCall, RateCall, RatedSeat
from moose_server.accounts.identity import name_key
from moose_server.accounts.names import distinct
from moose_server.accounts.ratings import Standing
from moose_server.accounts.store import PlayerStore

__all__ = [
    "HistoryCall",
    "PlayerStore",
    "RateCall",
    "RatedSeat",
    "Standing",
    "distinct",
    "name_key",
    "ratings",
]
