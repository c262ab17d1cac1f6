"""Two rating pools over the wire: raw protocol clients against a real server.

A rated correspondence game (days a move) changes its players' correspondence
ratings and boards, never the real-time ones, and a real-time game the
reverse; `leaderboard` with `pool`, the profile's `correspondence` block, the
HTTP API and `moose top --correspondence` read them. A `pool` outside the two
is refused.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import aiohttp
import pytest

import moose

from helpers import http_base, make_due, open_games, play_out

Message = dict[str, Any]


async def rated_game(host: Any, guest: Any, days: int | None) -> None:
    """A rated two-seat private table (`days` a move, or real time) played out by both."""
    extra = {} if days is None else {"days": days}
    table = await host.request("create_table", players=2, rated=True, **extra)
    assert table["type"] == "table" and table["rated"] is True, table
    assert (await guest.request("join_table", code=table["code"]))["type"] == "table"
    assert (await host.request("start_table", code=table["code"]))["type"] == "table"
    matches = [await c.expect(type="match") for c in (host, guest)]
    game = matches[0]["game"]
    ends = await asyncio.gather(*(play_out(c, game, seed) for seed, c in enumerate((host, guest))))
    assert all(e[-1]["event"]["kind"] == "over" and e[-1]["event"]["ratings"] for e in ends)


async def pools_of(client: Any, player: str) -> tuple[Message, Message]:
    """(real-time, correspondence) standing of a player, from the protocol's profile."""
    prof = await client.request("profile", player=player)
    assert prof["type"] == "profile", prof
    return {k: prof[k] for k in ("rating", "games", "rank")}, prof["correspondence"]


async def board(client: Any, pool: str | None) -> Message:
    fields = {} if pool is None else {"pool": pool}
    answer = await client.request("leaderboard", kind="humans", **fields)
    assert answer["type"] == "leaderboard", answer
    return answer


@pytest.mark.slow  # two games played out, `moose top` run twice
async def test_each_pool_rates_its_own_games(serve, ws_client):
    url = (await serve(provisional_games=1, rate=1000.0, burst=1000)).url
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    await rated_game(ann, bob, days=3)
    realtime, corr = await pools_of(ann, ann.player)
    assert realtime["games"] == 0 and realtime["rank"] is None
    assert corr["games"] == 1 and corr["rating"] is not None and corr["rank"] in (1, 2)
    assert corr["provisional"] is False
    listed = await board(ann, "correspondence")
    assert listed["pool"] == "correspondence" and listed["total"] == 2
    assert {p["player"] for p in listed["players"]} == {ann.player, bob.player}
    mine = next(p for p in listed["players"] if p["player"] == ann.player)
    assert (mine["rating"], mine["games"]) == (corr["rating"], 1)
    default = await board(ann, None)
    assert default["pool"] == "realtime" and default["players"] == [] and default["total"] == 0

    await rated_game(ann, bob, days=None)  # real time: only that pool moves
    realtime_after, corr_after = await pools_of(bob, ann.player)
    assert realtime_after["games"] == 1 and realtime_after["rank"] in (1, 2)
    assert corr_after == corr
    assert (await board(bob, "realtime"))["total"] == 2
    assert (await board(bob, "correspondence"))["players"] == listed["players"]
    hist = (await ann.request("profile"))["history"]
    assert [h.get("days") for h in hist] == [None, 3]  # newest first

    # The client library, the HTTP API and the command line read the same boards.
    async with moose.connect(url, name="reader") as reader:
        assert await reader.leaderboard(pool="correspondence") == listed["players"]
    base = http_base(url)
    async with aiohttp.ClientSession() as session:
        async with session.get(base + "/api/leaderboard?pool=correspondence") as resp:
            assert resp.status == 200 and (await resp.json())["players"] == listed["players"]
        async with session.get(f"{base}/api/players/{ann.player}") as resp:
            assert (await resp.json())["correspondence"] == corr
        async with session.get(base + "/api/leaderboard?pool=slow") as resp:
            assert resp.status == 400 and (await resp.json())["error"] == "bad_message"
    cli = [sys.executable, "-m", "moose", "top", "--correspondence", "--url", url]
    done = await asyncio.to_thread(
        subprocess.run, [*cli, "--json"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert '"pool": "correspondence"' in done.stdout and ann.player in done.stdout
    shown = await asyncio.to_thread(subprocess.run, cli, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "correspondence" in shown.stdout and "ann" in shown.stdout
    profile = [sys.executable, "-m", "moose", "profile", ann.player, "--url", url]
    prof = await asyncio.to_thread(
        subprocess.run, profile, capture_output=True, text=True, timeout=60
    )
    assert prof.returncode == 0, prof.stderr
    assert f"correspondence: rating {corr['rating']} after 1 rated games" in prof.stdout


@pytest.mark.parametrize("pool", ["slow", "", 3, None])
async def test_a_pool_outside_the_two_is_refused(url, ws_client, pool):
    client = await ws_client(url, "ann")
    fields = {"pool": pool}
    answer = await client.request("leaderboard", **fields)
    if pool is None:  # null: the default pool
        assert answer["type"] == "leaderboard" and answer["pool"] == "realtime"
        return
    assert answer["type"] == "error" and answer["code"] == "bad_message", answer


async def test_a_correspondence_game_ended_by_its_clock_rates_that_pool_only(
    serve, ws_client, redis_url
):
    url = (await serve(provisional_games=1)).url
    ann, bob, reader = [await ws_client(url, n) for n in ("ann", "bob", "reader")]
    table = await ann.request("create_table", players=2, rated=True, days=1)
    await bob.request("join_table", code=table["code"])
    await ann.request("start_table", code=table["code"])
    game = (await ann.expect(type="match"))["game"]
    # Nobody moves: the days run out (made due here) until both seats are away, and
    # the server plays the rest of the rated game for them.
    async with open_games(redis_url) as games:
        for _ in range(10):
            stored = await games.load(game)
            if all(stored.away):
                break
            await make_due(redis_url, game)
            while (await ann.expect(type="event", game=game))["seq"] <= stored.version:
                pass
    while (over := await ann.expect(type="event", game=game))["event"]["kind"] != "over":
        pass
    assert all(r is not None for r in over["event"]["ratings"])
    prof = await reader.request("profile", player=ann.player)
    assert prof["games"] == 0 and prof["correspondence"]["games"] == 1
    board = await reader.request("leaderboard", pool="correspondence")
    assert {p["player"] for p in board["players"]} == {ann.player, bob.player}
    assert (await reader.request("leaderboard"))["players"] == []
