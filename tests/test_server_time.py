"""Deadlines with short timings: timeouts, away and back, trap answers, forced passes.

Nothing here asserts how long anything took; timeouts only keep a broken test
from hanging.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest
import redis.asyncio as aioredis

from moose import rules
from moose_server.play.games import Games
from moose_server.play.seats import Seat
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.store import Store

from helpers import table_game

Message = dict[str, Any]
FAST = {"turn_time": 0.4, "answer_time": 0.2, "poll_interval": 0.03}
# Short enough to see a seat time out twice, long enough for a player who does
# answer to be in time on a busy machine.
BRISK = {"turn_time": 1.5, "answer_time": 1.5, "poll_interval": 0.03}


@pytest.fixture
async def games(redis_url: str) -> Any:
    """Games over the test Redis, to start games from a chosen state (short answers)."""
    client = aioredis.Redis.from_url(redis_url)
    gw = await open_redis(redis_url, 8)
    games = Games(Store(gw, 16), Settings(redis_url=redis_url, turn_time=5.0, answer_time=0.2))
    yield games
    await games.close()
    await client.aclose()
    await gw.aclose()


def find(pred: Callable[[rules.State, Message, rules.State], bool]) -> tuple[rules.State, Message]:
    """A position and move of a random 2-seat game with pred(before, move, after)."""
    for seed in range(2000):
        rng = random.Random(seed)
        state = rules.new_game(2, seed=seed)
        while not state.over:
            move = rng.choice(rules.legal_moves(state))
            after = rules.apply(state, move)
            if pred(state, move, after):
                return state, move
            state = after
    raise AssertionError("no such position")


async def seat_pair(ws_client: Any, url: str) -> list[Any]:
    """Two connected players."""
    return [await ws_client(url, "ana"), await ws_client(url, "ben", binary=False)]


async def keep_playing(client: Any, game: str, seat: int) -> list[Message]:
    """Play the first legal move whenever offered; tolerate losing races to timeouts."""
    events = []
    while True:
        event = await client.expect(type="event", game=game, timeout=60)
        events.append(event)
        if event["event"]["kind"] == "over":
            return events
        if event["legal"]:
            answer = await client.request(
                "move", game=game, seq=event["seq"], move=event["legal"][0]
            )
            assert answer["type"] == "moved" or answer["code"] in ("stale_seq", "not_your_turn")


def moves_of(events: list[Message], seat: int) -> list[Message]:
    """The move events of one seat."""
    return [
        e["event"] for e in events if e["event"]["kind"] == "move" and e["event"]["seat"] == seat
    ]


@pytest.mark.slow
async def test_idle_seat_times_out_goes_away_and_comes_back(moose_server, ws_client):
    url = await moose_server(**BRISK)
    idle, busy = await seat_pair(ws_client, url)
    game, (seat, other) = await table_game([idle, busy])
    worker = asyncio.create_task(keep_playing(busy, game, other))
    seen: list[Message] = []
    while not (seen and seen[-1]["event"] == {"kind": "away", "seat": seat}):
        seen.append(await idle.expect(type="event", game=game, timeout=30))
        assert seen[-1]["event"]["kind"] != "over", "the game ended before the seat was away"
    timeouts = [m["auto"] for m in moves_of(seen, seat)]
    assert timeouts == ["timeout", "timeout"]
    while not [m for m in moves_of(seen, seat)[2:] if m["auto"] == "bot"]:
        seen.append(await idle.expect(type="event", game=game, timeout=30))
        if seen[-1]["event"]["kind"] == "over":
            pytest.skip("the game ended before the bot played the away seat")
    assert not any(e["legal"] for e in seen[-1:] if e["view"]["to_act"] == seat)
    assert (await idle.request("ping"))["type"] == "pong"  # any message brings the seat back
    rest = await keep_playing(idle, game, seat)
    assert {"kind": "back", "seat": seat} in [e["event"] for e in rest]
    back = next(i for i, e in enumerate(rest) if e["event"]["kind"] == "back")
    after = moves_of(rest[back:], seat)
    assert all(m["auto"] in (None, "forced") for m in after), after  # played by the player
    assert (await worker)[-1]["event"]["kind"] == "over"


async def test_unanswered_trap_is_played_at_the_answer_deadline(moose_server, ws_client, games):
    url = await moose_server(**FAST)
    a, b = await seat_pair(ws_client, url)
    before, move = find(lambda s, m, after: after.pending is not None)
    state = rules.apply(before, move)
    victim = state.pending[0]
    seats = [Seat(a.player, "ana", None), Seat(b.player, "ben", None)]
    game = await games.create(seats, state=state)
    client = (a, b)[victim]
    first = await client.expect(type="event", game=game.id)
    assert first["legal"] == [{"action": "trap"}, {"action": "allow"}] and first["deadline"]
    answered = await client.expect(type="event", game=game.id, seq=2)
    assert answered["event"] == {
        "kind": "move",
        "seat": victim,
        "move": {"action": "trap"},
        "auto": "timeout",
    }
    assert answered["view"]["discard"][-2:] == [state.pending[2], "trap"]


async def test_only_pass_left_is_passed_at_once(moose_server, ws_client, games):
    url = await moose_server(turn_time=30.0)

    def forced_next(s: rules.State, m: Message, after: rules.State) -> bool:
        return (
            not after.over
            and s.pending is None
            and after.pending is None
            and rules.to_act(after) != rules.to_act(s)
            and rules.legal_moves(after) == [{"action": "pass"}]
        )

    state, move = find(forced_next)
    a, b = await seat_pair(ws_client, url)
    game = await games.create(
        [Seat(a.player, "ana", None), Seat(b.player, "ben", None)], state=state
    )
    mover = rules.to_act(state)
    client, watcher = (a, b) if mover == 0 else (b, a)
    offered = await client.expect(type="event", game=game.id)
    assert move in offered["legal"]
    assert (await client.request("move", game=game.id, move=move, seq=1))["seq"] == 2
    moved = await watcher.expect(type="event", game=game.id, seq=2)
    assert moved["legal"] is None  # a forced pass is not offered: the server plays it
    passed = await watcher.expect(type="event", game=game.id, seq=3)
    assert passed["event"] == {
        "kind": "move",
        "seat": 1 - mover,
        "move": {"action": "pass"},
        "auto": "forced",
    }
