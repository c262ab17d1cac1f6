"""Stopping background tasks for sure.

A cancellation can reach a loop as a Redis or socket error (redis-py turns some
interrupted reads into ConnectionError), and a loop that retries on those would
then run on. So loops ask `cancelling()` before retrying, and `cancel_and_wait`
cancels again whatever is still running.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from redis.exceptions import RedisError

__all__ = ["cancel_and_wait", "cancelling", "one_round"]

T = TypeVar("T")


def cancelling() -> bool:
    """Whether the current task has been asked to stop."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Cancel the tasks and wait until every one has ended."""
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=0.5)


async def one_round(step: Callable[[], Awaitable[T]], what: str, log: logging.Logger) -> T | None:
    """One round of a background loop: its result, or None when it failed. Redis out
    of reach is a warning and the loop goes on (unless its task is being cancelled);
    any other error is logged with its traceback, and the loop goes on too."""
    try:
        return await step()
    except (RedisError, OSError) as exc:
        if cancelling():
            raise asyncio.CancelledError from exc
        log.warning("%s cannot reach Redis: %s", what, exc)
    except Exception:
        log.exception("%s failed", what)
    return None
