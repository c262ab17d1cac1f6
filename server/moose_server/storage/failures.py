"""What a storage call raises when Redis cannot be reached or answer, and a loop's round
that lives through it.

The server's parts outside storage/ never import redis-py: they catch
`StorageError` (any error of a Redis call), `ConnectionLost` (the connection
went), or `UNAVAILABLE` (those and the socket's own `OSError`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.exceptions import ConnectionError as ConnectionLost
from redis.exceptions import RedisError as StorageError

from moose_server.tasks import cancelling

__all__ = ["UNAVAILABLE", "ConnectionLost", "StorageError", "one_round"]

T = TypeVar("T")

# A call that raises one of these did not happen, or may not have: the caller
# answers `unavailable` or tries again later.
UNAVAILABLE: tuple[type[Exception], ...] = (StorageError, OSError)


async def one_round(step: Callable[[], Awaitable[T]], what: str, log: logging.Logger) -> T | None:
    """One round of a background loop: its result, or None when it failed. Redis out
    of reach is a warning and the loop goes on (unless its task is being cancelled);
    any other error is logged with its traceback, and the loop goes on too."""
    try:
        return await step()
    except UNAVAILABLE as exc:
        if cancelling():
            raise asyncio.CancelledError from exc
        log.warning("%s cannot reach Redis: %s", what, exc)
    except Exception:
        log.exception("%s failed", what)
    return None
