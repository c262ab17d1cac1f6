"""A game's stream read back: states rebuilt between the snapshots, old streams read alike."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moose import rules
from moose_server.play.games import Games
from moose_server.play.seats import Seat
from moose_server.play.streams import SNAPSHOT_EVERY, keeps_snapshot, read_event, read_events
from moose_server.storage.codec import pack

from helpers import open_games


@pytest.fixture
async def games(redis_url: str) -> Any:
    """Games over the test Redis; finished games keep their streams for an hour."""
    async with open_games(redis_url, game_grace=3600) as games:
        yield games


async def bot_game(games: Games, players: int = 4) -> Any:
    """A whole game of bots, played by the server; the game once it is over."""
    seats = [Seat(None, f"b{i}", "greedy") for i in range(players)]
    game = await games.create(seats, seed=11)
    async with asyncio.timeout(60):
        while not (game := await games.load(game.id)).state.over:
            await asyncio.sleep(0.01)
    return game


def states_after_each_event(entries: list[Any]) -> list[dict[str, Any]]:
    """The state after every event, by replaying the game's moves from its deal."""
    state: rules.State | None = None
    out = []
    for e in entries:
        if e.event["kind"] == "start":
            state = rules.State.from_dict({k: v for k, v in e.state.items() if k != "auto"})
        elif e.event["kind"] == "move":
            assert state is not None
            state = rules.apply(state, e.event["move"])
        assert state is not None
        out.append(state.to_dict())
    return out


async def test_every_event_comes_back_with_the_state_after_it(games):
    game = await bot_game(games)
    stored = await games.store.events(game.id)
    kept = [r.seq for r in stored if r.state is not None]
    assert kept == [seq for seq in range(1, game.version + 1) if keeps_snapshot(seq)]
    assert len(kept) <= game.version // SNAPSHOT_EVERY + 1  # 7 or so, not ~54
    everything = await read_events(games.store, game.id)
    assert [e.seq for e in everything] == list(range(1, game.version + 1))
    truth = states_after_each_event(everything)
    assert [{k: v for k, v in e.state.items() if k != "auto"} for e in everything] == truth
    assert [e.state["auto"] for e in everything] == [r.auto for r in stored]
    assert all(e.parsed.to_dict() == t for e, t in zip(everything, truth, strict=True))
    for since in range(game.version + 1):  # from anywhere: the same events and states
        assert await read_events(games.store, game.id, since) == everything[since:]


async def test_one_event_comes_back_with_the_state_after_it_snapshot_or_not(games):
    """What a move's base is checked against (games.py): one event, read alone."""
    game = await bot_game(games, players=3)
    everything = await read_events(games.store, game.id)
    for entry in everything:  # on a snapshot, just after one, just before the next
        assert await read_event(games.store, game.id, entry.seq) == entry
    assert await read_event(games.store, game.id, game.version + 1) is None


async def test_a_stream_with_a_snapshot_on_every_entry_reads_the_same(games):
    """Streams written before snapshots were spaced out hold one in every entry."""
    game = await bot_game(games, players=3)
    new = await read_events(games.store, game.id)
    old = f"{game.id}x"
    for e in new:
        fields = {"e": pack(e.event), "s": pack(e.state), "d": e.deadline, "t": e.time}
        await games.store.redis.client.xadd(
            games.store.keys_of(old).events, fields, id=f"{e.seq}-0"
        )
    again = await read_events(games.store, old, 5)
    assert [(e.seq, e.event, e.state) for e in again] == [
        (e.seq, e.event, e.state) for e in new[5:]
    ]


async def test_a_stream_spaced_otherwise_is_read_from_its_deal(games):
    """A snapshot missing where this version keeps one: the states come from the deal."""
    game = await bot_game(games, players=2)
    new = await read_events(games.store, game.id)
    odd = f"{game.id}y"
    for e in new:
        fields = {
            "e": pack(e.event),
            "a": b"1" if e.state["auto"] else b"0",
            "d": e.deadline,
            "t": e.time,
        }
        if e.seq == 1:
            fields["s"] = pack(e.state)
        await games.store.redis.client.xadd(
            games.store.keys_of(odd).events, fields, id=f"{e.seq}-0"
        )
    assert await read_events(games.store, odd, SNAPSHOT_EVERY + 2) == new[SNAPSHOT_EVERY + 2 :]
