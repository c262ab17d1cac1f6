"""Stored formats: a game written before formats were numbered plays on, one written by
a newer release is refused and left as it is (storage/formats.py)."""

from __future__ import annotations

from typing import Any

import pytest

from moose import rules
from moose_server.play.games import Games
from moose_server.play.seats import Seat
from moose_server.storage import formats
from moose_server.storage.codec import pack, unpack_stored
from moose_server.storage.failures import UNAVAILABLE
from moose_server.storage.formats import UnknownFormat

from helpers import open_games

PLAYERS = ["p_a", "p_b"]


@pytest.fixture
async def games(redis_url: str) -> Any:
    """Games over the test Redis (an hour per turn: no timeouts here)."""
    async with open_games(redis_url, turn_time=3600) as games:
        yield games


async def stored(games: Games, game_id: str) -> dict[str, Any]:
    """The game's data map as Redis holds it."""
    raw = await games.store.redis.hget(games.store.keys_of(game_id).game, "data")
    assert raw is not None
    data: dict[str, Any] = unpack_stored(raw)
    return data


async def rewrite(games: Games, game_id: str, data: dict[str, Any]) -> None:
    """Put `data` in the game's hash in place of its own, as another release would."""
    await games.store.redis.hset(games.store.keys_of(game_id).game, {"data": pack(data)})


async def started(games: Games) -> str:
    """A game of two people, dealt and waiting for its first move."""
    game = await games.create([Seat(p, p, None) for p in PLAYERS], seed=3)
    return game.id


async def first_move(redis_url: str, game_id: str) -> int:
    """The player to act plays a legal move through a new instance's Games (no copy of
    the game in memory): the seq of its event."""
    async with open_games(redis_url, turn_time=3600) as fresh:
        game = await fresh.load(game_id)
        player = PLAYERS[rules.to_act(game.state)]
        return await fresh.move(game_id, player, game.legal[0], seq=game.version)


async def test_a_game_is_written_in_this_releases_format(games):
    game_id = await started(games)
    assert (await stored(games, game_id))[formats.FIELD] == formats.WRITTEN


async def test_a_game_written_without_a_format_plays_on_and_is_written_in_this_one(
    games, redis_url
):
    game_id = await started(games)
    old = await stored(games, game_id)
    del old[formats.FIELD]  # as the releases before formats wrote it
    await rewrite(games, game_id, old)
    version = (await games.store.load(game_id)).version
    assert await first_move(redis_url, game_id) == version + 1
    after = await stored(games, game_id)
    assert after[formats.FIELD] == formats.WRITTEN
    assert after["players"] == old["players"] and len(after["moves"]) == 1


async def test_a_game_of_a_newer_format_is_refused_and_left_as_it_is(games, redis_url):
    game_id = await started(games)
    newer = {**await stored(games, game_id), formats.FIELD: formats.NEWEST + 1, "later": [1]}
    await rewrite(games, game_id, newer)
    before = await games.store.redis.hgetall(games.store.keys_of(game_id).game)
    with pytest.raises(UnknownFormat, match=f"format {formats.NEWEST + 1}.*upgrade"):
        await first_move(redis_url, game_id)
    after = await games.store.redis.hgetall(games.store.keys_of(game_id).game)
    assert after == before  # nothing written: no move, no format dropped


def test_a_map_of_an_unknown_format_is_answered_as_storage_out_of_reach():
    # A request answers `unavailable` (the client tries again) and loops go on.
    assert isinstance(UnknownFormat("game g_x", formats.NEWEST + 1), UNAVAILABLE)


@pytest.mark.parametrize("found", [formats.NEWEST + 1, -1, "1", True, None])
def test_a_map_of_a_format_outside_the_read_ones_is_refused(found):
    with pytest.raises(UnknownFormat, match=repr(found)):
        formats.read({formats.FIELD: found, "players": []}, "game g_x")


def test_the_formats_read_reach_back_to_the_one_before_the_written_one():
    assert formats.OLDEST <= formats.WRITTEN - 1 < formats.WRITTEN <= formats.NEWEST
    for fmt in range(formats.OLDEST, formats.NEWEST + 1):
        assert formats.read({formats.FIELD: fmt, "n": 1}, "x")["n"] == 1
    assert formats.read({"n": 1}, "x") == {"n": 1}  # no field: format 0


async def test_a_correspondence_game_waits_with_its_data_compressed_and_plays_on(games, redis_url):
    """While it waits days for a move, the game's data is stored zlib-compressed (the
    map inside, `fmt` and all, the same); every reader takes either (codec.unpack_stored)."""
    corr = await games.create([Seat(p, p, None) for p in PLAYERS], seed=3, days=3)
    live = await games.create([Seat(p, p, None) for p in PLAYERS], seed=3)
    keys = [games.store.keys_of(g.id).game for g in (corr, live)]
    raw = [await games.store.redis.hget(k, "data") for k in keys]
    assert raw[0] is not None and raw[1] is not None
    assert raw[0][:1] == b"\x78" and raw[1][:1] != b"\x78"
    assert len(raw[0]) * 2 < len(raw[1])  # 1,483 -> 404 bytes dealt, 2 players
    assert unpack_stored(raw[0]) == {**unpack_stored(raw[1]), "days": 3}
    assert (await stored(games, corr.id))[formats.FIELD] == formats.WRITTEN
    assert await first_move(redis_url, corr.id) == corr.version + 1  # read by a new instance
    after = await games.store.redis.hget(keys[0], "data")
    assert after is not None and after[:1] == b"\x78"
    assert len(unpack_stored(after)["moves"]) == 1
