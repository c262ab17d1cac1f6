"""Games without sockets: bots play whole games, records replay, errors, away and back."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moose import rules
from moose_server.games import GameError, Games
from moose_server.settings import Settings
from moose_server.store import Store, connect

from helpers import replay


@pytest.fixture
async def games(redis_url: str) -> Any:
    """Games over the test Redis (an hour per turn: no timeouts here)."""
    client = connect(redis_url, 8)
    games = Games(Store(client, 16), Settings(redis_url=redis_url, turn_time=3600))
    yield games
    await games.close()
    await client.aclose()


async def finished(games: Games, game_id: str) -> Any:
    """The game once it is over (bots play in a background task)."""
    async with asyncio.timeout(30):
        while not (game := await games.load(game_id)).state.over:
            await asyncio.sleep(0.01)
    return game


@pytest.mark.parametrize("bots", [("greedy", "random"), ("cautious", "greedy", "random", "x")])
async def test_bots_play_a_whole_game_and_the_record_replays(games, bots):
    seats = [(None, f"b{i}", name) for i, name in enumerate(bots)]  # "x": unknown, greedy plays
    game = await finished(games, (await games.create(seats)).id)
    record = await games.record(game.id)
    final = replay(record)
    assert final == game.state
    assert record["result"] == {"scores": rules.scores(final), "winners": rules.winners(final)}
    entries = await games.store.events(game.id)
    assert [e.seq for e in entries] == list(range(1, game.version + 1))
    kinds = [e.event["kind"] for e in entries]
    assert (
        kinds[0] == "start" and kinds[-1] == "over" and kinds.count("move") == len(record["moves"])
    )
    assert {e.event["auto"] for e in entries if e.event["kind"] == "move"} <= {"bot", "forced"}


async def test_a_player_plays_against_a_bot_to_the_end(games):
    game = await games.create([("p_h", "hugo", None), (None, "bot", "greedy")])
    assert await games.store.player_games("p_h") == [game.id]
    with pytest.raises(GameError) as err:
        await games.record(game.id)
    assert err.value.code == "not_over"
    async with asyncio.timeout(30):
        while not (game := await games.load(game.id)).state.over:
            if rules.to_act(game.state) == 0 and game.auto_kind() is None:
                await games.move(game.id, "p_h", rules.legal_moves(game.state)[-1], game.version)
            else:
                await asyncio.sleep(0.01)
    assert replay(await games.record(game.id)) == game.state
    assert await games.store.player_games("p_h") == []
    with pytest.raises(GameError) as err:
        await games.move(game.id, "p_h", {"action": "pass"})
    assert err.value.code == "game_over"
    ttl = await games.store.redis.ttl(games.store.game_key(game.id))
    assert 0 < ttl <= games.settings.game_ttl


async def test_unknown_games_are_no_such_game(games):
    for call in (games.load("g_x"), games.record("g_x"), games.move("g_x", "p", {})):
        with pytest.raises(GameError) as err:
            await call
        assert err.value.code == "no_such_game"


async def test_back_brings_an_away_seat_back_once(games):
    game = await games.create([("p_a", "ann", None), ("p_b", "bob", None)])
    now = await games.store.now_ms() + 10_000_000  # as if every deadline had passed
    while not any(game.away):  # the seats alternate: the first to miss twice is away
        await games.timeout(game.id, now)
        game = await games.load(game.id)
    away = [k for k in range(2) if game.away[k]]
    assert game.misses[away[0]] == games.settings.away_after
    player = game.players[away[0]]
    await games.back(game.id, player)
    await games.back(game.id, player)  # not away any more: nothing happens
    game = await games.load(game.id)
    kinds = [e.event["kind"] for e in await games.store.events(game.id)]
    assert kinds.count("back") == 1 and not any(game.away)
