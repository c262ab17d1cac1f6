"""E-mail through the operator's SMTP server (aiosmtplib): confirm links and notices.

Every mail carries the address's unsubscribe link, in its text and in a
List-Unsubscribe header (RFC 2369, one click per RFC 8058).
"""

from __future__ import annotations

import logging
from email.message import EmailMessage
from urllib.parse import urlencode

import aiosmtplib

from moose_server.notify.push import Outcome
from moose_server.settings import Settings

__all__ = ["Mailer", "link"]

log = logging.getLogger(__name__)


def link(settings: Settings, action: str, player: str, token: str) -> str:
    """The page's /notify/<action> link for a player's token."""
    base = settings.public_url.rstrip("/")
    return f"{base}/notify/{action}?{urlencode({'p': player, 't': token})}"


class Mailer:
    """Sends one mail at a time through the configured SMTP server (none: `enabled` False)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.enabled = bool(settings.smtp_host)

    async def send(self, to: str, subject: str, body: str, unsubscribe: str) -> Outcome:
        """Mail `body` to `to`, the unsubscribe link under it."""
        s = self.settings
        message = EmailMessage()
        message["From"] = s.mail_from
        message["To"] = to
        message["Subject"] = subject
        message["List-Unsubscribe"] = f"<{unsubscribe}>"
        message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
        message.set_content(f"{body}\n\n--\nNo more mail from Moose House: {unsubscribe}\n")
        try:
            await aiosmtplib.send(
                message,
                hostname=s.smtp_host,
                port=s.smtp_port,
                username=s.smtp_user or None,
                password=s.smtp_password or None,
                use_tls=s.smtp_tls == "tls",
                start_tls=s.smtp_tls == "starttls",
                timeout=s.push_timeout,
            )
        except aiosmtplib.SMTPRecipientsRefused:
            log.warning("SMTP server refused a recipient")
            return Outcome.REFUSED
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            log.info("mail not sent: %r; tried again later", exc)
            return Outcome.RETRY
        return Outcome.SENT
