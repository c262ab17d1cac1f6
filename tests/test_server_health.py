"""Health and readiness endpoints, and what a client gets when Redis goes away."""

from __future__ import annotations

import aiohttp


async def get(url: str) -> tuple[int, dict]:
    """Status and JSON body of a GET."""
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        return resp.status, await resp.json()


async def test_healthz_and_readyz_answer(moose_server):
    base = (await moose_server()).replace("ws://", "http://").removesuffix("/ws")
    assert (await get(base + "/healthz"))[0] == 200
    status, body = await get(base + "/readyz")
    assert status == 200 and body["ready"] is True


async def test_lost_redis_means_unavailable_and_not_ready(moose_server, ws_client, redis_factory):
    redis = redis_factory(appendonly=False)
    url = await moose_server(redis_url=redis.url)
    base = url.replace("ws://", "http://").removesuffix("/ws")
    client = await ws_client(url, "ann")
    redis.stop()
    answer = await client.request("ping")
    assert answer["type"] == "error" and answer["code"] == "unavailable"
    assert (await get(base + "/readyz"))[0] == 503
    assert (await get(base + "/healthz"))[0] == 200  # alive, just not ready
    redis.start()
    assert (await client.request("ping"))["type"] == "pong"  # the same socket, once back
