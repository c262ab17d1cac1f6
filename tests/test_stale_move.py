"""A seat that is behind its game is brought up to date when its move is refused:
raw frames from PROTOCOL.md alone ("`move` → `moved`"), a real server and Redis.

The seat falls behind as it would while Redis fails over: another instance
commits a move whose wake-up never reaches this one (the game's list of
followers names an instance that is gone), so no socket here is told.
"""

from __future__ import annotations

from typing import Any

from moose import rules
from moose_server.storage.keys import wake_channel

from helpers import open_games, table_game

Message = dict[str, Any]


def at(client: Any, seq: int, refusal_id: int) -> Message:
    """The event at `seq` the client received before the answer `refusal_id`."""
    answer = next(i for i, m in enumerate(client.received) if m.get("id") == refusal_id)
    found = [m for m in client.received[:answer] if m["type"] == "event" and m["seq"] == seq]
    assert found, f"event {seq} did not come before the answer {refusal_id}"
    return found[-1]


async def test_a_move_refused_as_behind_sends_the_missed_events_first(
    moose_server, ws_client, redis_url
):
    url = await moose_server()
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    game, seats = await table_game([ann, bob])
    by_seat = {seat: client for client, seat in zip((ann, bob), seats, strict=True)}
    for client in (ann, bob):
        await client.expect(type="event", game=game, seq=1)
    seen = 1
    async with open_games(redis_url) as games:
        # Wake-ups of this game go to an instance that is gone from now on.
        await games.store.redis.call(
            "HSET", games.store.keys_of(game).game, "w", wake_channel("i_gone")
        )
        before = await games.load(game)
        mover = before.players[rules.to_act(before.state)]
        await games.move(game, mover, rules.legal_moves(before.state)[0])
        now = await games.load(game)
    assert now.version > seen and not now.state.over
    assert all(len([m for m in c.received if m["type"] == "event"]) == 1 for c in (ann, bob))
    to_act, idle = by_seat[rules.to_act(now.state)], by_seat[1 - rules.to_act(now.state)]

    # Out of turn (no seq): `not_your_turn`, after the events it missed.
    refused = await idle.request("move", game=game, move=rules.legal_moves(before.state)[0])
    assert refused["type"] == "error" and refused["code"] == "not_your_turn", refused
    assert at(idle, now.version, refused["id"])["legal"] is None

    # A move on the event it saw last: `stale_seq`, after the events it missed, the last
    # of which gives its legal moves: it moves again on that one.
    stale = await to_act.request("move", game=game, seq=seen, move={"action": "pass"})
    assert stale["type"] == "error" and stale["code"] == "stale_seq", stale
    last = at(to_act, now.version, stale["id"])
    assert last["legal"], last
    moved = await to_act.request("move", game=game, seq=now.version, move=last["legal"][0])
    assert moved["type"] == "moved" and moved["seq"] == now.version + 1, moved

    # Each got every event once, in order, with no gap.
    for client in (ann, bob):
        await client.expect(type="event", game=game, seq=now.version + 1)
        seqs = [m["seq"] for m in client.received if m["type"] == "event"]
        assert seqs == list(range(1, now.version + 2)), seqs
