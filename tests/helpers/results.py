"""Games and Results of one server instance in the test's process, over a real Redis,
and games played out through them (tests of ratings and histories)."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError

from moose import rules
from moose_server.accounts.store import PlayerStore
from moose_server.play.game import Game
from moose_server.play.games import Games
from moose_server.play.results import Results
from moose_server.settings import Settings
from moose_server.storage.connection import open_node, open_redis
from moose_server.storage.store import Store

__all__ = ["parts", "play_out"]


@asynccontextmanager
async def parts(
    url: str, *, players_url: str | None = None, **changes: Any
) -> AsyncIterator[tuple[Games, Results]]:
    """Games and Results of one instance over `url` (its players' store over `players_url`),
    with these settings `changes`."""
    redis = await open_redis(url, 16)
    other = open_node(players_url, 4) if players_url else None
    settings = Settings(
        redis_url=url, turn_time=3600, provisional_games=2, rate_sweep_after=0, **changes
    )
    store = Store(redis, 16)
    results = Results(store, PlayerStore(other or redis), settings)
    games = Games(store, settings, results)
    try:
        yield games, results
    finally:
        await games.close()
        if other is not None:
            await other.aclose()
        await redis.aclose()


async def play_out(games: Games, game: Game, seed: int) -> Game:
    """Random legal moves for the human seats (a pass that is the only move, the server
    plays) until the game is over. A failed rating update on the last move is let be."""
    rng = random.Random(seed)
    async with asyncio.timeout(60):
        while not game.state.over:
            seat = rules.to_act(game.state)
            player = game.players[seat] if seat is not None else None
            if player is not None and game.auto_kind() is None:
                with contextlib.suppress(RedisConnectionError):
                    await games.move(game.id, player, rng.choice(game.legal), seq=game.version)
            else:
                await asyncio.sleep(0.01)
            game = await games.load(game.id)
    return game
