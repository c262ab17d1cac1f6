"""Notices away from the page: Web Push and e-mail for correspondence games.

What other features may use of it is exported here (tests/test_layers.py).
"""

from __future__ import annotations

from moose_server.notify.handlers import NOTIFY, NotifyHandlers, add_routes
from moose_server.notify.mail import Mailer
from moose_server.notify.notifier import Notifier
from moose_server.notify.push import Pusher
from moose_server.notify.rules import KINDS, Notice, is_correspondence
from moose_server.notify.sender import Sender
from moose_server.notify.store import NotifyStore
from moose_server.notify.vapid import load_vapid, public_key

__all__ = [
    "KINDS",
    "NOTIFY",
    "Mailer",
    "Notice",
    "Notifier",
    "NotifyHandlers",
    "NotifyStore",
    "Pusher",
    "Sender",
    "add_routes",
    "is_correspondence",
    "load_vapid",
    "public_key",
]
