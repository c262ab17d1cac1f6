"""A game's event stream read back: every event with the state after it.

The stream keeps a full state snapshot with the deal and with every event whose
seq is a multiple of `SNAPSHOT_EVERY`, not with every event: a 4-player game of
~54 events holds 7 snapshots (about 1.1 KB each) instead of 54. The states in
between are rebuilt from the snapshot before them by applying the moves, which
the rules do deterministically. A snapshot is the state after its own event:
a commit's events share one state, but for the forced passes a commit plays
after its move (steps.py, `Steps.forced_passes`), each a move of its own.
BENCHMARKS.md has the trade-off: memory per game against rebuilding per read.

A follower of a game hears each step another instance commits as the commit
publishes it (lua/commit.lua): `heard_step` makes its entries, every state
given, nothing replayed, each state decoded straight into the rules state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypedDict

import msgspec

from moose import rules
from moose_server.storage.codec import unpack
from moose_server.storage.store import Entry, Store, Stored

__all__ = ["SNAPSHOT_EVERY", "Step", "heard_step", "keeps_snapshot", "read_event", "read_events"]

SNAPSHOT_EVERY = 8


def keeps_snapshot(seq: int) -> bool:
    """Whether the stream entry of `seq` holds a full state snapshot."""
    return seq == 1 or seq % SNAPSHOT_EVERY == 0


async def read_events(store: Store, game: str, since: int = 0) -> list[Entry]:
    """The events of a game after seq `since`, each with the state after it.

    Reads from the last snapshot at or before the first event wanted and applies
    the moves from there: at most SNAPSHOT_EVERY - 1 of them more than asked.
    """
    first = since + 1
    rows = await store.events(game, max(0, first - first % SNAPSHOT_EVERY - 1))
    if rows and rows[0].state is None:  # written with another spacing: from the deal
        rows = await store.events(game)
    return _rebuilt(rows, since)


async def read_event(store: Store, game: str, seq: int) -> Entry | None:
    """The event of a game at `seq` with the state after it, if the stream holds it."""
    rows = await store.events(game, max(0, seq - seq % SNAPSHOT_EVERY - 1), seq)
    if rows and rows[0].state is None:  # written with another spacing: from the deal
        rows = await store.events(game, 0, seq)
    entries = _rebuilt(rows, seq - 1)
    return entries[0] if entries and entries[0].seq == seq else None


def _rebuilt(rows: list[Stored], since: int) -> list[Entry]:
    """Entries after `since`, their states rebuilt from the snapshots among `rows`."""
    out: list[Entry] = []
    parsed: rules.State | None = None
    for row in rows:
        state = row.state
        if state is not None:
            parsed = rules.State.from_dict(state)
        elif parsed is None:
            continue  # no snapshot yet to start from
        elif row.event["kind"] == "move":
            parsed = rules.apply(parsed, row.event["move"])
        if row.seq > since:
            if state is None:
                state = {**parsed.to_dict(), "auto": row.auto}
            out.append(Entry(row.seq, row.event, state, row.deadline, row.time, parsed))
    return out


@dataclass(frozen=True)
class Step:
    """A step another instance committed, as its commit published it (lua/commit.lua)."""

    game: str
    entries: list[Entry]  # as reading the stream would give them
    deadline: int  # the game's deadline after it (ms)
    data: bytes  # the game data it wrote (packed, as the game hash holds it)


def heard_step(message: bytes) -> Step:
    """A published step: "<game> <first seq> <Redis ms> <deadline ms> <step length> "
    then msgpack [event, state, ...] and the game data written.

    Each state is decoded as the rules state holds it (`_SNAPSHOT`) and made
    one (`Entry.parsed`) without a copy; one of another shape is decoded as it
    comes, and left for `rules.State.from_dict`."""
    game, first, now, deadline, size, rest = message.split(b" ", 5)
    cut = int(size)
    flat = _RAWS.decode(rest[:cut])
    at, time, due = int(first), int(now), int(deadline)
    entries = []
    for i in range(len(flat) // 2):
        event = unpack(flat[2 * i])
        try:
            state: dict[str, Any] = _SNAPSHOT.decode(flat[2 * i + 1])
        except msgspec.ValidationError:
            entries.append(Entry(at + i, event, unpack(flat[2 * i + 1]), due, time))
        else:
            parsed = rules.State.from_dict(state, copy=False)  # its lists: nobody else's
            entries.append(Entry(at + i, event, state, due, time, parsed))
    return Step(game.decode(), entries, due, rest[cut:])


# A published step's state (rules.State.to_dict(), and "auto") as the rules state holds
# it: its cards the interned codes (Literal), rooms and pending as tuples, the deck one.
# Decoded so, a heard step's state costs ~4 us less than unpacked and then copied by
# `from_dict` (8.5 -> 4.5 us, a 4-player game 30 moves in): a follower's every step.
_CARD: Any = Literal[tuple(sorted(rules.CARD_CODES))]
_ROOM: Any = Literal[rules.ROOM_TYPES]
_SNAPSHOT_FIELDS = {
    "n": int,
    "dealer": int,
    "deck": tuple[_CARD, ...],
    "draw": list[_CARD],
    "hands": list[list[_CARD]],
    "has_house": list[bool],
    "rooms": list[list[tuple[_ROOM, int]]],
    "discard": list[_CARD],
    "turn": int,
    "drew": bool,
    "pending": tuple[int, int, _CARD] | None,
    "over": bool,
    "auto": bool,
}
_SNAPSHOT = msgspec.msgpack.Decoder(TypedDict("_Snapshot", _SNAPSHOT_FIELDS))  # type: ignore[operator]
_RAWS = msgspec.msgpack.Decoder(list[msgspec.Raw])
