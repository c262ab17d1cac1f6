"""The HTTP JSON API and the protocol's leaderboard and profile, after bots play real games;
bots are flagged at the table."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import aiohttp

import moose

from helpers import ServeProcess, http_base

FIELDS = {"player", "name", "rating", "games", "bot"}
ENV = {"MOOSE_PROVISIONAL_GAMES": "2", "MOOSE_MATCH_INTERVAL": "0.05"}


async def get(base: str, path: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as session, session.get(base + path) as resp:
        return resp.status, await resp.json()


async def test_leaderboard_and_profiles_after_bots_play(
    moose_serve: Callable[..., ServeProcess], redis_url: str
):
    server = moose_serve("--redis", redis_url, "--match-wait", "0.2", env=ENV)
    # Four bot clients play 2-seat games until 6 have finished: each plays about 3.
    done = subprocess.run(
        [sys.executable, "-m", "moose", "bots", "--url", server.url, "--count", "4",
         "--games", "6", "--players", "2", "--seed", "1"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    status, board = await get(server.http, "/api/leaderboard?limit=10&kind=bots")
    assert status == 200 and board["kind"] == "bots"
    players = board["players"]
    assert players and all(set(p) == FIELDS and p["bot"] for p in players)
    assert [p["rating"] for p in players] == sorted((p["rating"] for p in players), reverse=True)
    assert all(p["games"] >= 2 for p in players)  # provisional ones are not listed
    assert (await get(server.http, "/api/leaderboard?kind=humans"))[1]["players"] == []

    best = players[0]
    status, prof = await get(server.http, f"/api/players/{best['player']}")
    assert status == 200
    assert {k: prof[k] for k in FIELDS} == best
    assert prof["rank"] == 1 and prof["account"] is False and prof["provisional"] is False
    history = prof["history"]
    assert len(history) == best["games"] == len({h["game"] for h in history})
    assert sum(h["change"] for h in history) == best["rating"] - 540  # from a newcomer's
    newest = history[0]
    assert newest["rating"] == best["rating"] and newest["names"][newest["seat"]] == best["name"]
    assert newest["bots"] == [True, True] and newest["place"] in (1, 2)
    status, record = await get(server.http, newest["record"])
    assert status == 200 and record["names"] == newest["names"]
    assert record["result"]["scores"] == newest["scores"]

    status, missing = await get(server.http, "/api/players/p_0000000000")
    assert status == 404 and missing["error"] == "no_such_player" and missing["message"]
    status, bad = await get(server.http, "/api/leaderboard?kind=robots")
    assert status == 400 and bad["error"] == "bad_message"
    status, _ = await get(server.http, "/api/games/g_0000000000/record")
    assert status == 404

    # The same over the protocol.
    async with moose.connect(server.url, name="reader") as client:
        assert await client.leaderboard("bots", 10) == players
        mine = await client.profile(best["player"])
        assert mine["history"] == history
        try:
            await client.profile(name="nobody-at-all")
        except moose.ServerError as exc:
            assert exc.code == "no_such_player"
        else:
            raise AssertionError("an unknown name has a profile")


async def test_bots_are_flagged_at_the_table(moose_server: Any, ws_client: Any):
    url = await moose_server(provisional_games=2)
    bot_task = asyncio.create_task(
        moose.play_bot(url, "greedy", name="robo", min_players=2, max_players=2)
    )
    human = await ws_client(url, "hana")
    await human.request("queue", min_players=2, max_players=2)
    match = await human.expect(type="match")
    me = match["seat"]
    assert match["bots"][me] is False and match["bots"][1 - me] is True
    newcomer = {"rating": 540, "provisional": True}
    assert match["ratings"] == [newcomer, newcomer]
    start = await human.expect(type="event", seq=1)
    assert start["event"]["bots"] == match["bots"]
    fan = await ws_client(url, "fan", binary=False)
    await fan.request("watch", game=match["game"])
    state = await fan.expect(type="event", game=match["game"])
    assert state["event"]["bots"] == match["bots"]
    bot_task.cancel()
    await asyncio.gather(bot_task, return_exceptions=True)
    # The server's own bots at a private table.
    host = await ws_client(url, "hugo")
    table = await host.request("create_table", players=2)
    await host.request("add_bot", code=table["code"], bot="greedy")
    await host.request("start_table", code=table["code"])
    match = await host.expect(type="match")
    assert match["bots"] == [False, True] and match["ratings"][1] is None
    # A player who said hello as a bot, at a private table.
    table = await host.request("create_table", players=3)
    robot = await ws_client(url, None)
    welcome = await robot.request("hello", protocol=1, name="robotnik", bot=True)
    assert welcome["bot"] is True
    joined = await robot.request("join_table", code=table["code"])
    assert [s and s["is_bot"] for s in joined["seats"]] == [False, True, None]
    await host.request("add_bot", code=table["code"], bot="random")
    told = await robot.expect(type="table")
    assert [s["is_bot"] for s in told["seats"]] == [False, True, True]


def test_moose_top_and_profile_print_the_boards(
    moose_serve: Callable[..., ServeProcess], redis_url: str
):
    server = moose_serve("--redis", redis_url, "--match-wait", "0.2", env=ENV)
    subprocess.run(
        [sys.executable, "-m", "moose", "bots", "--url", server.url, "--count", "2",
         "--games", "2", "--players", "2", "--name", "tb"],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "moose", "top", "--bots", "--url", server.url, "--json"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    players = json.loads(out)["players"]
    assert sorted(p["name"] for p in players) == ["tb-1", "tb-2"]
    table = subprocess.run(
        [sys.executable, "-m", "moose", "top", "--bots", "--url", server.url],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert "tb-1 [bot]" in table and str(players[0]["rating"]) in table
    shown = subprocess.run(
        [sys.executable, "-m", "moose", "profile", players[0]["player"], "--url", server.url],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert f"rating {players[0]['rating']} after 2 rated games, #1 of the bots" in shown
    missing = subprocess.run(
        [sys.executable, "-m", "moose", "profile", "nobody", "--url", server.url],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert missing.returncode == 1 and "no_such_player" in missing.stderr


async def test_a_404_quotes_no_markup_from_the_request(moose_server: Any):
    base = http_base(await moose_server())
    name = '"><script>alert(1)<script a="'  # the message quotes the name it did not find
    async with aiohttp.ClientSession() as session, session.get(f"{base}/api/players/{name}") as r:
        status, raw, headers = r.status, await r.read(), r.headers.copy()
    assert status == 404 and headers["Content-Type"].startswith("application/json"), raw
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert b"<" not in raw and b">" not in raw  # as the JSON escapes \u003c and \u003e
    answer = json.loads(raw)
    assert answer["error"] == "no_such_player" and name[:24] in answer["message"]
