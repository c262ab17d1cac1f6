"""Event messages: a stream entry as each seat sees it, as a map or a packed frame.

`event_message` builds the PROTOCOL.md `event` for one seat; `Prepared` builds
the same for every seat of one entry from parts packed once (the hub's fast
path), and `state_message` is the `state` event of a game as it is now.
"""

from __future__ import annotations

from typing import Any

from moose import rules
from moose_server.codec import pack
from moose_server.games import Game, seat_info
from moose_server.store import Entry

__all__ = ["Prepared", "event_message", "state_message"]


def event_message(game: str, entry: Entry, seat: int | None, state: rules.State) -> dict[str, Any]:
    """The `event` message of one stream entry as `seat` sees it."""
    view = rules.view(state, seat)
    mine = seat is not None and view["to_act"] == seat and not entry.state.get("auto")
    return {
        "type": "event", "game": game, "seq": entry.seq, "event": entry.event, "view": view,
        "legal": rules.legal_moves(state) if mine else None,
        "deadline": entry.deadline if mine and entry.deadline else None,
        "server_time": entry.time,
    }  # fmt: skip


class Prepared:
    """One stream entry ready for every seat: the state and public view built once.

    Views differ only in `seat` and `hand`; `legal` and `deadline` go to the seat
    to act alone. `message(seat)` equals `event_message(game, entry, seat, state)`.
    """

    __slots__ = ("_packed", "entry", "game", "head", "legal", "mine_seat", "state", "tail")

    def __init__(self, game: str, entry: Entry) -> None:
        state = entry.parsed if entry.parsed is not None else rules.State.from_dict(entry.state)
        head = rules.view(state, None)
        tail: dict[str, Any] = {}
        if state.over:
            tail = {"scores": head.pop("scores"), "winners": head.pop("winners")}
        self.game = game
        self.entry = entry
        self.state = state
        self.head = head
        self.tail = tail
        self.mine_seat = None if entry.state.get("auto") else head["to_act"]
        self.legal: list[dict[str, Any]] | None = entry.legal
        self._packed: tuple[bytes, ...] | None = None

    def message(self, seat: int | None) -> dict[str, Any]:
        """The `event` message as `seat` sees it."""
        state, entry = self.state, self.entry
        if seat is None:
            view = {**self.head, **self.tail}
        elif type(seat) is int and 0 <= seat < state.n:
            view = {**self.head, "seat": seat, "hand": sorted(state.hands[seat]), **self.tail}
        else:
            view = rules.view(state, seat)  # raises, as it always did
        mine = seat is not None and seat == self.mine_seat
        if mine and self.legal is None:
            self.legal = rules.legal_moves(state)
        return {
            "type": "event", "game": self.game, "seq": entry.seq, "event": entry.event,
            "view": view, "legal": self.legal if mine else None,
            "deadline": entry.deadline if mine and entry.deadline else None,
            "server_time": entry.time,
        }  # fmt: skip

    def frame(self, seat: int | None) -> bytes:
        """`pack(self.message(seat))`, assembled from parts packed once per entry.

        Only the seat, its hand and (for the seat to act) `legal` and `deadline`
        are packed per socket; the bytes are those of packing the message.
        """
        if seat is not None and (type(seat) is not int or not 0 <= seat < self.state.n):
            return pack(self.message(seat))
        parts = self._packed
        if parts is None:
            parts = self._packed = self._pack_parts()
        top, before, after, tail, end = parts
        size = len(self.head) + len(self.tail)
        if seat is None:
            return b"".join((top, _map_head(size), before, _NIL, after, tail, end))
        if seat == self.mine_seat:
            end = self._mine_end()
        hand = pack(sorted(self.state.hands[seat]))
        return b"".join(
            (top, _map_head(size + 1), before, pack(seat), after, _HAND, hand, tail, end)
        )

    def _pack_parts(self) -> tuple[bytes, ...]:
        """The message's packed parts around the seat, the hand and the mover's fields."""
        entry, head = self.entry, self.head
        keys = list(head)
        at = keys.index("seat")  # the view keeps its key order: `seat` in place, then `hand`
        top = b"".join((
            b"\x88", _TYPE, _EVENT, _GAME, pack(self.game), _SEQ, pack(entry.seq),
            _EVENT_KEY, pack(entry.event), _VIEW,
        ))  # fmt: skip
        before = _pairs({k: head[k] for k in keys[: at + 1]})[: -len(_NIL)]  # up to "seat"
        after = _pairs({k: head[k] for k in keys[at + 1 :]})
        end = b"".join((_LEGAL, _NIL, _DEADLINE, _NIL, _TIME, pack(entry.time)))
        return top, before, after, _pairs(self.tail), end

    def _mine_end(self) -> bytes:
        """The last three fields for the seat to act: its legal moves and deadline."""
        if self.legal is None:
            self.legal = rules.legal_moves(self.state)
        deadline = self.entry.deadline or None
        return b"".join((
            _LEGAL, pack(self.legal), _DEADLINE, pack(deadline), _TIME, pack(self.entry.time),
        ))  # fmt: skip


_NIL = pack(None)
_TYPE, _EVENT, _GAME, _SEQ = pack("type"), pack("event"), pack("game"), pack("seq")
_EVENT_KEY, _VIEW, _HAND = _EVENT, pack("view"), pack("hand")
_LEGAL, _DEADLINE, _TIME = pack("legal"), pack("deadline"), pack("server_time")


def _map_head(n: int) -> bytes:
    """The msgpack header of a map of `n` entries."""
    return bytes((0x80 | n,)) if n < 16 else b"\xde" + n.to_bytes(2, "big")


def _pairs(d: dict[str, Any]) -> bytes:
    """A map's packed keys and values, without its header."""
    packed = pack(d)
    return packed[len(_map_head(len(d))) :]


def state_message(game: Game, seat: int | None, now: int) -> dict[str, Any]:
    """An `event` of kind `state`: the game as `seat` sees it now, with names and away seats."""
    auto = {"auto": game.auto_kind() is not None}
    # A spectator or a resumed seat never saw the `start` event that named the seats,
    # nor the `away` events of seats still away.
    event = {"kind": "state", "names": game.names, **seat_info(game), "away": game.away}
    entry = Entry(game.version, event, auto, game.deadline, now)
    return event_message(game.id, entry, seat, game.state)
