"""Refusals of limits, recorded for `moose admin refusals`: every 429 and Limited, bounded."""

from __future__ import annotations

import aiohttp
import pytest

from moose_server.moderation.refusals import BUFFERED, Refusals
from moose_server.moderation.store import HOUR_MS, RECENT_WRITTEN, ModerationStore, Refused
from moose_server.storage.keys import ModerationKeys

from helpers import http_base, open_store, until

KEYS = ModerationKeys()


@pytest.mark.slow  # refusals are written once a second
async def test_a_handshake_past_the_socket_cap_is_recorded_as_a_429(moose_server, redis_url):
    url = await moose_server(max_sockets_per_address=1)
    async with aiohttp.ClientSession() as session, session.ws_connect(url):
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(url)
        assert refused.value.status == 429
        async with open_store(redis_url) as store:
            records = ModerationStore(store.redis)

            async def recorded() -> list[dict[str, str]]:
                return await records.refusals(10)

            [row] = await until(recorded, timeout=10)
            assert (row["limit"], row["address"]) == ("http_429:/ws", "127.0.0.1")
            heavy = await records.heaviest(await store.now_ms(), 1, 5)
            assert heavy == {"http_429:/ws": [("address 127.0.0.1", 1)]}
        async with session.get(f"{http_base(url)}/api/leaderboard") as resp:
            assert resp.status == 200  # refusals are not bans


@pytest.mark.slow
async def test_limited_requests_are_recorded_by_limit_and_client(
    moose_server, redis_url, ws_client
):
    url = await moose_server(code_guesses=1, code_guess_interval=60)
    client = await ws_client(url, "guesser")
    for code in ("ZZZZ-ZZZZ", "YYYY-YYYY"):
        await client.request("join_table", code=code)
    async with open_store(redis_url) as store:
        records = ModerationStore(store.redis)

        async def recorded() -> list[dict[str, str]]:
            return await records.refusals(10)

        [row] = await until(recorded, timeout=10)
        assert row["limit"] == "rate_limited:join_table"
        assert (row["player"], row["name"]) == (client.player, "guesser")
        heavy = (await records.heaviest(await store.now_ms(), 1, 5))["rate_limited:join_table"]
        assert sorted(heavy) == [("address 127.0.0.1", 1), (f"player {client.player} guesser", 1)]


async def test_a_flood_of_refusals_costs_one_write_and_is_bounded(redis_url):
    async with open_store(redis_url) as store:
        records = ModerationStore(store.redis, refusals_kept=100)
        now = await store.now_ms()
        refusals = Refusals(records, lambda: now)
        for n in range(BUFFERED + 10):
            refusals.refused("rate_limited:messages", f"10.0.{n % 200}.1", None)
        assert refusals.dropped == 10
        await refusals.flush()
        assert (
            await store.redis.client.xlen(KEYS.refusals) <= RECENT_WRITTEN
        )  # the rest only counted
        heavy = await records.heaviest(now, 1, 3)
        assert [n for _, n in heavy["rate_limited:messages"]] == [10, 10, 10]
        # Kept a while, not for ever.
        key = KEYS.heavy(now // HOUR_MS, "rate_limited:messages")
        assert 0 < await store.redis.client.ttl(key) <= records.heavy_ttl
        await refusals.flush()  # nothing more to write


async def test_moderation_records_on_one_node_and_on_a_cluster(backend_url):
    async with open_store(backend_url) as store:
        records = ModerationStore(store.redis, audit_kept=10)
        now = await store.now_ms()
        refused = Refused("rate_limited:queue", "10.0.0.1", "p_1", "ann", now)
        await records.record_refusals([refused, refused])
        assert (await records.refusals(5))[0]["player"] == "p_1"
        heavy = (await records.heaviest(now, 2, 5))["rate_limited:queue"]
        assert sorted(heavy) == [("address 10.0.0.1", 2), ("player p_1 ann", 2)]
        for n in range(300):
            await records.audit({"at": now, "by": "mod", "action": "ban", "target": f"p_{n}"})
        log = await records.audit_log(3)
        assert [row["target"] for row in log] == ["p_299", "p_298", "p_297"]
        assert await store.redis.client.xlen(KEYS.audit) <= 200  # capped (trimmed by whole nodes)
        await records.set_ban("account:p_1", {"kind": "account", "subject": "p_1"})
        assert list(await records.bans()) == ["account:p_1"]
        assert await records.remove_bans(["account:p_1", "account:p_2"]) == 1
