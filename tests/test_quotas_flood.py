"""A flood against two real `moose serve` processes over one Redis: sockets
from one address loop "create a 2-seat private table, add a bot, start", half on each
instance, with raw protocol clients written from PROTOCOL.md. It must stop at the
documented limit, on both instances together, and Redis must stop growing.

`pytest -s` prints what each flood did; `python tests/test_quotas_flood.py URL[,URL]
ADDRESS SOCKETS SECONDS` runs one against any server (the figures in the report).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from collections.abc import Callable

import aiohttp
import redis.asyncio as aioredis

from moose_server.storage.keys import ONLINE_KEY, hold_key, mm_done_key

from helpers import RawClient, ServeProcess

FLOODER = "127.0.0.9"  # a loopback address of the flood's own: nobody else's limits
PACE = 0.2  # s between rounds: 3 requests a round stays under the 20 messages/s of a socket


async def flood_socket(
    url: str, address: str, name: str, until: float, tally: Counter[str]
) -> None:
    """One socket from `address`: create, add a bot, start, again and again until `until`."""
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(address, 0)))
    try:
        client = RawClient(await session.ws_connect(url, max_msg_size=0), True)
        welcome = await client.request("hello", protocol=1, name=name)
        assert welcome["type"] == "welcome", welcome
        while time.monotonic() < until:
            await asyncio.sleep(PACE)
            table = await client.request("create_table", players=2)
            if table["type"] != "table":
                tally[f"create_table: {table['code']}"] += 1
                continue
            await client.request("add_bot", code=table["code"], bot="random")
            started = await client.request("start_table", code=table["code"])
            if started["type"] == "table":
                tally["started"] += 1
                continue
            tally[f"start_table: {started['code']}"] += 1
            if started["code"] == "rate_limited":
                assert started["retry_after"] > 0, started
            left = await client.request("leave_table", code=table["code"])
            assert left["type"] == "table", left
        await client.close()
    finally:
        await session.close()


async def flood(urls: list[str], address: str, sockets: int, seconds: float) -> Counter[str]:
    """`sockets` sockets from `address`, spread over `urls`, flooding for `seconds`."""
    tally: Counter[str] = Counter()
    until = time.monotonic() + seconds
    await asyncio.gather(
        *(
            flood_socket(urls[i % len(urls)], address, f"flood{i}", until, tally)
            for i in range(sockets)
        )
    )
    return tally


async def redis_size(url: str) -> tuple[int, int]:
    """The keys that outlive a player's socket, and INFO's used_memory, of the Redis at `url`.

    A connected player's presence (`keys.presence_key`) lapses within a minute of
    its socket, so it is not counted: each flood's new guests hold one each. Nor is
    a matchmaking call's remembered reply (`keys.mm_done_key`), which Redis expires
    a minute after the call: their memory counts in used_memory.
    """
    done = mm_done_key("").encode()
    r = aioredis.Redis.from_url(url)
    try:
        keys = [k async for k in r.scan_iter(count=1000)]
        lasting = [
            k
            for k in keys
            if not (k.endswith(b":online") and k != ONLINE_KEY.encode()) and not k.startswith(done)
        ]
        return len(lasting), int((await r.info("memory"))["used_memory"])
    finally:
        await r.aclose()


def two_instances(
    moose_serve: Callable[..., ServeProcess], redis_url: str, env: dict[str, str]
) -> list[str]:
    """Two `moose serve` processes over one Redis: their WebSocket URLs."""
    procs = [
        moose_serve("--redis", redis_url, env=env, log=f"serve{i}.log", wait=False)
        for i in range(2)
    ]
    return [p.wait_ready().url for p in procs]


async def test_the_table_flood_stops_at_the_limits_on_both_instances(moose_serve, redis_url):
    urls = two_instances(moose_serve, redis_url, {})  # the defaults
    sizes = [await redis_size(redis_url)]
    floods = []
    for _ in range(3):  # each flood says hello anew: 8 new guests
        floods.append(await flood(urls, FLOODER, sockets=8, seconds=5))
        sizes.append(await redis_size(redis_url))
    print("".join(f"\nflood {i + 1} (8 sockets, 5 s): {dict(f)}" for i, f in enumerate(floods)))
    print(f"Redis (keys, used_memory): before {sizes[0]}, after each flood {sizes[1:]}")
    # 5 unfinished games a player: 8 players start 40, then are refused.
    assert floods[0]["started"] == 40 and floods[0]["create_table: too_many_games"] > 0
    # New players: the address' 60 starts an hour run out after 20 more.
    assert floods[1]["started"] == 20 and floods[1]["start_table: rate_limited"] > 0
    assert floods[2]["started"] == 0 and floods[2]["start_table: rate_limited"] > 0
    # Redis holds what the 60 games hold, and no more however long the flood goes on.
    assert sizes[3][0] <= sizes[2][0] + 4, sizes
    assert sizes[3][1] - sizes[2][1] < 1 << 20, sizes


async def test_the_table_flood_stops_at_the_unfinished_games_of_an_address(moose_serve, redis_url):
    env = {"MOOSE_TABLE_STARTS_PER_HOUR": "100000", "MOOSE_GAMES_PER_ADDRESS": "30"}
    urls = two_instances(moose_serve, redis_url, env)
    tally = await flood(urls, FLOODER, sockets=8, seconds=5)
    print(f"\nflood (5 s, 30 games an address): {dict(tally)}")
    # Two instances took places at once: not one game past the limit (none ended: the
    # flood's seats wait their 30 s turn).
    assert tally["started"] == 30
    assert tally["create_table: too_many_games"] + tally["start_table: too_many_games"] > 0
    r = aioredis.Redis.from_url(redis_url)
    try:
        assert await r.zcard(hold_key("games", FLOODER)) == 30
    finally:
        await r.aclose()


if __name__ == "__main__":  # the figures: python tests/test_quotas_flood.py URL[,URL] ...
    urls_arg, address, sockets, seconds = sys.argv[1:5]
    began = time.monotonic()
    done = asyncio.run(flood(urls_arg.split(","), address, int(sockets), float(seconds)))
    print(json.dumps({"seconds": round(time.monotonic() - began, 1), **done}))
