"""Every finished game is in its players' histories, rated or not, once: a private
table's game, and a rated game's seats it did not rate; a guest's history lasts
as long as the guest does. Over Games and Results in this process, and over the
raw protocol."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from moose_server.accounts.leaderboards import Boards
from moose_server.play.results import Results
from moose_server.play.seats import Seat
from moose_server.storage.keys import history_key

from helpers.results import parts, play_out
from helpers.sockets import play_out as play_raw
from helpers.sockets import table_game

PEOPLE = [Seat("p_ann", "ann", None), Seat("p_bob", "bob", None)]
BOT = Seat(None, "greedy-bot 1", "greedy")


async def entries(results: Results, player: str) -> list[dict[str, Any]]:
    """A player's history, newest first."""
    return [json.loads(raw) for raw in await results.players.history(player, 100)]


async def test_an_unrated_game_is_in_each_player_s_history_once(redis_url) -> None:
    async with parts(redis_url) as (games, results):
        seats = [*PEOPLE, BOT]
        game = await games.create(
            seats, seed=7, code="ABCDEF", profiles=await results.profiles(seats)
        )
        game = await play_out(games, game, 7)
        # Applied again, racing, as the sweep of other instances may: listed once.
        others = [Results(results.store, results.players, results.settings) for _ in range(4)]
        await asyncio.gather(*(r.apply(game, 0) for r in others))
        for seat, s in enumerate(PEOPLE):
            [entry] = await entries(results, s.player or "")
            assert (entry["game"], entry["seat"], entry["rating"], entry["change"]) == (
                game.id,
                seat,
                None,
                None,
            )
            assert entry["names"] == game.names and entry["players"] == ["p_ann", "p_bob", None]
        # Nobody was rated: no profile, and yet a profile to show with the game.
        assert await results.players.profiles(["p_ann"]) == [{}]
        shown = await Boards(results.players, results.settings).profile("p_ann", 0)
        assert (shown["name"], shown["rating"], shown["games"], shown["rank"]) == (
            "ann",
            None,
            0,
            None,
        )
        assert [g["game"] for g in shown["history"]] == [game.id]


async def test_a_rated_game_lists_the_seat_it_could_not_rate(redis_url) -> None:
    async with parts(redis_url) as (games, results):
        seats = [PEOPLE[0], BOT]  # one rated seat: the game changes no rating
        game = await games.create(
            seats, seed=8, code="ABCDEG", rated=True, profiles=await results.profiles(seats)
        )
        game = await play_out(games, game, 8)
        [entry] = await entries(results, "p_ann")
        assert (entry["game"], entry["rating"]) == (game.id, None)
        assert await results.players.profiles(["p_ann"]) == [{}]


async def test_a_rated_game_is_listed_once_with_its_rating(redis_url) -> None:
    async with parts(redis_url) as (games, results):
        game = await games.create(
            PEOPLE, seed=9, rated=True, profiles=await results.profiles(PEOPLE)
        )
        game = await play_out(games, game, 9)
        for s in PEOPLE:
            [entry] = await entries(results, s.player or "")
            assert entry["game"] == game.id and entry["rating"] is not None


@pytest.mark.slow  # `moose profile` runs as a process
async def test_two_guests_see_their_private_game_in_their_profiles(
    moose_server, redis_url, ws_client
) -> None:
    url = await moose_server(rate_sweep_after=0)
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    game, _ = await table_game([ann, bob])
    await asyncio.gather(play_raw(ann, game, 1), play_raw(bob, game, 2))
    for me, other in ((ann, bob), (bob, ann)):
        own = await me.request("profile")
        assert (own["type"], own["player"], own["rating"]) == ("profile", me.player, None)
        assert [g["game"] for g in own["history"]] == [game]
        theirs = await me.request("profile", player=other.player)
        assert [g["game"] for g in theirs["history"]] == [game]
        assert theirs["history"][0]["rating"] is None and theirs["name"] == other.name
    # A guest's history goes with the guest.
    async with parts(redis_url) as (_, results):
        assert await results.players.redis.pttl(history_key(ann.player)) > 0
    # `moose profile` prints such a player and game too.
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moose",
        "profile",
        ann.player,
        "--url",
        url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out = (await proc.communicate())[0].decode()
    assert proc.returncode == 0, out
    assert "rating none yet" in out and game in out and "unrated" in out
    before = await ann.request("profile")
    missing = await ann.request("profile", player="p_nobody")
    assert (missing["type"], missing["code"]) == ("error", "no_such_player")
    assert await ann.request("profile") == {**before, "id": before["id"] + 2}
