"""Provably fair deals: the seats' seeds, their records and scripts, and the deal they make.

What other features may use of it is exported here (tests/test_layers.py).
"""

from __future__ import annotations

from moose_server.deals.deals import DealError, Deals, waiting_match
from moose_server.deals.seeds import SeedStore

__all__ = ["DealError", "Deals", "SeedStore", "waiting_match"]
