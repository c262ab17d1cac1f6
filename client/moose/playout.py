"""Greedy's choice read straight off a `State`: the search bot's playout policy.

`GreedyBot` scores moves from a seat's view, and building a view costs as much
as the move itself; a playout takes some fifty moves and the search bot plays a
few hundred playouts a move. `Greedy.choose(state, legal)` gives exactly the
move `GreedyBot.choose(rules.view(state, seat), legal)` gives with the same
generator (a test checks it), from what the seat to act could see in `state`.
"""

from __future__ import annotations

import random
from typing import Any

from moose import rules
from moose.basic_bots import GreedyBot

__all__ = ["Greedy"]

Move = dict[str, Any]

_DECK_SIZE = len(rules.CARDS)
_TRAPS = rules.CARDS.count("trap")
_MOOSE = {t: rules.CARDS.count(f"moose:{t}") for t in rules.ROOM_TYPES}
_DISCARD_RANK = {"m": 0, "h": 1, "r": 2, "d": 3, "t": 4}  # basic_bots._DISCARD_RANK by first letter
_W_DOOR = GreedyBot.door_weight
_W_MOOSE = GreedyBot.moose_weight
_OPEN = rules.OPEN


class Greedy:
    """GreedyBot's heuristic over a `State`, for whichever seat is to act."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, s: rules.State, legal: list[Move]) -> Move:
        """The move GreedyBot would choose for the seat to act in `s`."""
        if len(legal) == 1 or legal[0]["action"] == "trap":
            return legal[0]  # greedy always traps; legal_moves lists trap first
        me = s.pending[0] if s.pending else s.turn
        seen = _Seen(s, me)
        rand = self.rng.random
        best, best_value = legal[0], float("-inf")
        for move in legal:
            value = seen.value(move) + rand() * 1e-3
            if value > best_value:
                best, best_value = move, value
        return best


class _Seen:
    """basic_bots._Seen, counted from a State for the seat `me`."""

    def __init__(self, s: rules.State, me: int) -> None:
        self.s, self.me = s, me
        hand = s.hands[me]
        self.hand = hand
        discard = s.discard
        visible, doors = [], []
        on_table = 0
        covered = dict.fromkeys(rules.ROOM_TYPES, 0)
        for k in range(s.n):
            moose = door = 0
            for rtype, cover in s.rooms[k]:
                if cover == rules.MOOSE:
                    moose += 1
                    covered[rtype] += 1
                elif cover == rules.DOOR:
                    door += 1
            visible.append(moose)
            doors.append(door)
            on_table += s.has_house[k] + len(s.rooms[k]) + moose + door
        self.visible, self.doors = visible, doors
        self.unknown = max(1, _DECK_SIZE - len(discard) - len(hand) - on_table)
        self.unseen_traps = _TRAPS - discard.count("trap") - hand.count("trap")
        self.unseen_moose = {
            t: max(0, total - discard.count(f"moose:{t}") - covered[t] - hand.count(f"moose:{t}"))
            for t, total in _MOOSE.items()
        }
        self.worst_opp = max(v for k, v in enumerate(visible) if k != me)

    def p_trap(self, seat: int) -> float:
        if self.unseen_traps <= 0:
            return 0.0
        size = len(self.s.hands[seat])
        p_none: float = (1 - min(1.0, size / self.unknown)) ** self.unseen_traps
        return 1 - p_none

    def lead(self, seat: int) -> float:
        return float(self.worst_opp - self.visible[seat]) + 0.25 * self.doors[seat]

    def open_rooms(self, seat: int) -> list[str]:
        return [t for t, c in self.s.rooms[seat] if c == _OPEN]

    def value(self, move: Move) -> float:
        """GreedyBot.value of `move`."""
        action = move["action"]
        if action == "discard":
            return -_DISCARD_RANK[move["card"][0]]
        if action != "play":
            return 0.0
        card: str = move["card"]
        kind = card[0]
        s = self.s
        if kind == "m":
            rtype, target = card[6:], move["target"]
            targets = sum(
                self.open_rooms(t).count(rtype)
                for t in range(s.n)
                if t != self.me and s.has_house[t]
            )
            stick = 1 - self.p_trap(target)
            return _W_MOOSE + 4 * stick + 1.5 * self.lead(target) - 0.3 * targets
        if kind == "d":
            rtype = s.rooms[self.me][move["room"]][0]
            threat = min(1.0, self.unseen_moose[rtype] / 3)
            if not s.has_house[self.me]:
                threat *= 0.4
            return 2 + _W_DOOR * threat
        target = move["target"]
        if kind == "h":
            rooms = self.open_rooms(target)
            mine = sum(1 for t in rooms if f"moose:{t}" in self.hand)
            return 3 + 0.5 * len(rooms) + 2 * mine + self.lead(target)
        rtype = card[5:]
        has_house = bool(s.has_house[target])
        exposure = min(1.0, self.unseen_moose[rtype] / 3)
        mine_room = f"moose:{rtype}" in self.hand
        return 2 + has_house * (1.5 + 2 * mine_room + exposure) + self.lead(target)
