"""Arena tournaments across `moose serve` processes.

Two instances over one Redis seat bot members of mixed table-size ranges for a
short arena; one instance is killed (SIGKILL) mid-tournament. Then: the
standings equal the points recomputed from the finished games' stored states,
each game is counted once, no player's games overlap in time, the winners have
it on their profile. And a raw-protocol test of the arena messages in JSON.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections import defaultdict
from typing import Any

import redis.asyncio as aioredis

from moose.client import Client
from moose_server.accounts import ratings
from moose_server.arenas.calls import ArenaMemberCall
from moose_server.arenas.points import seat_points
from moose_server.arenas.store import ArenaStore
from moose_server.play.game import Game
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import ArenaKeys

from helpers import arena_servers, create_arena, open_store

SIZES = [(2, 2), (2, 2), (2, 4), (2, 4), (2, 4), (3, 4), (3, 4), (2, 3)]


async def recomputed(redis_url: str, arena: str) -> tuple[dict[str, int], dict[str, Any]]:
    """Each member's points from the arena's games' stored states; the games."""
    client = aioredis.Redis.from_url(redis_url)
    gateway = await open_redis(redis_url, 4)
    try:
        games = await ArenaStore(gateway).games(arena)
        scored = {g.decode() for g in await client.smembers(ArenaKeys.of(arena).scored)}
        standings = dict(await client.zrange(ArenaKeys.of(arena).points, 0, -1, withscores=True))
    finally:
        await client.aclose()
        await gateway.aclose()
    assert scored == set(games), "every game scored, none twice or unknown"
    totals: dict[str, int] = defaultdict(int)
    async with open_store(redis_url) as store:
        for game_id, info in games.items():
            loaded = await store.load(game_id)
            assert loaded.data is not None
            game = Game.from_data(game_id, loaded.version, loaded.deadline, loaded.data)
            assert game.state.over and game.arena == arena
            earned = seat_points(ratings.places(game.state), game.away)
            assert info["points"] == earned
            for player, got in zip(game.players, earned, strict=True):
                assert player is not None
                totals[player] += got
    # A member never seated (joined late, or paused) stands at 0 with no game to count.
    standing = {k.decode(): int(v) for k, v in standings.items()}
    counted = {player: totals.get(player, 0) for player in standing}
    assert standing == counted
    assert set(totals) <= set(standing), "everyone who scored stands"
    return counted, games  # every member, those at 0 too, as the standings list them


def check_no_overlap(games: dict[str, Any]) -> None:
    """No player sat in two games at once: from seating to scoring, their spans are apart."""
    spans: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for info in games.values():
        for player in info["players"]:
            spans[player].append((info["start"], info["end"]))
    for player, mine in spans.items():
        mine.sort()
        for (_, end), (start, _) in itertools.pairwise(mine):
            assert end <= start, f"{player} sat in two games at once"


async def test_an_arena_over_two_instances_one_killed_counts_each_game_once(moose_serve, redis_url):
    procs = arena_servers(moose_serve, redis_url, 2)
    await create_arena(redis_url, "a_kill", 0.3)  # 18 s
    urls = [procs[0].url, procs[1].url]
    clients = [
        Client(urls if i % 2 == 0 else urls[::-1], name=f"bot{i}", bot=True, reconnect_timeout=30.0)
        for i in range(len(SIZES))
    ]
    played: dict[str, int] = defaultdict(int)

    async def member(i: int) -> None:
        low, high = SIZES[i]
        await clients[i].run_arena_bot(
            "greedy",
            "a_kill",
            min_players=low,
            max_players=high,
            on_result=lambda r: played.__setitem__(r.game, played[r.game] + 1),
        )

    for client in clients:
        await client.open()
    try:
        async with asyncio.timeout(60):
            tasks = [asyncio.create_task(member(i)) for i in range(len(SIZES))]
            while "arena a_kill: scored" not in procs[0].log.read_text() or len(played) < 4:
                assert not any(t.done() for t in tasks), [t.result() for t in tasks if t.done()]
                await asyncio.sleep(0.05)
            procs[0].kill()
            await asyncio.gather(*tasks)
    finally:
        for client in clients:
            await client.close()
    assert "arena a_kill: scored" in procs[1].log.read_text()  # games ended on both
    # Both instances tried to create each occurrence of the recurring arena: one did.
    logs = procs[0].log.read_text() + procs[1].log.read_text()
    made = re.findall(r"arena (people-hourly-\d{10}) created from the settings", logs)
    assert made and sorted(made) == sorted(set(made)), made
    totals, games = await recomputed(redis_url, "a_kill")
    check_no_overlap(games)
    assert len(games) >= 6
    sizes = {len(info["players"]) for info in games.values()}
    assert 2 in sizes and sizes & {3, 4}, sizes
    for info in games.values():  # each seat within its member's range
        for player in info["players"]:
            low, high = SIZES[int(info["names"][info["players"].index(player)][3:])]
            assert low <= len(info["players"]) <= high
    best = max(totals.values())
    async with Client(procs[1].url, name="reader") as reader:
        shown = await reader.arena("a_kill")
        assert shown["arena"]["state"] == "over"
        assert sorted(shown["arena"]["winners"]) == sorted(
            p for p, v in totals.items() if v == best
        )
        assert [s["points"] for s in shown["standings"]] == sorted(totals.values(), reverse=True)
        winner = shown["arena"]["winners"][0]
        assert "a_kill" in (await reader.profile(winner))["arenas_won"]


async def test_the_arena_messages_in_json_frames(moose_serve, redis_url, ws_client):
    [proc] = arena_servers(moose_serve, redis_url, 1)
    await create_arena(redis_url, "a_json", 0.2, who="people")
    ann = await ws_client(proc.url, "ann", binary=False)
    bob = await ws_client(proc.url, "bob", binary=False)
    listed = await ann.request("arenas")
    assert listed["type"] == "arena_list"
    found = {a["id"]: (a["for"], a["state"]) for a in listed["arenas"]}
    assert found.pop("a_json") == ("people", "running")
    # The rest: the recurring arena of the settings, this hour's (if not over) and the next.
    assert found and all(i.startswith("people-hourly-") for i in found), found
    assert {state for _, state in found.values()} <= {"running", "upcoming"}
    missing = await ann.request("join_arena", arena="nope")
    assert (missing["type"], missing["code"]) == ("error", "no_such_arena")
    wrong = await ann.request("join_arena", arena="a_json", min_players=5, max_players=6)
    assert (wrong["type"], wrong["code"]) == ("error", "bad_message")
    left = await ann.request("leave_arena", arena="a_json")
    assert (left["type"], left["code"]) == ("error", "not_member")
    watched = await ann.request("watch_arena", arena="a_json")
    assert watched["type"] == "arena" and watched["standings"] == []
    joined = await ann.request("join_arena", arena="a_json", max_players=2)
    assert (joined["type"], joined["state"], joined["max_players"]) == ("arena_member", "wait", 2)
    paused = await ann.request("pause_arena", arena="a_json")
    assert paused["state"] == "paused"
    pushed = await ann.expect(type="arena")  # the change, pushed to the watcher
    assert [(s["name"], s["points"]) for s in pushed["standings"]] == [("ann", 0)]
    await bob.request("join_arena", arena="a_json")
    await ann.request("join_arena", arena="a_json")
    match = await ann.expect(type="match")
    assert (await bob.expect(type="match"))["game"] == match["game"]
    standing = await ann.expect(type="arena")
    while not any(s["game"] for s in standing["standings"]):
        standing = await ann.expect(type="arena")
    assert {s["name"]: s["game"] for s in standing["standings"]} == {
        "ann": match["game"],
        "bob": match["game"],
    }
    assert (await ann.request("leave_arena", arena="a_json"))["state"] == "left"
    assert (await ann.request("unwatch_arena", arena="a_json"))["type"] == "arena_unwatched"
    shown = await bob.request("show_arena", arena="a_json")
    assert {s["name"]: s["state"] for s in shown["standings"]} == {"ann": "left", "bob": "wait"}
    assert json.dumps(shown)  # plain JSON all through


async def test_a_bot_the_server_paused_joins_again_and_plays_on(moose_serve, redis_url):
    [proc] = arena_servers(moose_serve, redis_url, 1)
    await create_arena(redis_url, "a_pause", 0.2)  # 12 s
    clients = [Client(proc.url, name=f"bot{i}", bot=True) for i in range(2)]
    played: list[str] = []
    for client in clients:
        await client.open()
    try:
        async with asyncio.timeout(60):
            tasks = [
                asyncio.create_task(
                    c.run_arena_bot("greedy", "a_pause", on_result=lambda r: played.append(r.game))
                )
                for c in clients
            ]
            while len(played) < 2:
                await asyncio.sleep(0.05)
            # As when its seat was away at a game's end: the server pauses it.
            redis = await open_redis(redis_url, 4)
            try:
                paused = ArenaMemberCall("a_pause", clients[0].player or "", "pause")
                assert (await ArenaStore(redis).member(paused))["state"] == "paused"
            finally:
                await redis.aclose()
            before = len(played)
            results = await asyncio.gather(*tasks)
    finally:
        for client in clients:
            await client.close()
    assert len(played) > before + 2  # it came back: games went on after the pause
    assert len(results[0]) == len(results[1]) >= 2
