"""Stopping background tasks for sure.

A cancellation can reach a loop as a Redis or socket error (redis-py turns some
interrupted reads into ConnectionError), and a loop that retries on those would
then run on. So loops ask `cancelling()` before retrying, and `cancel_and_wait`
cancels again whatever is still running.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

__all__ = ["cancel_and_wait", "cancelling"]


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
