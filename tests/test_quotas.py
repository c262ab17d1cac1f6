"""What one client may hold: unfinished games, open tables, table starts, bot
sessions, new guests, watched games and API requests, per player and per address,
shared by every instance; raw protocol clients over real sockets and a real Redis.

Each client says which address it comes from in X-Forwarded-For, which the servers
here trust from 127.0.0.1; the flood against real `moose serve` processes is in
test_quotas_flood.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
import redis.asyncio as aioredis

from moose_server.storage.keys import hold_key, player_games_key

from helpers import RawClient, http_base

TRUST = {"trusted_proxies": "127.0.0.1"}


class Clients:
    """Raw sockets from chosen addresses, all closed at the end."""

    def __init__(self) -> None:
        self.open: list[tuple[RawClient, aiohttp.ClientSession]] = []

    async def connect(self, url: str, address: str, name: str = "", **hello: Any) -> RawClient:
        """A socket from `address` that has said hello (with `name`, or `token=`, `bot=`)."""
        client = await self.socket(url, address)
        fields = {"name": name or f"p{len(self.open)}", **hello}
        if "token" in hello:
            del fields["name"]
        welcome = await client.request("hello", protocol=1, **fields)
        assert welcome["type"] == "welcome", welcome
        client.player, client.token = welcome["player"], welcome["token"]
        return client

    async def socket(self, url: str, address: str) -> RawClient:
        """A socket from `address`, no hello said."""
        session = aiohttp.ClientSession()
        ws = await session.ws_connect(url, headers={"X-Forwarded-For": address})
        client = RawClient(ws, True)
        self.open.append((client, session))
        return client

    async def close(self, client: RawClient) -> None:
        """Close one socket."""
        for c, session in self.open:
            if c is client:
                await c.close()
                await session.close()

    async def close_all(self) -> None:
        """Close every socket."""
        for client, session in self.open:
            await client.close()
            await session.close()


@pytest.fixture
async def clients() -> Any:
    made = Clients()
    yield made
    await made.close_all()


async def bot_game(host: RawClient) -> dict[str, Any]:
    """The host opens a 2-seat table, seats a bot and starts: the answer to the start
    (the `table` answer, or an error) with the table as it was before (`table`) and the
    `match` if it started."""
    table = await host.request("create_table", players=2)
    if table["type"] != "table":
        return table
    seated = await host.request("add_bot", code=table["code"], bot="random")
    assert seated["type"] == "table", seated
    started = await host.request("start_table", code=table["code"])
    started["table"] = {k: v for k, v in seated.items() if k not in ("type", "id")}
    if started["type"] == "table":
        started["match"] = await host.expect(type="match")
    return started


async def test_a_player_holds_so_many_unfinished_games_and_no_more(moose_server, clients):
    url = await moose_server(games_per_player=2, turn_time=60, **TRUST)
    alice = await clients.connect(url, "198.51.100.1", "alice")
    for _ in range(2):
        assert (await bot_game(alice))["type"] == "table"
    refused = await alice.request("create_table", players=2)
    assert refused["code"] == "too_many_games" and "retry_after" not in refused, refused
    assert (await alice.request("queue"))["code"] == "too_many_games"
    # Nothing changed: no table, no ticket, the same two games.
    again = await clients.connect(url, "198.51.100.1", token=alice.token)
    welcome = again.received[0]
    assert welcome["table"] is None and len(welcome["games"]) == 2
    assert (await again.request("leave_queue"))["code"] == "not_queued"


async def test_an_address_holds_so_many_games_across_instances(moose_server, clients):
    limits = {"games_per_address": 3, "turn_time": 60, **TRUST}
    one, two = await moose_server(**limits), await moose_server(**limits)
    hosts = [await clients.connect(url, "203.0.113.7") for url in (one, two, one, two)]
    assert [(await bot_game(h))["type"] for h in hosts[:3]] == ["table"] * 3
    table = await hosts[3].request("create_table", players=2)
    assert table["code"] == "too_many_games", table
    # Another address is not held back; the fourth host, from another address, plays.
    other = await clients.connect(two, "192.0.2.8")
    assert (await bot_game(other))["type"] == "table"
    elsewhere = await clients.connect(two, "192.0.2.9", token=hosts[3].token)
    assert (await bot_game(elsewhere))["type"] == "table"


async def test_starting_past_the_address_limit_leaves_the_table_as_it_was(moose_server, clients):
    url = await moose_server(games_per_address=1, turn_time=60, **TRUST)
    first = await clients.connect(url, "203.0.113.8", "first")
    second = await clients.connect(url, "203.0.113.8", "second")
    table = await second.request("create_table", players=2)
    seated = await second.request("add_bot", code=table["code"], bot="random")
    assert (await bot_game(first))["type"] == "table"
    refused = await second.request("start_table", code=table["code"])
    assert refused["code"] == "too_many_games", refused
    back = await clients.connect(url, "203.0.113.8", token=second.token)
    assert back.received[0]["table"] == {k: v for k, v in seated.items() if k not in ("type", "id")}
    assert back.received[0]["games"] == []


async def test_a_game_that_ended_or_was_lost_holds_nothing(moose_server, clients, redis_url):
    url = await moose_server(games_per_address=2, turn_time=60, **TRUST)
    host = await clients.connect(url, "203.0.113.9")
    r = aioredis.Redis.from_url(redis_url)
    try:
        key = hold_key("games", "203.0.113.9")
        # What an instance that died would leave: a game that never was, a stale
        # place taken for a start that never finished.
        await r.zadd(key, {"g_0000000000": 1, "~deadbeef0000": 1})
        assert (await bot_game(host))["type"] == "table"  # both pruned: room for it
        assert await r.zcard(key) == 1
    finally:
        await r.aclose()


async def test_a_game_abandoned_gives_its_place_back(moose_server, clients, redis_url):
    url = await moose_server(
        games_per_player=1, games_per_address=1, turn_time=0.2, answer_time=0.2, **TRUST
    )
    host = await clients.connect(url, "203.0.113.10")
    first = await bot_game(host)
    assert (await host.request("create_table", players=2))["code"] == "too_many_games"
    game = first["match"]["game"]
    while (await host.expect(type="event", game=game))["event"]["kind"] != "over":
        pass  # the host never moves: away, then abandoned
    # As an instance that died between the game's end and forgetting it would leave it:
    # still among the player's games and the address' (only Redis' own state says over).
    r = aioredis.Redis.from_url(redis_url)
    try:
        await r.sadd(player_games_key(host.player), game)
        await r.zadd(hold_key("games", "203.0.113.10"), {game: 1})
    finally:
        await r.aclose()
    assert (await bot_game(host))["type"] == "table"


async def test_an_address_hosts_so_many_open_tables(moose_server, clients):
    url = await moose_server(tables_per_address=2, **TRUST)
    hosts = [await clients.connect(url, "198.51.100.20") for _ in range(3)]
    codes = [(await h.request("create_table", players=3))["code"] for h in hosts[:2]]
    refused = await hosts[2].request("create_table", players=3)
    assert refused["code"] == "too_many_tables" and "retry_after" not in refused, refused
    assert (await hosts[2].request("leave_queue"))["code"] == "not_queued"
    left = await hosts[0].request("leave_table", code=codes[0])  # closes the table
    assert left["seats"] == []
    assert (await hosts[2].request("create_table", players=3))["type"] == "table"


async def test_table_starts_are_metered_per_address_per_hour(moose_server, clients):
    url = await moose_server(table_starts_per_hour=2, turn_time=60, **TRUST)
    host = await clients.connect(url, "198.51.100.30")
    others = [await clients.connect(url, "198.51.100.30") for _ in range(2)]
    assert (await bot_game(host))["type"] == "table"
    assert (await bot_game(others[0]))["type"] == "table"
    refused = await bot_game(others[1])
    assert refused["code"] == "rate_limited", refused
    assert 0 < refused["retry_after"] <= 1_800_000  # one start a half hour at 2 an hour
    # The table is still there, untouched, for a start later on.
    back = await clients.connect(url, "198.51.100.30", token=others[1].token)
    assert back.received[0]["table"] == refused["table"]
    assert back.received[0]["games"] == []


async def test_bot_sessions_per_address_at_once_and_new_bots_per_hour(moose_server, clients):
    url = await moose_server(bot_sessions_per_address=2, bot_hellos_per_hour=3, **TRUST)
    bots = [await clients.connect(url, "192.0.2.50", "b", bot=True) for _ in range(2)]
    third = await clients.socket(url, "192.0.2.50")
    refused = await third.request("hello", protocol=1, name="b3", bot=True)
    assert refused["code"] == "too_many_sessions" and "retry_after" not in refused, refused
    person = await third.request("hello", protocol=1, name="person")  # not a bot: welcome
    assert person["type"] == "welcome"
    await clients.close(bots[0])  # one closes: its place is free (once the server sees it)
    async with asyncio.timeout(10):
        while True:
            retry = await clients.socket(url, "192.0.2.50")
            answer = await retry.request("hello", protocol=1, name="b4", bot=True)
            if answer["type"] == "welcome":
                break
            assert answer["code"] == "too_many_sessions"
            await clients.close(retry)
    await clients.close(retry)
    await clients.close(bots[1])
    # Three new bot players an hour: the fourth is refused, a bot's token is welcome.
    fourth = await clients.socket(url, "192.0.2.50")
    refused = await fourth.request("hello", protocol=1, name="b5", bot=True)
    assert refused["code"] == "rate_limited" and refused["retry_after"] > 0, refused
    resumed = await fourth.request("hello", protocol=1, token=bots[1].token)
    assert resumed["type"] == "welcome" and resumed["bot"] is True


async def test_new_guests_per_address_and_hour_counted_across_two_instances(
    moose_server, clients, redis_url
):
    settings = {"guest_hellos_per_hour": 3, **TRUST}
    urls = [await moose_server(**settings), await moose_server(**settings)]
    guests = [await clients.connect(urls[n % 2], "192.0.2.60") for n in range(3)]
    redis: Any = aioredis.Redis.from_url(redis_url)
    try:
        before = sorted(await redis.keys("*"))
        fourth = await clients.socket(urls[1], "192.0.2.60")
        refused = await fourth.request("hello", protocol=1, name="fourth")
        assert refused["code"] == "rate_limited", refused
        assert 0 < refused["retry_after"] <= 1_200_000  # one more every 20 minutes
        assert sorted(await redis.keys("*")) == before  # no player, no presence: nothing
    finally:
        await redis.aclose()
    # The socket is no player's; a guest who comes back with their token is not new,
    # nor is a bot (its own limit), nor a guest of another address.
    assert (await fourth.request("ping"))["code"] == "hello_required"
    back = await fourth.request("hello", protocol=1, token=guests[0].token)
    assert back["type"] == "welcome" and back["player"] == guests[0].player, back
    await clients.connect(urls[0], "192.0.2.60", "robo", bot=True)
    await clients.connect(urls[0], "192.0.2.61", "other")
    again = await (await clients.socket(urls[0], "192.0.2.60")).request(
        "hello", protocol=1, name="fifth"
    )
    assert again["code"] == "rate_limited", again


async def test_a_socket_watches_so_many_games(moose_server, clients):
    url = await moose_server(watched_per_socket=1, turn_time=60, **TRUST)
    players = [await clients.connect(url, "198.51.100.40") for _ in range(2)]
    await players[0].request("queue", min_players=2, max_players=2)
    await players[1].request("queue", min_players=2, max_players=2)
    game = (await players[0].expect(type="match"))["game"]
    host = await clients.connect(url, "198.51.100.41")
    started = await bot_game(host)
    watcher = await clients.connect(url, "198.51.100.42")
    assert (await watcher.request("watch", game=game))["type"] == "watching"
    assert (await watcher.request("watch", game=game))["type"] == "watching"  # the same one
    other, code = started["match"]["game"], started["table"]["code"]
    refused = await watcher.request("watch", game=other, code=code)
    assert refused["code"] == "too_many_watched" and "retry_after" not in refused, refused
    assert (await watcher.request("unwatch", game=game))["type"] == "unwatched"
    answer = await watcher.request("watch", game=other, code=code)
    assert answer["type"] == "watching", answer


async def test_the_api_answers_429_past_an_address_share(moose_server):
    url = await moose_server(api_burst=3, api_rate=0.01, **TRUST)
    base = http_base(url)
    async with aiohttp.ClientSession() as session:
        seen = []
        for address in ["192.0.2.60"] * 4 + ["192.0.2.61"]:
            headers = {"X-Forwarded-For": address}
            async with session.get(f"{base}/api/leaderboard", headers=headers) as resp:
                seen.append((resp.status, resp.headers.get("Retry-After"), await resp.json()))
    assert [s for s, _, _ in seen] == [200, 200, 200, 429, 200]
    _, retry, body = seen[3]
    assert body["error"] == "rate_limited" and 0 < body["retry_after"] <= 100_000, body
    assert retry is not None and int(retry) == -(-body["retry_after"] // 1000)
