"""Moderation: bans, reports, refusals noted for operators, moderators' actions and notices.

What other features may use of it is exported here (tests/test_layers.py).
"""

from __future__ import annotations

from moose_server.moderation.reports import Reports

__all__ = ["Reports"]
