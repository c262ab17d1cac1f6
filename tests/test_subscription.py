"""The instance's one pub/sub connection (net/subscription.py) over a real redis-server:
each channel's messages reach the part that hears it, in order, and a part that fails
on one message loses no other, and a lost connection is made anew with the hub told.
(Reconnecting after a silent connection: test_server_hub.py.)"""

from __future__ import annotations

import asyncio
import contextlib

import redis.asyncio as aioredis

from moose_server.net.subscription import Subscription
from moose_server.storage.store import connect

from helpers import until

A, B = b"test:a", b"test:b"


async def test_each_channel_reaches_its_part_in_order_and_a_failing_part_loses_nothing(
    redis_url,
):
    heard: dict[bytes, list[bytes]] = {A: [], B: []}

    def on_a(data: bytes) -> None:
        if data == b"bad":
            raise ValueError("a part that fails on one message")
        heard[A].append(data)

    subscribed: list[bool] = []
    pubsub_client = connect(redis_url, 1, blocking=True)
    subscription = Subscription(
        pubsub_client, {A: on_a, B: heard[B].append}, subscribed=subscribed.append
    )
    running = asyncio.ensure_future(subscription.run())
    admin = aioredis.Redis.from_url(redis_url)
    try:
        await asyncio.wait_for(subscription.ready.wait(), 10)
        assert subscribed == [False]  # the first subscription: nothing was missed
        for data in (b"1", b"bad", b"2"):
            await admin.publish(A, data)
        await admin.publish(B, b"x")
        await until(lambda: _true(heard[B] == [b"x"]))
        assert heard[A] == [b"1", b"2"]  # the failure was logged, the next one delivered
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        await admin.aclose()
        await pubsub_client.aclose()


async def test_a_lost_connection_is_subscribed_anew_and_the_hub_told(redis_url):
    # The server closes the connection (as after a restart or a network cut): what
    # was published meanwhile may be lost, so the hub is told (`again=True`), never
    # subscribed again behind its back.
    heard: list[bytes] = []
    subscribed: list[bool] = []
    pubsub_client = connect(redis_url, 1, blocking=True)
    subscription = Subscription(pubsub_client, {A: heard.append}, subscribed=subscribed.append)
    running = asyncio.ensure_future(subscription.run())
    admin = aioredis.Redis.from_url(redis_url)
    try:
        await asyncio.wait_for(subscription.ready.wait(), 10)
        assert await admin.client_kill_filter(_type="pubsub") == 1
        await until(lambda: _true(subscribed == [False, True]))

        async def again() -> bool:
            await admin.publish(A, b"after")
            return b"after" in heard

        await until(again, every=0.1)
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        await admin.aclose()
        await pubsub_client.aclose()


def test_what_is_not_a_message_of_a_heard_channel_is_let_be() -> None:
    heard: list[bytes] = []
    subscription = Subscription(None, {A: heard.append})  # type: ignore[arg-type]  # not run
    subscription.hand_on([b"subscribe", A, 1])
    subscription.hand_on([b"pong", b""])
    subscription.hand_on([b"message", B, b"not ours"])
    subscription.hand_on([b"smessage", A, b"not sharded here"])
    subscription.hand_on([b"message", A, b"ours"])
    assert heard == [b"ours"]


async def _true(value: bool) -> bool:
    return value
