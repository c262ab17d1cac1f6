"""The hub's fan-out over a real Store and redis-server, to sockets that collect messages.

Stream reads are counted with INFO commandstats.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from moose import rules
from moose_server.games import Games
from moose_server.hub import Hub, Sub
from moose_server.settings import Settings
from moose_server.store import Entry, Store, connect


class Peer:
    """A socket that keeps the messages it is sent."""

    binary = False

    def __init__(self, player: str, seat: int) -> None:
        self.player = player
        self.subs: dict[str, Sub] = {}
        self.seat = seat
        self.got: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.got.append(message)

    def send_frame(self, payload: bytes) -> None:
        raise AssertionError("a text socket gets messages")

    def note_away(self, game: str) -> None:
        pass

    async def on_player_message(self, message: dict[str, Any]) -> None:
        pass


@pytest.fixture
async def game(redis_url: str) -> AsyncIterator[tuple[Store, str, list[Entry]]]:
    """A 2-player game dealt and moved once through the real Games and Redis.

    Yields the store, the game id and the entries of its two commits (what the
    commit hands the hub); the Redis command counters start from zero after them.
    """
    client = connect(redis_url, 4)
    store = Store(client, 16)
    games = Games(store, Settings(redis_url=redis_url))
    entries: list[Entry] = []
    games.on_commit = lambda _game, new: entries.extend(new)
    dealt = await games.create([("p_a", "a", None), ("p_b", "b", None)], seed=7)
    seat = rules.to_act(dealt.state)
    assert seat is not None
    await games.move(dealt.id, dealt.players[seat], rules.legal_moves(dealt.state)[0])
    assert [e.seq for e in entries] == [1, 2]
    await client.config_resetstat()
    yield store, dealt.id, entries
    await client.aclose()


async def xranges(store: Store) -> int:
    """XRANGE calls since the counters were reset."""
    stats = await store.redis.info("commandstats")
    return int(stats.get("cmdstat_xrange", {}).get("calls", 0))


async def test_a_wake_up_before_its_commit_reply_reads_nothing_once_the_reply_delivered(game):
    store, gid, entries = game
    hub = Hub(store, None)  # type: ignore[arg-type]  # no subscription: wake-ups by hand
    fanned: list[tuple[str, int]] = []
    hub.on_fanout = lambda g, seq: fanned.append((g, seq))
    peers = [Peer("p_a", 0), Peer("p_b", 1)]
    for peer in peers:
        hub.join(peer, gid, peer.seat, 0)
    hub._on_game(gid, 2)  # our own wake-up, before the commit's reply was processed...
    hub.committed(gid, entries)  # ...which then sends the events at once
    await asyncio.gather(*hub._tasks)
    assert await xranges(store) == 0  # the wake-up's task found every socket served
    assert fanned == [(gid, 2)]
    for peer in peers:
        assert [m["seq"] for m in peer.got] == [1, 2]


async def test_a_wake_up_reads_the_stream_once_for_the_sockets_behind(game):
    store, gid, _ = game
    hub = Hub(store, None)  # type: ignore[arg-type]
    fanned: list[tuple[str, int]] = []
    hub.on_fanout = lambda g, seq: fanned.append((g, seq))
    peers = [Peer("p_a", 0), Peer("p_b", 1)]
    for peer in peers:
        hub.join(peer, gid, peer.seat, 0)
    hub._on_game(gid, 2)  # another instance's commit: only the stream has the events
    await asyncio.gather(*hub._tasks)
    assert await xranges(store) == 1
    assert fanned == [(gid, 2)]
    for peer in peers:
        assert [m["seq"] for m in peer.got] == [1, 2]
