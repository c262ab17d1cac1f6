"""Chat, blocks, follows and presence: who talks to whom, and who is here.

What other features may use of it is exported here (tests/test_layers.py).
"""

from __future__ import annotations

from moose_server.social.consent import SETTINGS, Consent
from moose_server.social.presence import Presence

__all__ = ["SETTINGS", "Consent", "Presence"]
