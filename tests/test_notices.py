"""Moderators' notices applied by an instance (net/notices.py), and what a client sees."""

from __future__ import annotations

import pytest

from moose.client import Client, ConnectionLost
from moose_server.accounts.bans import Ban
from moose_server.storage.moderation import ModerationStore

from helpers import open_store, until


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
