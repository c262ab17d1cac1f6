"""One instance's notice sender alone, as a process a test can kill mid-send.

``python notify_sender.py <redis url> <consumer> <push timeout>``: sends the
delivery stream's notices as that consumer of the group until killed.
"""

from __future__ import annotations

import asyncio
import sys

from py_vapid import Vapid

from moose_server.notify import Mailer, NotifyStore, Pusher, Sender
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.store import Store


async def main(redis_url: str, consumer: str, timeout: float) -> None:
    """Send notices until killed."""
    settings = Settings(redis_url=redis_url, push_timeout=timeout)
    redis = await open_redis(redis_url, 2)
    vapid = Vapid()
    vapid.generate_keys()
    async with Pusher(vapid, "mailto:ops@example.org", timeout) as pusher:
        store = NotifyStore(redis, per_player=settings.push_per_player)
        sender = Sender(store, pusher, Mailer(settings), settings, consumer, Store(redis, 16))
        await sender.run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))
