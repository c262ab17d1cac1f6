"""The hub's memory of recent events: one bounded log per game, each event ready for every seat.

`Recent` holds a `GameLog` per game (at most its `size`, LOGGED_GAMES unless
told, the least recently used dropped); a log holds the game's last events in a row (at most
RECENT_EVENTS), each a `frames.Prepared`, and the latest seq heard of. The hub
(hub.py) decides what goes in and when it is trimmed.
"""

from __future__ import annotations

from moose_server.play.frames import Prepared
from moose_server.storage.store import Entry

__all__ = ["LOGGED_GAMES", "RECENT_EVENTS", "GameLog", "Recent"]

LOGGED_GAMES = 1024  # games whose last events the hub holds, at most
RECENT_EVENTS = 16  # events held per game, at most


class GameLog:
    """The last events of one game the hub holds, in a row, each ready for every seat.

    `latest` is the highest seq the hub has heard of (its commits, wake-ups):
    the log serves a socket only up to there, so never leaves it behind.
    """

    __slots__ = ("events", "last", "latest")

    def __init__(self) -> None:
        self.events: list[Prepared] = []  # consecutive seqs, at most RECENT_EVENTS
        self.latest = 0
        # The newest event made ready, kept when the sockets had it (`forget`): the
        # next one takes the houses its frames packed (frames.Prepared, `before`).
        self.last: Prepared | None = None

    def range(self, after: int, upto: int) -> list[Prepared] | None:
        """The events after seq `after` up to `upto`, if the log holds every one."""
        events = self.events
        if not events or events[0].seq > after + 1 or events[-1].seq < upto:
            return None
        first = events[0].seq
        return events[max(after + 1 - first, 0) : upto + 1 - first]

    def at(self, seq: int) -> Prepared | None:
        """The event at `seq`, if held."""
        events = self.events
        if not events or not events[0].seq <= seq <= events[-1].seq:
            return None
        return events[seq - events[0].seq]

    def since(self, seen: int) -> list[Prepared] | None:
        """Every event after seq `seen` the hub has heard of, if the log holds them."""
        return self.range(seen, max(self.latest, seen))

    def add(self, game: str, entries: list[Entry]) -> list[Prepared]:
        """Hold consecutive stream entries (committed here, or read); return them made ready.

        An event held already is used as it is (its frames may be built). The
        log keeps the longest row of events that ends with the newest. An entry
        at a held seq but of another time means Redis lost writes: the log
        starts again from the entries.
        """
        if not entries:
            return []
        events = self.events
        self.latest = max(self.latest, entries[-1].seq)
        if not events or events[-1].seq + 1 == entries[0].seq:  # the usual case: a commit
            ready = []
            before = self.last
            for e in entries:
                ready.append(before := Prepared(game, e, before))
            self.events = (events + ready)[-RECENT_EVENTS:]
            self.last = ready[-1]
            return ready
        held = {p.seq: p for p in events}
        if any(e.seq in held and held[e.seq].entry.time != e.time for e in entries):
            held, self.latest = {}, entries[-1].seq  # the stream went back
        ready = [held.get(e.seq) or Prepared(game, e, self.last) for e in entries]
        self.last = ready[-1]
        held.update((p.seq, p) for p in ready)
        seq, row = max(held), list[Prepared]()
        while seq in held and len(row) < RECENT_EVENTS:
            row.append(held[seq])
            seq -= 1
        self.events = row[::-1]
        return ready

    def forget(self, upto: int) -> None:
        """Drop the events up to seq `upto` (every local socket has them)."""
        if self.events and self.events[0].seq <= upto:
            self.events = [p for p in self.events if p.seq > upto]


class Recent:
    """The hub's `GameLog`s, one per game, the least recently used dropped past `size`."""

    def __init__(self, size: int = LOGGED_GAMES) -> None:
        self.size = size
        self._logs: dict[str, GameLog] = {}

    def __len__(self) -> int:
        return len(self._logs)

    def get(self, game: str) -> GameLog | None:
        """The game's log, if the hub holds one."""
        return self._logs.get(game)

    def log(self, game: str) -> GameLog:
        """The game's log, made if need be; it becomes the most recently used."""
        found = self._logs.pop(game, None)
        self._logs[game] = found = found if found is not None else GameLog()
        if len(self._logs) > self.size:
            del self._logs[next(iter(self._logs))]
        return found

    def drop(self, game: str) -> None:
        """Forget a game's events."""
        self._logs.pop(game, None)

    def clear(self) -> None:
        """Forget every game's events (wake-ups may have been missed)."""
        self._logs.clear()
