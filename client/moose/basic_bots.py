"""The bots that choose from the view alone, without searching: random, greedy and
cautious; and what every bot shares (the `Bot` protocol, `Move` and `View`).

moose.bots names every bot (`BOTS`, `make_bot`); moose.search's search bot and
moose.playout's playouts build on `GreedyBot` from here.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from moose import rules

__all__ = ["Bot", "CautiousBot", "GreedyBot", "Move", "RandomBot", "View"]

Move = dict[str, Any]
View = dict[str, Any]

_DECK_SIZE = len(rules.CARDS)
_TRAPS_IN_DECK = rules.CARDS.count("trap")
_MOOSE_PER_TYPE = {t: rules.CARDS.count(f"moose:{t}") for t in rules.ROOM_TYPES}


class Bot(Protocol):
    """Chooses one of the legal moves from a seat's view of the game."""

    name: str

    def choose(self, view: View, legal: list[Move]) -> Move:
        """One move out of `legal`."""
        ...


class RandomBot:
    """Plays uniformly at random among the legal moves."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: View, legal: list[Move]) -> Move:
        """A legal move chosen uniformly at random."""
        if not legal:
            raise ValueError("no legal move to choose from")
        return self.rng.choice(legal)


class _Seen:
    """What a seat can count from its view: public table plus its own hand."""

    def __init__(self, view: View) -> None:
        self.me: int = view["seat"]
        self.n: int = view["players"]
        self.hand: list[str] = view["hand"]
        self.houses: list[dict[str, Any]] = view["houses"]
        self.hand_sizes: list[int] = view["hand_sizes"]
        discard: list[str] = view["discard"]
        # One pass over the houses (bots take a view at every move): the moose and
        # doors each seat shows, the cards on the table, the moose covering rooms.
        self.visible: list[int] = []
        self.doors: list[int] = []
        on_table = 0
        covered = dict.fromkeys(rules.ROOM_TYPES, 0)
        for h in self.houses:
            moose = doors = 0
            for r in h["rooms"]:
                if r["cover"] == "moose":
                    moose += 1
                    covered[r["type"]] += 1
                elif r["cover"] == "door":
                    doors += 1
            self.visible.append(moose)
            self.doors.append(doors)
            on_table += int(h["house"]) + len(h["rooms"]) + moose + doors  # a room, its cover
        # Cards nobody has shown: the draw pile plus the opponents' hands.
        self.unknown = max(1, _DECK_SIZE - len(discard) - len(self.hand) - on_table)
        self.unseen_traps = _TRAPS_IN_DECK - discard.count("trap") - self.hand.count("trap")
        self.unseen_moose: dict[str, int] = {}
        for t, total in _MOOSE_PER_TYPE.items():
            code = f"moose:{t}"
            left = total - discard.count(code) - covered[t] - self.hand.count(code)
            self.unseen_moose[t] = max(0, left)
        self.worst_opp = max(v for k, v in enumerate(self.visible) if k != self.me)

    def p_trap(self, seat: int) -> float:
        """Chance that `seat` holds a trap, from the traps not yet seen."""
        if self.unseen_traps <= 0:
            return 0.0
        p_none: float = (1 - min(1.0, self.hand_sizes[seat] / self.unknown)) ** self.unseen_traps
        return 1 - p_none

    def lead(self, seat: int) -> float:
        """How far `seat` is ahead of the worst opponent (lower score leads)."""
        return float(self.worst_opp - self.visible[seat]) + 0.25 * self.doors[seat]

    def open_rooms(self, seat: int) -> list[str]:
        """The types of `seat`'s open rooms."""
        return [r["type"] for r in self.houses[seat]["rooms"] if r["cover"] is None]


# Discard order when nothing can be played: moose cards score against you, so
# they go first; the trap is the last thing worth giving up.
_DISCARD_RANK = {"moose": 0, "house": 1, "room": 2, "door": 3, "trap": 4}


class GreedyBot:
    """Scores each legal move with a one-move heuristic and plays the best."""

    name = "greedy"
    # A door on a threatened room against dropping a moose card now: measured
    # over 2,000 games vs random, 9 -> 47% wins, 14 -> 47.5%, 5 -> 43%.
    door_weight = 14.0
    moose_weight = 10.0

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: View, legal: list[Move]) -> Move:
        """The legal move with the best heuristic value (ties broken by the seed)."""
        if not legal:
            raise ValueError("no legal move to choose from")
        for move in legal:
            if move["action"] == "trap":
                return move
        if len(legal) == 1:
            return legal[0]
        seen = _Seen(view)
        best: Move = legal[0]
        best_value = float("-inf")
        for move in legal:
            value = self.value(seen, move) + self.rng.random() * 1e-3
            if value > best_value:
                best, best_value = move, value
        return best

    def value(self, seen: _Seen, move: Move) -> float:
        """The heuristic worth of one move for the seat that sees `seen`."""
        action = move["action"]
        if action == "discard":
            return -_DISCARD_RANK[move["card"].split(":")[0]]
        if action != "play":
            return 0.0
        card: str = move["card"]
        if card.startswith("moose:"):
            return self._moose(seen, card, move["target"])
        if card == "door":
            return self._door(seen, move["room"])
        if card == "house":
            return self._house(seen, move["target"])
        return self._room(seen, card[5:], move["target"])

    def _moose(self, seen: _Seen, card: str, target: int) -> float:
        # Dropping the card always helps us; a moose that sticks also hurts them.
        stick = 1 - seen.p_trap(target)
        rtype = card[6:]
        # A card with few targets left may lose them; play it while it can go.
        targets = sum(
            seen.open_rooms(t).count(rtype)
            for t in range(seen.n)
            if t != seen.me and seen.houses[t]["house"]
        )
        return self.moose_weight + 4 * stick + 1.5 * seen.lead(target) - 0.3 * targets

    def _door(self, seen: _Seen, room: int) -> float:
        rtype = seen.houses[seen.me]["rooms"][room]["type"]
        threat = min(1.0, seen.unseen_moose[rtype] / 3)
        if not seen.houses[seen.me]["house"]:
            threat *= 0.4  # no moose can enter until someone hands us a house
        return 2 + self.door_weight * threat

    def _house(self, seen: _Seen, target: int) -> float:
        rooms = seen.open_rooms(target)
        mine = sum(1 for t in rooms if f"moose:{t}" in seen.hand)
        return 3 + 0.5 * len(rooms) + 2 * mine + seen.lead(target)

    def _room(self, seen: _Seen, rtype: str, target: int) -> float:
        has_house = bool(seen.houses[target]["house"])
        mine = f"moose:{rtype}" in seen.hand
        exposure = min(1.0, seen.unseen_moose[rtype] / 3)
        return 2 + has_house * (1.5 + 2 * mine + exposure) + seen.lead(target)


class CautiousBot(GreedyBot):
    """Greedy, but shuts every threatened room of its own before attacking."""

    name = "cautious"
    door_weight = 30.0
