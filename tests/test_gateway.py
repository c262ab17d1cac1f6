"""The gateway's typed commands on a real Redis: each reply decoded alike from RESP3
(redis-py's protocol) and RESP2, on one node and a cluster, all in one round trip."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from moose_server.storage.connection import open_redis
from moose_server.storage.gateway import Gateway
from moose_server.storage.scripts import LimitCall


@pytest.fixture(params=["resp3", "resp2"])
async def gateway(backend_url: str, request: pytest.FixtureRequest) -> AsyncIterator[Gateway]:
    """The server's gateway, speaking RESP3 (as it does) or RESP2 (a URL may ask for it)."""
    joint = "&" if "?" in backend_url else "?"
    url = backend_url if request.param == "resp3" else f"{backend_url}{joint}protocol=2"
    redis = await open_redis(url, 4)
    yield redis
    await redis.aclose()


async def test_every_typed_command_decodes_its_reply(gateway: Gateway) -> None:
    r, k = gateway, "{gw}"
    before = r.batches
    writes = [
        r.set(f"{k}s", "text"),
        r.hset(f"{k}h", {"a": 1, "b": b"two"}),
        r.sadd(f"{k}set", "x", "y"),
        r.zadd(f"{k}z", {"low": 1, "high": 2.5}),
        r.xadd(f"{k}x", {"f": "v"}, maxlen=10),
        r.call("RPUSH", f"{k}l", "p", "q"),
    ]
    await r.all(writes)
    assert r.batches == before + 1  # every write of the turn in one round trip
    assert await r.get(f"{k}s") == b"text" and await r.get(f"{k}none") is None
    assert await r.set(f"{k}s", "new", get=True) == b"text"
    assert await r.set(f"{k}s", "other", nx=True) is None
    assert await r.hgetall(f"{k}h") == {b"a": b"1", b"b": b"two"}
    assert await r.hgetall(f"{k}none") == {}
    assert await r.hmget(f"{k}h", "a", "c") == [b"1", None]
    assert await r.hexists(f"{k}h", "a") is True and await r.hexists(f"{k}h", "c") is False
    assert await r.hlen(f"{k}h") == 2 and await r.hincrby(f"{k}h", "a", 2) == 3
    assert await r.hscan(f"{k}h", 0, 100) == (0, {b"a": b"3", b"b": b"two"})
    assert sorted(await r.smembers(f"{k}set")) == [b"x", b"y"]
    assert await r.zscore(f"{k}z", "high") == 2.5 and await r.zscore(f"{k}z", "no") is None
    assert await r.zrange_scored(f"{k}z", 0, -1) == [(b"low", 1.0), (b"high", 2.5)]
    assert await r.zrange_scored(f"{k}z", 0, 0, reverse=True) == [(b"high", 2.5)]
    assert await r.zrange_scored(f"{k}none", 0, -1) == []
    assert await r.zrevrange(f"{k}z", 0, -1) == [b"high", b"low"]
    assert await r.zrangebyscore(f"{k}z", "-inf", 2, offset=0, count=5) == [b"low"]
    assert await r.zrevrank(f"{k}z", "low") == 1 and await r.zincrby(f"{k}z", 2, "low") == 3.0
    [(entry, fields)] = await r.xrange(f"{k}x", "-", "+")
    assert fields == {b"f": b"v"} and await r.xrevrange(f"{k}x", 5) == [(entry, fields)]
    assert await r.lrange(f"{k}l", 0, -1) == [b"p", b"q"]
    seconds, micros = await r.time()
    assert seconds > 1_700_000_000 and 0 <= micros < 1_000_000
    assert await r.exists(f"{k}s") is True and await r.pttl(f"{k}s") == -1
    assert await r.pexpire(f"{k}s", 60_000) is True and 0 < await r.pttl(f"{k}s") <= 60_000
    assert await r.pttl(f"{k}none") == -2
    assert await r.delete(f"{k}s", f"{k}none") == 1


async def test_a_script_runs_by_its_typed_call_with_its_sha_worked_out_once(gateway: Gateway):
    take = LimitCall("{gw}limit", interval_ms=60_000, burst=1)
    assert await gateway.run(take, *take.build()) == 0  # a token was free
    assert await gateway.run(take, *take.build()) > 0  # the ms until the next one
    assert list(gateway._shas) == [LimitCall]
