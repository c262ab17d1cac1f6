"""The `event` message of a stream entry, as each seat sees it, built once per entry.

A socket's `event` differs from another's only in the view's `seat` and `hand`
and, for the seat to act, `legal` and `deadline`. `Prepared` builds the rest
once per entry: one view, and for binary sockets a `codec.Template` of the
packed message with those four values left open, so that a seat's frame is its
hand packed and joined in (`frame(seat)` is `pack(message(seat))`, checked at
import). bench/bench_move_path.py measured the template at ~2x faster than
packing each seat's message (4 seats: ~30 us against ~45 us an entry), which is
why it stays.
"""

from __future__ import annotations

from typing import Any

import msgspec

from moose import rules
from moose.messages import Event
from moose_server.play.correspondence import days_info
from moose_server.play.game import Game, arena_info, seat_info
from moose_server.storage.codec import HOLES, Template, pack, pack_array_header
from moose_server.storage.store import Entry

__all__ = ["Prepared", "event_message", "seat_deadline", "state_message"]

_NIL = pack(None)
_SEATS = [pack(seat) for seat in range(rules.MAX_PLAYERS)]


def event_message(game: str, entry: Entry, seat: int | None, state: rules.State) -> Event:
    """The `event` message of one stream entry as `seat` sees it."""
    view = rules.view(state, seat)
    mine = seat is not None and view["to_act"] == seat and not entry.state.get("auto")
    return Event(
        game=game,
        seq=entry.seq,
        event=entry.event,
        view=view,
        legal=rules.legal_moves(state) if mine else None,
        deadline=entry.deadline if mine and entry.deadline else None,
        server_time=entry.time,
    )


def state_message(game: Game, seat: int | None, now: int) -> Event:
    """An `event` of kind `state`: the game as `seat` sees it now, with names and away seats."""
    auto = {"auto": game.auto_kind() is not None}
    # A spectator or a resumed seat never saw the `start` event that named the seats,
    # nor the `away` events of seats still away.
    event = {
        "kind": "state",
        "names": game.names,
        **seat_info(game),
        **arena_info(game),
        **days_info(game.days),
        "away": game.away,
    }
    if game.forfeits:  # lost by a seat's forfeit: the view is not over by the rules
        winners = [i for i, p in enumerate(game.places()) if p == 1]
        event.update(forfeit=list(game.forfeits), scores=rules.scores(game.state), winners=winners)
    elif game.ended is not None:  # the server ended it: the view is not over by the rules
        event.update(abandoned=True, scores=rules.scores(game.state))
    entry = Entry(game.version, event, auto, game.deadline, now)
    return event_message(game.id, entry, seat, game.state)


def seat_deadline(game: Game, seat: int | None) -> int | None:
    """When the server plays for `seat` if it does not move (`synced.deadline`), or None:
    not its move, or the server plays it at once (a bot, away, a forced pass)."""
    if seat is None or game.finished or game.deadline <= 0:
        return None
    if rules.to_act(game.state) != seat or game.auto_kind() is not None:
        return None
    return game.deadline


class Prepared:
    """One stream entry ready for every seat: state, view and frame template built once.

    `message(seat)` equals `event_message(game, entry, seat, state)`, and
    `frame(seat)` its packed bytes.
    """

    __slots__ = (
        "_spectator",
        "_spectator_view",
        "_template",
        "_view",
        "entry",
        "game",
        "houses",
        "legal",
        "mover",
        "state",
    )

    def __init__(self, game: str, entry: Entry, before: Prepared | None = None) -> None:
        state = entry.parsed if entry.parsed is not None else rules.State.from_dict(entry.state)
        self.game = game
        self.entry = entry
        self.state = state
        # The seat that gets `legal` and `deadline`: none while the server plays it.
        self.mover = None if entry.state.get("auto") else rules.to_act(state)
        self.legal: list[dict[str, Any]] | None = entry.legal
        self._view: dict[str, Any] | None = None
        self._template: Template | None = None
        self._spectator: bytes | None = None
        self._spectator_view: dict[str, Any] | None = None
        # Each seat's house packed, once the template is made; until then the step
        # before's, if made (`before`: the game's entry before this one).
        self.houses: list[House] | None = before.houses if before is not None else None

    @property
    def seq(self) -> int:
        """The entry's sequence number."""
        return self.entry.seq

    def message(self, seat: int | None) -> Event:
        """The `event` message as `seat` sees it."""
        if self._seated(seat):
            hand = sorted(self.state.hands[seat])  # type: ignore[index]
            view = {**self._seat_view(), "seat": seat, "hand": hand}
        elif seat is None:
            if self._spectator_view is None:
                self._spectator_view = rules.view(self.state, None)
            view = self._spectator_view
        else:
            view = rules.view(self.state, seat)  # raises, as it always did
        if seat is not None and seat == self.mover:
            return self._message(view, self._legal(), self.entry.deadline or None)
        return self._message(view, None, None)

    def frame(self, seat: int | None) -> bytes:
        """`pack(self.message(seat))`: the seat's hand (and its moves) packed into the template."""
        if type(seat) is not int or not 0 <= seat < self.state.n:
            if seat is not None:
                return pack(self.message(seat))  # raises
            if self._spectator is None:
                self._spectator = pack(self.message(None))
            return self._spectator
        template = self._template
        if template is None:
            template = self._template = self._make_template()
        hand = pack(sorted(self.state.hands[seat]))
        if seat != self.mover:
            return template.fill(_SEATS[seat], hand, _NIL, _NIL)
        deadline = self.entry.deadline or None
        return template.fill(_SEATS[seat], hand, pack(self._legal()), pack(deadline))

    def _seated(self, seat: int | None) -> bool:
        return type(seat) is int and 0 <= seat < self.state.n

    def _seat_view(self) -> dict[str, Any]:
        """A seated view: every seat's has these keys, in this order, and these values
        but for `seat` and `hand`."""
        if self._view is None:
            self._view = rules.view(self.state, 0)
        return self._view

    def _legal(self) -> list[dict[str, Any]]:
        if self.legal is None:
            self.legal = rules.legal_moves(self.state)
        return self.legal

    def _message(self, view: dict[str, Any], legal: Any, deadline: Any) -> Event:
        entry = self.entry
        return Event(
            game=self.game,
            seq=entry.seq,
            event=entry.event,
            view=view,
            legal=legal,
            deadline=deadline,
            server_time=entry.time,
        )

    def _make_template(self) -> Template:
        """The message packed once, with the seat, its hand, `legal` and `deadline` open;
        its houses joined from each one packed (`_packed_houses`)."""
        houses = self.houses = _packed_houses(self.state, self.houses)
        packed = msgspec.Raw(pack_array_header(len(houses)) + b"".join(h[2] for h in houses))
        view = rules.view(self.state, 0, packed)
        view.update(seat=HOLES[0], hand=HOLES[1])
        return Template(self._message(view, HOLES[2], HOLES[3]), 4)


# A seat's house card, its rooms, and its `rules.house_view` packed.
House = tuple[bool, list[tuple[str, int]], bytes]


def _packed_houses(state: rules.State, before: list[House] | None) -> list[House]:
    """Each seat's house packed: as `before` (the game's step before) had it where it
    is the same. A step changes one house at most: a template's houses are then
    ~1.9 us instead of ~3.5 us made and packed in the view (4 players, 30 moves in;
    ~4.7 us with no step before, a log's first)."""
    made = []
    for seat, (has_house, rooms) in enumerate(zip(state.has_house, state.rooms, strict=True)):
        if before is not None and before[seat][0] == has_house and before[seat][1] == rooms:
            made.append(before[seat])
        else:
            made.append((has_house, rooms, pack(rules.house_view(has_house, rooms))))
    return made


def _check() -> None:
    """Every seat's frame is its packed message, along one game to its end (run at import)."""
    state = rules.new_game(3, seed=4)
    states = [state]
    while not state.over:
        legal = rules.legal_moves(state)
        state = rules.apply(state, legal[-1])
        states.append(state)
    for k, s in enumerate([*states[:: len(states) // 8], states[-1]]):
        entry = Entry(k + 1, {"kind": "move"}, {**s.to_dict(), "auto": k % 3 == 0}, k % 2 * 9, 7)
        ready = Prepared("g_check", entry)
        for seat in (None, *range(s.n)):
            if ready.frame(seat) != pack(event_message("g_check", entry, seat, s)):
                raise AssertionError(f"frames: seat {seat}'s frame is not its message")


_check()
