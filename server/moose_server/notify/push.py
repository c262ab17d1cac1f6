"""Web Push (RFC 8030, payload encrypted per RFC 8291, VAPID per RFC 8292) via pywebpush.

pywebpush encrypts the payload for the subscription's keys and signs a VAPID
token; we only read the push service's answer: 201 sent, 404/410 the
subscription is gone (dropped), a timeout or 5xx worth another try.
"""

from __future__ import annotations

import asyncio
import json
import logging
from enum import Enum
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from py_vapid import Vapid
from pywebpush import WebPushException, webpush_async

__all__ = ["Outcome", "Pusher"]

log = logging.getLogger(__name__)

TTL = 24 * 3600  # seconds a push service keeps a notice for a browser that is off


class Outcome(Enum):
    """What became of one push."""

    SENT = "sent"
    GONE = "gone"  # 404 or 410: the browser dropped the subscription
    RETRY = "retry"  # a timeout, a connection refused, a 429 or 5xx
    REFUSED = "refused"  # any other answer: not worth another try


class Pusher:
    """Sends pushes through one HTTP session, signed with the server's VAPID key."""

    def __init__(self, vapid: Vapid, subject: str, timeout: float) -> None:
        self.vapid = vapid
        self.subject = subject
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Pusher:
        self._session = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()

    async def send(self, sub: dict[str, Any], payload: dict[str, Any]) -> Outcome:
        """Push `payload` (JSON) to one subscription."""
        assert self._session is not None, "use `async with Pusher(...)`"
        try:
            async with asyncio.timeout(self.timeout):
                await webpush_async(
                    sub,
                    json.dumps(payload),
                    vapid_private_key=self.vapid,
                    vapid_claims={"sub": self.subject},  # a new dict: pywebpush fills it in
                    ttl=TTL,
                    aiohttp_session=self._session,
                    timeout=aiohttp.ClientTimeout(total=self.timeout),
                )
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            log.info("push to %s: %r; tried again later", _host(sub), exc)
            return Outcome.RETRY
        except WebPushException as exc:
            return _answer(exc.status_code, sub)
        return Outcome.SENT


def _answer(status: int | None, sub: dict[str, Any]) -> Outcome:
    """What a push service's refusal means."""
    if status in (404, 410):
        return Outcome.GONE
    if status is None or status == 429 or status >= 500:
        return Outcome.RETRY
    log.warning("push to %s refused: HTTP %s", _host(sub), status)
    return Outcome.REFUSED


def _host(sub: dict[str, Any]) -> str:
    """The push service's host (the endpoint's path is the subscription's secret)."""
    return urlsplit(str(sub.get("endpoint", ""))).hostname or "?"
