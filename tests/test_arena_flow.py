"""An arena game as its players see it over the raw protocol: the game names its
arena, a person rests (`next`) before the next pairing, a pause meanwhile holds it,
and an arena game has no rematch."""

from __future__ import annotations

import asyncio
from typing import Any

from helpers import create_arena
from helpers.sockets import RawClient, play_out

REST = 0.5  # seconds a person rests after an arena game


async def arena_server(moose_server: Any, redis_url: str, arena: str) -> str:
    """One instance seating arena members quickly, and a running arena for people."""
    url = await moose_server(arena_interval=0.05, live_interval=0.05, arena_rest=REST)
    await create_arena(redis_url, arena, 5, who="people")
    return str(url)


async def seated(clients: list[RawClient], arena: str) -> list[dict[str, Any]]:
    """Every client joins the arena (2 seats a table) and gets its `match`."""
    for c in clients:
        joined = await c.request("join_arena", arena=arena, max_players=2)
        assert joined["state"] == "wait", joined
    return [await c.expect(type="match") for c in clients]


async def played(clients: list[RawClient], game: str) -> None:
    """Both seats play the game out."""
    await asyncio.gather(*(play_out(c, game, seed=k) for k, c in enumerate(clients)))


async def standing(watcher: RawClient, player: str, **want: Any) -> dict[str, Any]:
    """The first pushed `arena` whose line of `player` has the fields `want`."""
    while True:
        pushed = await watcher.expect(type="arena", id=None)
        mine = next((s for s in pushed["standings"] if s["player"] == player), None)
        if mine and all(mine.get(k) == v for k, v in want.items()):
            return {**mine, "server_time": pushed["server_time"], "arena_games": pushed["games"]}


async def test_an_arena_game_names_its_arena_in_match_start_and_state(
    moose_server, redis_url, ws_client
) -> None:
    url = await arena_server(moose_server, redis_url, "a_named")
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    match, _ = await seated([ann, bob], "a_named")
    assert match["arena"] == "a_named"
    start = await ann.expect(type="event", game=match["game"], seq=1)
    assert (start["event"]["kind"], start["event"]["arena"]) == ("start", "a_named")
    synced = await ann.request("sync", game=match["game"])
    assert synced["type"] == "synced"
    state = await ann.expect(type="event", game=match["game"], seq=synced["seq"])
    assert (state["event"]["kind"], state["event"]["arena"]) == ("state", "a_named")


async def test_a_queue_game_names_no_arena(moose_server, ws_client) -> None:
    url = await moose_server()
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    for c in (ann, bob):
        assert (await c.request("queue", min_players=2, max_players=2))["type"] == "queued"
    match = await ann.expect(type="match")
    start = await ann.expect(type="event", game=match["game"], seq=1)
    assert "arena" not in match and "arena" not in start["event"]


async def test_a_person_rests_before_the_next_arena_game_and_gets_no_rematch(
    moose_server, redis_url, ws_client
) -> None:
    url = await arena_server(moose_server, redis_url, "a_rest")
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    assert (await ann.request("watch_arena", arena="a_rest"))["type"] == "arena"
    first, _ = await seated([ann, bob], "a_rest")
    await played([ann, bob], first["game"])
    rested = await standing(ann, ann.player, game=None, games=1)
    assert rested["state"] == "wait" and rested["next"] is not None
    ended = next(g for g in rested["arena_games"] if g["game"] == first["game"])["end"]
    assert rested["next"] == ended + REST * 1000
    refused = await ann.request("rematch", game=first["game"])
    assert (refused["type"], refused["code"]) == ("error", "not_allowed")
    # The next pairing comes once the rest is over, not before; and no rematch was offered.
    second = await ann.expect(type="match", timeout=15)
    assert second["game"] != first["game"] and second["arena"] == "a_rest"
    shown = await ann.request("show_arena", arena="a_rest")
    start = next(g for g in shown["games"] if g["game"] == second["game"])["start"]
    assert start >= rested["next"]
    assert (await bob.expect(type="match"))["game"] == second["game"]
    assert not [m for m in ann.received + bob.received if m.get("type") == "rematch_offer"]


async def test_a_pause_while_resting_holds_the_next_pairing_until_resumed(
    moose_server, redis_url, ws_client
) -> None:
    url = await arena_server(moose_server, redis_url, "a_hold")
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    assert (await bob.request("watch_arena", arena="a_hold"))["type"] == "arena"
    first, _ = await seated([ann, bob], "a_hold")
    await played([ann, bob], first["game"])
    paused = await ann.request("pause_arena", arena="a_hold")
    assert (paused["state"], paused["playing"]) == ("paused", False)
    # Bob's rest runs out while ann is paused: he is not seated, alone.
    bob_line = await standing(bob, bob.player, game=None, games=1)
    shown = await bob.request("show_arena", arena="a_hold")
    assert [s["state"] for s in shown["standings"] if s["player"] == ann.player] == ["paused"]
    after_rest = bob_line["next"]
    carol = await ws_client(url, "carol")
    assert (await carol.request("join_arena", arena="a_hold", max_players=2))["state"] == "wait"
    with_carol = await bob.expect(type="match", timeout=15)  # bob plays carol, not ann
    assert (await carol.expect(type="match"))["game"] == with_carol["game"]
    shown = await bob.request("show_arena", arena="a_hold")
    assert next(g for g in shown["games"] if g["game"] == with_carol["game"])["start"] >= after_rest
    assert not [m for m in ann.received if m.get("type") == "match" and m["game"] != first["game"]]
    # Resumed: no rest left to wait for; ann is seated as soon as someone is free.
    assert (await ann.request("join_arena", arena="a_hold", max_players=2))["state"] == "wait"
    lines = (await ann.request("show_arena", arena="a_hold"))["standings"]
    assert next(s for s in lines if s["player"] == ann.player)["next"] is None


async def test_an_arena_member_in_the_standings_has_no_rest_before_a_game(
    moose_server, redis_url, ws_client
) -> None:
    url = await arena_server(moose_server, redis_url, "a_fresh")
    ann = await ws_client(url, "ann")
    assert (await ann.request("join_arena", arena="a_fresh"))["state"] == "wait"
    shown = await ann.request("show_arena", arena="a_fresh")
    assert [(s["name"], s["next"]) for s in shown["standings"]] == [("ann", None)]
