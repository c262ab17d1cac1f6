"""An SMTP server's handler for the notice tests: every mail it gets, parsed."""

from __future__ import annotations

import asyncio
import email
import email.message
from typing import Any

__all__ = ["Inbox"]


class Inbox:
    """An SMTP server's handler: every mail it gets, as a parsed message."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.mails: asyncio.Queue[email.message.Message] = asyncio.Queue()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        """Keep the mail (aiosmtpd runs this in its own thread's loop)."""
        mail = email.message_from_bytes(envelope.content)
        self.loop.call_soon_threadsafe(self.mails.put_nowait, mail)
        return "250 OK"
