"""Provably fair deals through real servers (deals/deals.py): raw PROTOCOL.md frames only.

Every game's record verifies (moose.fair.verify); the commitment reaches every seat
before any card; a seat's seed reaches nobody else before the end; seeds are dealt
once, whichever instance hears the last one or the seed time's end.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from moose import fair, rules
from moose_server.storage.keys import GameKeys

from helpers import RawClient, open_store, play_out

Message = dict[str, Any]
SLOW_SEEDS = 60.0  # a seed time no test waits for: the seeds alone deal


async def two_queued(
    ws_client: Any, url: str | list[str], fair_flags: tuple[bool, bool]
) -> tuple[list[RawClient], list[Message]]:
    """Two raw clients queued for a table of 2 (with `fair` as given); their matches."""
    urls = url if isinstance(url, list) else [url, url]
    clients = [await ws_client(urls[i], f"fair{i}") for i in range(2)]
    for client, wants in zip(clients, fair_flags, strict=True):
        extra = {"fair": True} if wants else {}
        queued = await client.request("queue", min_players=2, max_players=2, **extra)
        assert queued["type"] == "queued", queued
    matches = [await c.expect(type="match") for c in clients]
    assert len({m["game"] for m in matches}) == 1
    return clients, matches


async def finish(
    clients: list[RawClient], game: str, firsts: dict[int, Message] | None = None
) -> tuple[list[list[Message]], Message]:
    """Play the game out on every seat (`firsts`: events taken already, by client index);
    each seat's events and the record."""
    firsts = firsts or {}
    events = await asyncio.gather(
        *(play_out(c, game, i, first=firsts.get(i)) for i, c in enumerate(clients))
    )
    answer = await clients[0].request("record", game=game)
    assert answer["type"] == "record", answer
    return list(events), answer["record"]


def before_over(client: RawClient, game: str) -> list[Message]:
    """Everything the client received before its game's `over` event."""
    frames = client.received
    end = next(
        i
        for i, m in enumerate(frames)
        if m.get("type") == "event" and m["game"] == game and m["event"]["kind"] == "over"
    )
    return frames[:end]


def check_fair_end(events: list[list[Message]], record: Message, seeds: list[str]) -> None:
    """The record and every seat's `over` carry the deal, with these seeds, and it verifies."""
    deal = record["deal"]
    assert deal["seeds"] == seeds and fair.verify(record) == []
    assert deal["commitment"] == fair.commitment(bytes.fromhex(deal["server_seed"]))
    for seat_events in events:
        assert seat_events[-1]["event"]["deal"] == deal
        start = seat_events[0]["event"]
        assert start["deal"] == {"scheme": fair.SCHEME, "commitment": deal["commitment"]}


# -- the public queue --------------------------------------------------------------


async def test_a_queue_game_without_fair_seats_is_dealt_at_once_and_verifies(
    moose_server: Any, ws_client: Any
) -> None:
    url = await moose_server(seed_time=SLOW_SEEDS)  # would hold a fair deal a minute
    clients, matches = await two_queued(ws_client, url, (False, False))
    game = matches[0]["game"]
    for match in matches:
        assert match["deal"]["scheme"] == fair.SCHEME and len(match["deal"]["commitment"]) == 64
    events, record = await finish(clients, game)
    check_fair_end(events, record, ["", ""])
    answer = await clients[0].request("seed", game=game, seed="too late")
    assert answer["code"] == "already_dealt", answer


async def test_fair_seats_seeds_deal_the_game_and_go_into_the_record(
    moose_server: Any, ws_client: Any
) -> None:
    url = await moose_server(seed_time=SLOW_SEEDS)
    clients, matches = await two_queued(ws_client, url, (True, True))
    game = matches[0]["game"]
    seeds = {m["seat"]: f"seed of seat {m['seat']} ~!" for m in matches}
    first = await clients[0].request("seed", game=game, seed=seeds[matches[0]["seat"]])
    assert first == {"type": "seeded", "id": first["id"], "game": game}
    again = await clients[0].request("seed", game=game, seed="another")
    assert again["type"] == "error" and again["code"] == "already_seeded", again
    assert not [m for c in clients for m in c.received if m.get("type") == "event"]  # waits
    await clients[1].request("seed", game=game, seed=seeds[matches[1]["seat"]])
    events, record = await finish(clients, game)
    check_fair_end(events, record, [seeds[0], seeds[1]])
    for client, match in zip(clients, matches, strict=True):  # nobody saw another's seed
        other = seeds[1 - match["seat"]]
        assert other not in json.dumps(before_over(client, game))


async def test_a_fair_seat_that_sends_nothing_is_dealt_after_the_seed_time(
    moose_server: Any, ws_client: Any
) -> None:
    url = await moose_server(seed_time=0.3)
    clients, matches = await two_queued(ws_client, url, (True, False))
    game = matches[0]["game"]
    start = await clients[1].expect(type="event", game=game)  # nobody sent a seed
    assert start["event"]["kind"] == "start"
    late = await clients[0].request("seed", game=game, seed="late")
    assert late["code"] == "already_dealt", late
    events, record = await finish(clients, game, {1: start})
    check_fair_end(events, record, ["", ""])


async def test_seeds_refused_with_clear_errors_and_nothing_changed(
    moose_server: Any, ws_client: Any
) -> None:
    url = await moose_server(seed_time=SLOW_SEEDS)
    clients, matches = await two_queued(ws_client, url, (True, False))
    game, stranger = matches[0]["game"], await ws_client(url, "stranger")
    refusals = [
        (clients[0], {"seed": ""}, "bad_message"),
        (clients[0], {"seed": "x" * 65}, "bad_message"),
        (clients[0], {"seed": "tab\tseed"}, "bad_message"),
        (clients[0], {"seed": "é"}, "bad_message"),
        (clients[1], {"seed": "not asked"}, "not_fair"),
        (stranger, {"seed": "stranger"}, "not_in_game"),
        (clients[0], {"game": "g_nosuchgame", "seed": "x"}, "no_such_game"),
    ]
    for client, fields, code in refusals:
        answer = await client.request("seed", **{"game": game, **fields})
        assert (answer["type"], answer["code"]) == ("error", code), (fields, answer)
    # Nothing changed: the deal still waits for seat 0's seed, and takes it.
    assert not [m for c in clients for m in c.received if m.get("type") == "event"]
    seat0 = matches[0]["seat"]
    assert (await clients[0].request("seed", game=game, seed="mine"))["type"] == "seeded"
    events, record = await finish(clients, game)
    check_fair_end(events, record, ["mine" if s == seat0 else "" for s in range(2)])


# -- private tables, and several instances -----------------------------------------


async def test_a_private_table_with_a_bot_and_a_fair_guest_verifies(
    moose_server: Any, ws_client: Any
) -> None:
    url = await moose_server(seed_time=SLOW_SEEDS)
    host, guest = await ws_client(url, "host"), await ws_client(url, "guest")
    table = await host.request("create_table", players=3)
    assert (await guest.request("join_table", code=table["code"], fair=True))["type"] == "table"
    await host.request("add_bot", code=table["code"], bot="greedy")
    await host.request("start_table", code=table["code"])
    matches = [await c.expect(type="match") for c in (host, guest)]
    game = matches[0]["game"]
    assert (await host.request("seed", game=game, seed="host"))["code"] == "not_fair"
    assert (await guest.request("seed", game=game, seed="guest seed"))["type"] == "seeded"
    events, record = await finish([host, guest], game)
    seeds = ["", "", ""]
    seeds[matches[1]["seat"]] = "guest seed"
    check_fair_end(events, record, seeds)


async def test_an_abandoned_game_tells_its_deal_too(moose_server: Any, ws_client: Any) -> None:
    url = await moose_server(turn_time=0.3, answer_time=0.3, seed_time=SLOW_SEEDS)
    host = await ws_client(url, "host")
    table = await host.request("create_table", players=2, fair=True)
    await host.request("add_bot", code=table["code"], bot="greedy")
    await host.request("start_table", code=table["code"])
    game = (await host.expect(type="match"))["game"]
    assert (await host.request("seed", game=game, seed="then I left"))["type"] == "seeded"
    over: Message = {}
    while over.get("kind") != "over":  # the host never moves: away, then abandoned
        over = (await host.expect(type="event", game=game, timeout=30))["event"]
    record = (await host.request("record", game=game))["record"]
    assert over["abandoned"] is True and over["deal"] == record["deal"]
    assert "then I left" in record["deal"]["seeds"] and fair.verify(record) == []


@pytest.mark.slow  # three server instances
async def test_seeds_on_two_instances_deal_once(
    moose_server: Any, ws_client: Any, redis_url: str
) -> None:
    urls = [await moose_server(seed_time=SLOW_SEEDS), await moose_server(seed_time=SLOW_SEEDS)]
    clients, matches = await two_queued(ws_client, urls, (True, True))
    game = matches[0]["game"]
    answers = await asyncio.gather(
        *(c.request("seed", game=game, seed=f"s{i}") for i, c in enumerate(clients))
    )
    assert [a["type"] for a in answers] == ["seeded", "seeded"]
    _, record = await finish(clients, game)
    assert fair.verify(record) == []
    async with open_store(redis_url) as store:
        stored = await store.events(game)
        assert [e.event["kind"] for e in stored].count("start") == 1
        keys = GameKeys.of(game, 16)
        assert not await store.redis.exists(keys.deal)  # forgotten once dealt
        assert await store.redis.zscore(keys.deadlines, keys.deal_member) is None


@pytest.mark.slow  # three server instances
async def test_the_seed_time_deals_once_across_instances(
    moose_server: Any, ws_client: Any, redis_url: str
) -> None:
    urls = [await moose_server(seed_time=0.2) for _ in range(3)]
    clients, matches = await two_queued(ws_client, urls[:2], (True, True))
    game = matches[0]["game"]
    _, record = await finish(clients, game)
    assert record["deal"]["seeds"] == ["", ""] and fair.verify(record) == []
    async with open_store(redis_url) as store:
        assert [e.event["kind"] for e in await store.events(game)].count("start") == 1


async def test_a_fixed_test_deck_deals_without_a_deal(moose_server: Any, ws_client: Any) -> None:
    deck = list(reversed(rules.CARDS))
    url = await moose_server(test_deck=",".join(deck))
    clients, matches = await two_queued(ws_client, url, (True, True))
    assert all("deal" not in m for m in matches)
    game = matches[0]["game"]
    refused = await clients[0].request("seed", game=game, seed="no deal to seed")
    assert refused["code"] == "already_dealt"
    events, record = await finish(clients, game)
    assert "deal" not in record and record["deck"] == deck and record["dealer"] == 0
    assert all("deal" not in e[0]["event"] and "deal" not in e[-1]["event"] for e in events)


@pytest.mark.slow  # `moose serve`
async def test_the_commitment_reaches_every_seat_before_any_card(
    moose_serve: Any, ws_client: Any, tmp_path: Any
) -> None:
    """Frame order on raw sockets to a real `moose serve`: match (with the commitment),
    then the seeds, then the cards; the end tells the seed the commitment bound."""
    server = moose_serve("--data-dir", str(tmp_path / "data"), env={"MOOSE_SEED_TIME": "60"})
    clients = [await ws_client(server.url, f"order{i}", binary=i == 0) for i in range(3)]
    for i, client in enumerate(clients):
        fields = {"fair": True} if i < 2 else {}
        await client.request("queue", min_players=3, max_players=3, **fields)
    matches = [await c.expect(type="match") for c in clients]
    game = matches[0]["game"]
    commitment = matches[0]["deal"]["commitment"]
    assert all(m["deal"] == {"scheme": fair.SCHEME, "commitment": commitment} for m in matches)
    for i, client in enumerate(clients[:2]):
        assert (await client.request("seed", game=game, seed=f"order {i}"))["type"] == "seeded"
    events, record = await finish(clients, game)
    for client, match in zip(clients, matches, strict=True):
        frames = client.received
        first_card = next(i for i, m in enumerate(frames) if m.get("type") == "event")
        assert frames.index(match) < first_card and "hand" in frames[first_card]["view"]
    seeds = ["", "", ""]
    for i in range(2):
        seeds[matches[i]["seat"]] = f"order {i}"
    check_fair_end(events, record, seeds)
    assert record["deal"]["commitment"] == commitment


def test_a_test_deck_that_is_no_deck_stops_the_start() -> None:
    from moose_server.settings import Settings

    with pytest.raises(ValueError, match="test_deck"):
        Settings(test_deck="house,door")
    with pytest.raises(ValueError, match="seed_time"):
        Settings(seed_time=-1)
