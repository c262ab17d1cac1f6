"""Moderators' notices applied by an instance (moderation/notices.py), and what a client sees."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from moose.client import Client, ConnectionLost
from moose_server.moderation.bans import Ban, ban_network
from moose_server.moderation.store import ModerationStore

from helpers import RawClient, http_base, open_store, until


async def test_an_ended_session_is_closed_with_4004_and_the_client_does_not_reconnect(
    moose_server, redis_url
):
    url = await moose_server()
    client = Client(url, name="kim")
    await client.open()
    try:
        async with open_store(redis_url) as store:
            heard = await ModerationStore(store.redis).publish(
                {"action": "end_session", "player": client.player, "reason": "cool off"}
            )
        assert heard == 1

        async def lost() -> bool:
            try:
                await client.ping()
            except ConnectionLost as exc:
                assert "moderator" in str(exc) and "cool off" in str(exc)
                return True
            return False

        await until(lost, timeout=10)
        assert client.reconnects == 0
    finally:
        await client.close()


async def test_a_ban_whose_notice_was_lost_holds_after_the_next_reading(
    moose_server, redis_url, ws_client
):
    url = await moose_server(ban_refresh=0.1)
    victim = await ws_client(url, "lee")
    async with open_store(redis_url) as store:
        now = await store.now_ms()
        ban = Ban("account", victim.player, "spam", 0, "mod", now)
        # Written to Redis, but no notice published (as if pub/sub had been down).
        await ModerationStore(store.redis).set_ban(ban.field, ban.record())
    error = await victim.expect(type="error", code="banned")
    assert error["reason"] == "spam" and "retry_after" not in error
    assert await victim.closed() == 4003


@pytest.mark.parametrize("notice", [{"action": "dance"}, {"action": "unban", "field": "x:y"}])
async def test_an_unknown_or_empty_notice_changes_nothing(
    moose_server, redis_url, ws_client, notice
):
    url = await moose_server()
    client = await ws_client(url, "mo")
    async with open_store(redis_url) as store:
        await ModerationStore(store.redis).publish(notice)
    assert (await client.request("ping"))["type"] == "pong"


async def test_an_ipv6_address_ban_holds_its_whole_64(moose_server, redis_url):
    url = await moose_server(trusted_proxies="127.0.0.1")  # as behind a load balancer
    async with open_store(redis_url) as store:
        ban = Ban("address", ban_network("2001:db8:1:2::7"), "bots", 0, "mod", await store.now_ms())
        records = ModerationStore(store.redis)
        await records.set_ban(ban.field, ban.record())
        assert await records.publish({"action": "ban", "ban": ban.record()}) == 1
    async with aiohttp.ClientSession() as session:

        async def hello(address: str) -> dict[str, Any]:
            headers = {"X-Forwarded-For": address}
            ws = await session.ws_connect(url, headers=headers)
            client = RawClient(ws, binary=False)
            answer = await client.hello("ipv6")
            await client.close()
            return answer

        async def refused() -> bool:
            return (await hello("2001:db8:1:2:ffff::1"))["type"] == "error"

        await until(refused, timeout=10)  # the notice may come after the publish returns
        answer = await hello("2001:db8:1:2:ffff::1")
        assert answer["code"] == "banned" and answer["reason"] == "bots"
        assert (await hello("2001:db8:1:3::1"))["type"] == "welcome"  # another /64
        api = f"{http_base(url)}/api/leaderboard"
        async with session.get(api, headers={"X-Forwarded-For": "2001:db8:1:2::99"}) as resp:
            assert resp.status == 403 and (await resp.json())["error"] == "banned"
            assert "Retry-After" not in resp.headers  # a ban for good
        async with session.get(api, headers={"X-Forwarded-For": "2001:db8:1:3::1"}) as resp:
            assert resp.status == 200
