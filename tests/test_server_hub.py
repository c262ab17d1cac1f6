"""The hub's fan-out without Redis: a store that counts its stream reads, sockets that collect."""

from __future__ import annotations

import asyncio
from typing import Any

from moose import rules
from moose_server.hub import Hub, Sub
from moose_server.store import Entry


class CountingStore:
    """Serves a game's stream from memory and counts the reads."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        self.reads: list[int] = []

    async def events(self, game: str, since: int = 0) -> list[Entry]:
        self.reads.append(since)
        return [e for e in self.entries if e.seq > since]


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


def entries_of_a_game() -> list[Entry]:
    state = rules.new_game(2, seed=7)
    first = {"kind": "start", "players": 2, "dealer": state.dealer, "names": ["a", "b"]}
    snapshot = {**state.to_dict(), "auto": False}
    out = [Entry(1, first, snapshot, 0, 10, state)]
    move = rules.legal_moves(state)[0]
    state = rules.apply(state, move)
    snapshot = {**state.to_dict(), "auto": False}
    out.append(Entry(2, {"kind": "move", "seat": 0, "move": move, "auto": None}, snapshot, 0, 11))
    return out


async def test_a_wake_up_before_its_commit_reply_reads_nothing_once_the_reply_delivered() -> None:
    entries = entries_of_a_game()
    store = CountingStore(entries)
    hub = Hub(store, None)  # type: ignore[arg-type]
    fanned: list[tuple[str, int]] = []
    hub.on_fanout = lambda game, seq: fanned.append((game, seq))
    peers = [Peer("p_a", 0), Peer("p_b", 1)]
    for peer in peers:
        hub.join(peer, "g", peer.seat, 0)
    hub._on_game("g", 2)  # our own wake-up, before the commit's reply was processed...
    hub.committed("g", entries)  # ...which then sends the events at once
    await asyncio.gather(*hub._tasks)
    assert store.reads == []  # the wake-up's task found every socket served
    assert fanned == [("g", 2)]
    for peer in peers:
        assert [m["seq"] for m in peer.got] == [1, 2]


async def test_a_wake_up_reads_the_stream_once_for_the_sockets_behind() -> None:
    entries = entries_of_a_game()
    store = CountingStore(entries)
    hub = Hub(store, None)  # type: ignore[arg-type]
    fanned: list[tuple[str, int]] = []
    hub.on_fanout = lambda game, seq: fanned.append((game, seq))
    peers = [Peer("p_a", 0), Peer("p_b", 1)]
    for peer in peers:
        hub.join(peer, "g", peer.seat, 0)
    hub._on_game("g", 2)  # another instance's commit: only the stream has the events
    await asyncio.gather(*hub._tasks)
    assert store.reads == [0]
    assert fanned == [("g", 2)]
    for peer in peers:
        assert [m["seq"] for m in peer.got] == [1, 2]
