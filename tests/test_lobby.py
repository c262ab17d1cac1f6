"""The lobby deals the games of formed tables: once, and never losing a table.

A formed table waits in Redis under a key until its game is dealt. When the
dealing fails (a Redis error) or its dealer dies, a later round, on any
instance, hands it out again after the lease; the game id comes from the key,
so dealing twice makes one game.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from moose_server.matchmaking.dealer import Lobby, game_id_of
from moose_server.matchmaking.matchmaker import Matchmaker, MatchOptions
from moose_server.play.games import Games
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.store import Store

from helpers import until

LEASE = 0.2


@pytest.fixture
async def lobby(backend_url: str) -> AsyncIterator[Lobby]:
    """A lobby (its matchmaker's lease short) on each backend."""
    backend = await open_redis(backend_url, 16)
    settings = Settings(redis_url=backend_url, lease=LEASE)
    store = Store(backend, settings.buckets)
    games = Games(store, settings)
    mm = Matchmaker(backend, MatchOptions(match_wait=0, instance="i_a", lease=LEASE))
    yield Lobby(mm, games, store, settings)
    await games.close()
    await backend.aclose()


async def form_until_dealt(lobby: Lobby, player: str) -> list[str]:
    """Run matchmaking rounds until the player has a game; their games."""
    async with asyncio.timeout(10):
        while not (games := await lobby.store.player_games(player)):
            await lobby.start_all(await lobby.matchmaker.form_tables())
            await asyncio.sleep(0.02)
    return games


async def test_a_table_whose_dealing_failed_is_dealt_after_the_lease(lobby, monkeypatch):
    mm = lobby.matchmaker
    await mm.enqueue("p1", "ann", 2, 2)
    await mm.enqueue("p2", "bob", 2, 2)
    real_create = lobby.games.create
    failures: list[str] = []

    async def create(*args: Any, **kwargs: Any) -> Any:
        if not failures:
            failures.append(kwargs["game_id"])
            raise RedisConnectionError("Redis went away mid-deal")
        return await real_create(*args, **kwargs)

    monkeypatch.setattr(lobby.games, "create", create)
    [table] = await mm.form_tables()
    await lobby.start_all([table])  # fails: logged, the table stays in Redis
    assert failures and await lobby.store.player_games("p1") == []
    # (That the lease holds it meanwhile is test_matchmaking's: LEASE is too short
    # to say so here on a busy machine.)
    assert not await mm.leave("p1")  # no ticket either: the table has them
    games = await form_until_dealt(lobby, "p1")
    assert games == [game_id_of(table.key)] == await lobby.store.player_games("p2")
    game = await lobby.games.load(games[0])
    assert sorted(p for p in game.players if p) == ["p1", "p2"] and game.version == 1
    # Dealt: it never comes back. A table formed later comes back once its lease is
    # over, and the dealt one's lease, older, would be over too.
    await mm.enqueue("p3", "cat", 2, 2)
    await mm.enqueue("p4", "dan", 2, 2)
    [later] = await mm.form_tables()
    assert await until(mm.form_tables) == [later]


async def test_dealing_a_table_twice_makes_one_game(lobby):
    mm = lobby.matchmaker
    await mm.enqueue("p1", "ann", 2, 2)
    await mm.enqueue("p2", "bob", 2, 2)
    [table] = await mm.form_tables()
    first, second = await asyncio.gather(lobby.start(table), lobby.start(table))
    assert first.id == second.id == game_id_of(table.key)
    assert (await lobby.store.load(first.id)).version == 1  # one start event
    assert await lobby.store.player_games("p1") == [first.id]


async def test_a_private_table_started_by_a_host_whose_deal_failed_is_dealt_later(lobby):
    mm = lobby.matchmaker
    info = await mm.create_table("h", "host", 2)
    await mm.add_bot(info.code, "h", "greedy")
    table = await mm.start_table(info.code, "h")  # then the host's instance fails to deal
    assert table.key and table.source == f"table:{info.code}"
    games = await form_until_dealt(lobby, "h")
    assert games == [game_id_of(table.key)]
    game = await lobby.games.load(games[0])
    assert game.players == ["h", None] and game.bots == [None, "greedy"]
    assert game.code == info.code  # a private table's game knows its join code


async def test_a_game_from_the_public_queue_has_no_join_code(lobby):
    await lobby.matchmaker.enqueue("p1", "ann", 2, 2)
    await lobby.matchmaker.enqueue("p2", "bob", 2, 2)
    [game_id] = await form_until_dealt(lobby, "p1")
    assert (await lobby.games.load(game_id)).code is None


async def test_a_server_deals_the_table_an_instance_formed_before_it_died(
    redis_url, moose_server, ws_client
):
    url = await moose_server(lease=LEASE, match_wait=60)
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    for client in (ann, bob):
        # Two players who want up to 3 seats fill no table at once: the server's own
        # rounds wait `match_wait` for a third, so only the dying instance forms one.
        assert (await client.request("queue", min_players=2, max_players=3))["type"] == "queued"
    backend = await open_redis(redis_url, 4)
    try:  # another instance forms their table, and dies before dealing it
        dying = Matchmaker(backend, MatchOptions(match_wait=0, instance="i_dying", lease=LEASE))
        [table] = await dying.form_tables()
    finally:
        await backend.aclose()
    first, second = await ann.expect(type="match"), await bob.expect(type="match")
    assert first["game"] == second["game"] == game_id_of(table.key)
    assert {first["seat"], second["seat"]} == {0, 1}
