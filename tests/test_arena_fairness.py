"""Arena fairness over the wire, against a real `moose serve`: guests of two
addresses (X-Forwarded-For from a trusted proxy) in a people arena of two-seat
tables. Nobody sits with their own address while the other address waits, and
a seat that never moves (away, played on by the server) earns nothing while
its opponent earns the win."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import redis.asyncio as aioredis

from moose_server.storage.keys import ArenaKeys

from helpers import RawClient, create_arena, play_in_order
from helpers.arenas import ENV, FLAGS


@contextlib.asynccontextmanager
async def guests(url: str, who: list[tuple[str, str]]) -> AsyncIterator[list[RawClient]]:
    """A raw JSON socket per (name, address), hello said, all closed at the end."""
    async with aiohttp.ClientSession() as session:
        clients = []
        try:
            for name, address in who:
                ws = await session.ws_connect(url, headers={"X-Forwarded-For": address})
                client = RawClient(ws, binary=False)
                clients.append(client)
                assert (await client.hello(name))["type"] == "welcome"
            yield clients
        finally:
            for client in clients:
                await client.close()


async def open_now(redis_url: str, arena: str) -> None:
    """Start the arena now (it was made to start later, so that all could join first)."""
    redis: Any = aioredis.Redis.from_url(redis_url)
    try:
        seconds, micros = await redis.time()
        await redis.hset(ArenaKeys.of(arena).arena, "start", seconds * 1000 + micros // 1000)
    finally:
        await redis.aclose()


async def watch_out(client: RawClient, game: str) -> None:
    """Read the game's events, moving never, until it is over."""
    while (await client.expect(type="event", game=game, timeout=60))["event"]["kind"] != "over":
        pass


async def test_no_table_of_one_address_and_an_away_seat_earns_nothing(moose_serve, redis_url):
    env = {**ENV, "MOOSE_TRUSTED_PROXIES": "127.0.0.1", "MOOSE_ARENA_REST": "0"}
    # Turns long enough that the players who do move are never away.
    flags = [*FLAGS, "--turn-time", "2", "--answer-time", "2"]
    proc = moose_serve("--redis", redis_url, *flags, env=env)
    await create_arena(redis_url, "a_fair", 30, who="people", start_in=3600)
    who = [("x1", "198.51.100.1"), ("x2", "198.51.100.1")]
    who += [("y1", "203.0.113.9"), ("y2", "203.0.113.9")]
    async with guests(proc.url, who) as clients:
        names = {c.player: n for c, (n, _) in zip(clients, who, strict=True)}
        for client in clients:
            joined = await client.request("join_arena", arena="a_fair", max_players=2)
            assert joined["state"] == "wait", joined
        await open_now(redis_url, "a_fair")
        matches = [await c.expect(type="match", timeout=20) for c in clients]
        tables: dict[str, list[str]] = {}
        for client, match in zip(clients, matches, strict=True):
            tables.setdefault(match["game"], []).append(names[client.player])
        assert sorted(sorted(t) for t in tables.values()) == [["x1", "y1"], ["x2", "y2"]]
        # y1 never moves: away after two timeouts, played on by the server to the end.
        x1, x2, y1, y2 = clients
        await asyncio.gather(
            play_in_order(x1, matches[0]["game"], random.Random(1), []),
            play_in_order(x2, matches[1]["game"], random.Random(2), []),
            play_in_order(y2, matches[3]["game"], random.Random(3), []),
            watch_out(y1, matches[2]["game"]),
        )
        await x1.request("watch_arena", arena="a_fair")
        shown = await x1.expect(type="arena")
        while sum(s["games"] for s in shown["standings"]) < 4:  # both games scored
            shown = await x1.expect(type="arena", timeout=20)
    standing = {s["name"]: s for s in shown["standings"]}
    assert (standing["y1"]["points"], standing["y1"]["state"]) == (0, "paused")
    assert standing["x1"]["points"] == 2
    assert standing["x2"]["points"] + standing["y2"]["points"] == 2  # a win or a tie
    [game] = [g for g in shown["games"] if sorted(g["names"]) == ["x1", "y1"]]
    assert dict(zip(game["names"], game["points"], strict=True)) == {"x1": 2, "y1": 0}


async def test_one_address_adds_a_bounded_number_of_arena_members(
    moose_server, redis_url, ws_client
):
    url = await moose_server(arena_joins_per_hour=2)
    await create_arena(redis_url, "a_many", 30, who="people", start_in=3600)
    ann, bob, cat = [await ws_client(url, name, binary=False) for name in ("ann", "bob", "cat")]
    for client in (ann, bob):
        assert (await client.request("join_arena", arena="a_many"))["state"] == "wait"
    refused = await cat.request("join_arena", arena="a_many")
    assert (refused["type"], refused["code"]) == ("error", "rate_limited"), refused
    assert refused["retry_after"] > 0
    # Coming back is not a new member: free.
    assert (await ann.request("pause_arena", arena="a_many"))["state"] == "paused"
    assert (await ann.request("join_arena", arena="a_many"))["state"] == "wait"
    shown = await cat.request("show_arena", arena="a_many")
    assert sorted(s["name"] for s in shown["standings"]) == ["ann", "bob"]
