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
import pytest

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
        [
            sys.executable,
            "-m",
            "moose",
            "bots",
            "--url",
            server.url,
            "--count",
            "4",
            "--games",
            "6",
            "--players",
            "2",
            "--seed",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
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
        [
            sys.executable,
            "-m",
            "moose",
            "bots",
            "--url",
            server.url,
            "--count",
            "2",
            "--games",
            "2",
            "--players",
            "2",
            "--name",
            "tb",
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    out = subprocess.run(
        [sys.executable, "-m", "moose", "top", "--bots", "--url", server.url, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    players = json.loads(out)["players"]
    assert sorted(p["name"] for p in players) == ["tb-1", "tb-2"]
    table = subprocess.run(
        [sys.executable, "-m", "moose", "top", "--bots", "--url", server.url],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "tb-1 [bot]" in table and str(players[0]["rating"]) in table
    shown = subprocess.run(
        [sys.executable, "-m", "moose", "profile", players[0]["player"], "--url", server.url],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert f"rating {players[0]['rating']} after 2 rated games, #1 of the bots" in shown
    missing = subprocess.run(
        [sys.executable, "-m", "moose", "profile", "nobody", "--url", server.url],
        capture_output=True,
        text=True,
        timeout=60,
    )
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


# -- the page's needs: paging, a seat's profile, register keeps all ----


async def rated_game(url: str, ws_client: Any, name: str) -> tuple[Any, dict[str, Any]]:
    """`name` (a raw JSON socket) plays one queue game against a rated client bot; the
    socket and its `match`. The person never moves: their turns run out, then the
    server plays their seat, so the game ends quickly."""
    bot = asyncio.create_task(
        moose.play_bot(url, "greedy", name=f"{name}-bot", min_players=2, max_players=2)
    )
    person = await ws_client(url, name, binary=False)
    await person.request("queue", min_players=2, max_players=2)
    match = await person.expect(type="match")
    async with asyncio.timeout(60):
        while not any(
            m.get("type") == "event"
            and m.get("game") == match["game"]
            and m["event"]["kind"] == "over"
            for m in person.received
        ):
            await asyncio.sleep(0.05)
    await asyncio.wait_for(bot, 60)
    return person, match


@pytest.mark.slow  # a whole rated game, its turns running out
async def test_register_keeps_a_guests_rating_and_history(moose_server: Any, ws_client: Any):
    url = await moose_server(provisional_games=1, turn_time=0.3, answer_time=0.3)
    ann, match = await rated_game(url, ws_client, "ann")
    before = await ann.request("profile")
    assert before["account"] is False and before["games"] == 1 and before["history"]
    [entry] = before["history"]
    assert entry["game"] == match["game"] and entry["players"][entry["seat"]] == ann.player
    weak = await ann.request("register", password="short")
    assert weak["type"] == "error" and weak["code"] == "bad_password"
    assert (await ann.request("profile"))["account"] is False  # nothing changed
    done = await ann.request("register", password="lantern moose quill 88")
    assert done["type"] == "registered" and done["player"] == ann.player
    after = await ann.request("profile", name="ANN")  # a look-alike of the account's name
    assert after["account"] is True
    assert {k: after[k] for k in ("player", "rating", "games", "history", "rank")} == {
        k: before[k] for k in ("player", "rating", "games", "history", "rank")
    }


@pytest.mark.slow  # a whole rated game, its turns running out
async def test_a_seats_profile_is_found_by_game_and_seat(moose_server: Any, ws_client: Any):
    url = await moose_server(provisional_games=1, turn_time=0.3, answer_time=0.3)
    ann, match = await rated_game(url, ws_client, "ann")
    other = 1 - match["seat"]
    fan = await ws_client(url, "fan", binary=False)
    found = await fan.request("profile", game=match["game"], seat=other)
    assert found["type"] == "profile" and found["bot"] is True
    assert found["name"] == match["names"][other]
    mine = await fan.request("profile", game=match["game"], seat=match["seat"])
    assert mine["player"] == ann.player
    bad = await fan.request("profile", game=match["game"], seat=2)
    assert bad["type"] == "error" and bad["code"] == "bad_message"
    missing = await fan.request("profile", game="g_0000000000", seat=0)
    assert missing["type"] == "error" and missing["code"] == "no_such_game"
    # The server's own bot has no profile; a stranger may not look into a private game.
    host = await ws_client(url, "hugo", binary=False)
    table = await host.request("create_table", players=2)
    await host.request("add_bot", code=table["code"], bot="greedy")
    await host.request("start_table", code=table["code"])
    private = await host.expect(type="match")
    none = await host.request("profile", game=private["game"], seat=1)
    assert none["type"] == "error" and none["code"] == "no_such_player"
    hidden = await fan.request("profile", game=private["game"], seat=0)
    assert hidden["type"] == "error" and hidden["code"] == "not_in_game"


@pytest.mark.slow  # a whole rated game, its turns running out
async def test_leaderboards_are_paged(moose_server: Any, ws_client: Any):
    url = await moose_server(provisional_games=1, turn_time=0.3, answer_time=0.3)
    for name in ("ann", "bea"):
        await rated_game(url, ws_client, name)
    reader = await ws_client(url, "reader", binary=False)
    whole = await reader.request("leaderboard", kind="humans", limit=10)
    assert whole["total"] == 2 and whole["offset"] == 0 and len(whole["players"]) == 2
    second = await reader.request("leaderboard", kind="humans", limit=1, offset=1)
    assert second["total"] == 2 and second["players"] == whole["players"][1:]
    past = await reader.request("leaderboard", kind="humans", limit=1, offset=5)
    assert past["players"] == [] and past["total"] == 2
    bad = await reader.request("leaderboard", offset=-1)
    assert bad["type"] == "error" and bad["code"] == "bad_message"
    status, page = await get(http_base(url), "/api/leaderboard?kind=humans&limit=1&offset=1")
    assert status == 200 and page["players"] == second["players"] and page["total"] == 2
    status, wrong = await get(http_base(url), "/api/leaderboard?offset=x")
    assert status == 400 and wrong["error"] == "bad_message"
