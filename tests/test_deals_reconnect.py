"""A game waiting for its fair seats' seeds (deals/deals.py) is a game like any other.

A seat that reconnects inside the seed time finds it (`welcome`, `sync` answers
its `match` again), the limits on unfinished games count it, and a player the
server queues again after Redis lost the tickets still asks for a fair deal.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import moose
from moose import fair
from moose.client import Client, is_final
from moose_server.deals.deals import Deals
from moose_server.deals.seeds import SeedStore
from moose_server.matchmaking.matchmaker import Matchmaker, MatchOptions
from moose_server.matchmaking.waiting import Waiting
from moose_server.play.seats import Seat

from helpers import RawClient, Serve, open_games, open_store, play_out

Message = dict[str, Any]
SEED_TIME = 5.0  # long enough that every reconnect below comes before the deal


async def fair_pair(ws_client: Any, urls: list[str]) -> tuple[list[RawClient], list[Message]]:
    """Two raw clients queued for a table of 2, both asking for a fair deal; their matches."""
    clients = [await ws_client(u, f"seat{i}") for i, u in enumerate(urls)]
    for client in clients:
        queued = await client.request("queue", min_players=2, max_players=2, fair=True)
        assert queued["type"] == "queued", queued
    matches = [await c.expect(type="match") for c in clients]
    return clients, matches


@pytest.mark.slow
async def test_a_fair_seat_that_reconnects_before_the_deal_gets_its_game(
    moose_serve: Any, redis_url: str, ws_client: Any
) -> None:
    env = {"MOOSE_SEED_TIME": str(SEED_TIME), "MOOSE_MATCH_INTERVAL": "0.05"}
    url = moose_serve("--redis", redis_url, env=env).url
    clients, matches = await fair_pair(ws_client, [url, url])
    game, leaving = matches[0]["game"], clients[0]
    await leaving.close()  # before it sent a seed: the deal still waits
    back = await ws_client(url, None)
    welcome = await back.hello(token=leaving.token)
    assert welcome["player"] == leaving.player and game in welcome["games"], welcome
    synced = await back.request("sync", game=game)
    assert synced == {"type": "synced", "id": synced["id"], "game": game, "seq": 0}, synced
    again = await back.expect(type="match", game=game)
    assert {k: again[k] for k in ("seat", "deal", "names")} == {
        k: matches[0][k] for k in ("seat", "deal", "names")
    }
    seeds = ["", ""]
    for client, match in ((back, matches[0]), (clients[1], matches[1])):
        seeds[match["seat"]] = f"seat {match['seat']} was here"
        seeded = await client.request("seed", game=game, seed=seeds[match["seat"]])
        assert seeded["type"] == "seeded", seeded
    playing = [back, clients[1]]
    events = await asyncio.gather(*(play_out(c, game, i) for i, c in enumerate(playing)))
    record = (await back.request("record", game=game))["record"]
    assert record["deal"]["seeds"] == seeds and fair.verify(record) == []
    assert events[0][0]["event"]["kind"] == "start" and events[0][0]["seq"] == 1


@pytest.mark.slow
async def test_the_client_library_keeps_a_game_it_reconnects_to_before_the_deal(
    serve: Serve, ws_client: Any
) -> None:
    first, second = await serve(seed_time=SEED_TIME), await serve(seed_time=SEED_TIME)
    async with moose.connect([first.url, second.url], name="alice") as alice:
        await alice.queue(2, 2, fair=True)
        bob = await ws_client(second.url, "bob")
        await bob.request("queue", min_players=2, max_players=2, fair=True)
        inbox = aiter(alice.events())
        match = await anext(inbox)
        assert match["type"] == "match" and match.get("deal"), match
        game = match["game"]
        await first.stop()  # 1012: alice goes on to the second instance, in the seed time
        await bob.expect(type="match", game=game)  # bob sends no seed: dealt at the end
        start = await anext(inbox)
        assert start["type"] == "event" and start["event"]["kind"] == "start", start
        assert start["game"] == game and alice.reconnects == 1
        await asyncio.gather(play_out(bob, game, 1), play_on(alice, inbox, start))
        record = (await bob.request("record", game=game))["record"]
        assert fair.verify(record) == []


async def play_on(client: Client, inbox: Any, event: Message) -> None:
    """Play the first legal move of each of our turns until the game is over."""
    while not is_final(event):
        if event["type"] == "event" and event.get("legal"):
            await client.move(event["game"], event["legal"][0], seq=event["seq"])
        event = await anext(inbox)


@pytest.mark.slow
@pytest.mark.parametrize("limit", ["games_per_player", "games_per_address"])
async def test_a_game_waiting_for_seeds_counts_against_the_game_limits(
    moose_server: Any, ws_client: Any, limit: str
) -> None:
    url = await moose_server(seed_time=60.0, **{limit: 1})
    clients, matches = await fair_pair(ws_client, [url, url])
    game = matches[0]["game"]
    refused = await clients[0].request("queue", min_players=2, max_players=2)
    assert refused["type"] == "error" and refused["code"] == "too_many_games", refused
    left = await clients[0].request("leave_queue")
    assert left["code"] == "not_queued", left  # nothing changed: not queued
    for client, match in zip(clients, matches, strict=True):
        await client.request("seed", game=game, seed=f"seed {match['seat']}")
    start = await clients[0].expect(type="event", game=game)
    assert start["event"]["kind"] == "start"  # the waiting game itself goes on


async def test_a_player_queued_again_after_redis_lost_the_ticket_still_asks_for_fair(
    redis_url: str,
) -> None:
    async with open_store(redis_url) as store:
        matchmaker = Matchmaker(store.redis, MatchOptions(match_wait=0, instance="i_a"))
        waiting = Waiting(store, matchmaker, SeedStore(store.redis, store.buckets))
        waiting.add("p_fair", "ann", 2, 2, 1500, fair=True)  # its ticket is gone from Redis
        await waiting.requeue({"p_fair": [object()]})  # type: ignore[list-item]
        await matchmaker.enqueue("p_other", "bob", 2, 2)
        [table] = await matchmaker.form_tables()
        fair_of = {seat.player: seat.fair for seat in table.seats}
        assert fair_of == {"p_fair": True, "p_other": False}, fair_of


class Socket:
    """A local socket of a player that follows no game: what the hub tells it."""

    def __init__(self) -> None:
        self.subs: dict[str, Any] = {}
        self.said: list[Message] = []

    async def on_player_message(self, message: Message) -> None:
        self.said.append(message)


async def test_a_match_pubsub_lost_is_sent_again_while_the_deal_waits_for_seeds(
    redis_url: str,
) -> None:
    async with open_games(redis_url, seed_time=60.0) as games:
        store = games.store
        seeds = SeedStore(store.redis, store.buckets)
        deals = Deals(store, seeds, games, games.settings)
        table = [Seat("p_ann", "ann", None, fair=True), Seat("p_bob", "bob", None)]
        assert await deals.start(table, game_id="g_waits") is None  # its match was lost
        waiting = Waiting(store, Matchmaker(store.redis, MatchOptions(match_wait=0)), seeds)
        ann = Socket()
        await waiting.rematch({"p_ann": [ann]})  # type: ignore[dict-item]
        [match] = ann.said
        assert match["type"] == "match" and match["game"] == "g_waits" and match["seat"] == 0
        assert match["deal"]["scheme"] == fair.SCHEME
