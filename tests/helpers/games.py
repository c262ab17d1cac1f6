"""Games without a server: stacked decks, scripted moves, seeded games, records replayed."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from moose import rules
from moose.rules import CARDS, State

# The order in which unspecified cards fill a stacked deck. Traps come last so
# that no seat answers a moose unless the test gave it a trap on purpose, and
# moose cards come first because they are dead until someone has a house.
_FILL_ORDER = ("moose:", "door", "house", "room:", "trap")


def _fill_key(card: str) -> int:
    return next(i for i, prefix in enumerate(_FILL_ORDER) if card.startswith(prefix))


def stacked_deck(
    players: int,
    hands: Sequence[Sequence[str]],
    draw: Sequence[str] = (),
    *,
    dealer: int | None = None,
) -> list[str]:
    """A 58-card deck dealing `hands[seat]` to each seat, then `draw` from the top.

    Hands may be shorter than 4 cards and `draw` may be any length: the rest of
    the 58 cards fill the gaps in a fixed order. `dealer` defaults to the last
    seat, so that seat 0 plays first.
    """
    if dealer is None:
        dealer = players - 1
    if len(hands) != players:
        raise ValueError(f"need one hand per seat ({players}), got {len(hands)}")
    wanted = Counter(c for h in hands for c in h) + Counter(draw)
    pool = Counter(CARDS)
    if wanted - pool:
        raise ValueError(f"more copies than the deck holds: {dict(wanted - pool)}")
    spare = sorted((pool - wanted).elements(), key=_fill_key)
    spare.reverse()  # so that list.pop() hands them out in _FILL_ORDER
    first = (dealer + 1) % players
    deck: list[str] = []
    for rnd in range(rules.HAND_SIZE):
        for k in range(players):
            hand = hands[(first + k) % players]
            deck.append(hand[rnd] if rnd < len(hand) else spare.pop())
    deck.extend(draw)
    while spare:
        deck.append(spare.pop())
    rules.check_deck(deck)
    return deck


def deal(
    players: int,
    hands: Sequence[Sequence[str]],
    draw: Sequence[str] = (),
    *,
    dealer: int | None = None,
) -> State:
    """A new game dealt from `stacked_deck(...)`; seat 0 plays first by default."""
    if dealer is None:
        dealer = players - 1
    return rules.new_game(
        players, deck=stacked_deck(players, hands, draw, dealer=dealer), dealer=dealer
    )


def play(state: State, *moves: Mapping[str, Any]) -> State:
    """Apply `moves` in order and return the final state."""
    for m in moves:
        state = rules.apply(state, m)
    return state


def replay(record: Mapping[str, Any]) -> State:
    """The final state of a game record: its moves applied to its seats, deck and dealer."""
    start = rules.new_game(record["players"], deck=record["deck"], dealer=record["dealer"])
    return play(start, *record["moves"])


def house(target: int) -> dict[str, Any]:
    """The move: play a house card on `target`."""
    return {"action": "play", "card": "house", "target": target}


def room(rtype: str, target: int) -> dict[str, Any]:
    """The move: play `room:rtype` on `target`."""
    return {"action": "play", "card": f"room:{rtype}", "target": target}


def moose(rtype: str, target: int, index: int) -> dict[str, Any]:
    """The move: play `moose:rtype` on room `index` of `target`."""
    return {"action": "play", "card": f"moose:{rtype}", "target": target, "room": index}


def door(index: int) -> dict[str, Any]:
    """The move: play a door on your own room `index`."""
    return {"action": "play", "card": "door", "room": index}


def discard(card: str) -> dict[str, Any]:
    """The move: discard `card`."""
    return {"action": "discard", "card": card}


PASS: dict[str, Any] = {"action": "pass"}
TRAP: dict[str, Any] = {"action": "trap"}
ALLOW: dict[str, Any] = {"action": "allow"}


def random_game(players: int, seed: int) -> Iterator[tuple[State, dict[str, Any] | None]]:
    """Every (state, move taken from it) of a seeded random game; the last move is None."""
    rng = random.Random(seed)
    state = rules.new_game(players, seed=seed)
    while not state.over:
        move = rng.choice(rules.legal_moves(state))
        yield state, move
        state = rules.apply(state, move)
    yield state, None


def find_position(
    wanted: Callable[[State], bool], *, seeds: int = 400, players: Sequence[int] = (2, 3, 4, 5, 6)
) -> State:
    """The first position of the seeded random games for which `wanted` holds."""
    for seed in range(seeds):
        for n in players:
            for state, _ in random_game(n, seed):
                if wanted(state):
                    return state
    raise AssertionError(f"no seeded game reached the wanted position in {seeds} seeds")


def card_count(state: State) -> Counter[str]:
    """Every card of the game wherever it lies, counted."""
    return Counter(rules.cards_in_play(state))


# -- a whole scripted game that ends with every hand empty ---------------------------
#
# Random play practically never empties every hand (10 houses fit only two seats,
# and traps cannot be played), so this two-seat game is stacked by hand:
#   setup     houses, rooms and all five doors until seat 0 has 3 open bedrooms and
#             seat 1 has 3 open bathrooms;
#   discards  30 turns in which every card in both hands is dead, so each seat
#             discards the card it drew and keeps the 4 it was dealt;
#   finale    the last two draws are moose that reopen a room on each side, and the
#             end phase plays the 8 dealt cards, emptying both hands.

_SETUP = [
    ("house", house(1)),
    ("house", house(0)),
    ("room:living", room("living", 1)),
    ("room:kitchen", room("kitchen", 0)),
    ("door", door(0)),
    ("door", door(0)),
    ("room:living", room("living", 1)),
    ("room:kitchen", room("kitchen", 0)),
    ("door", door(1)),
    ("door", door(1)),
    ("room:bathroom", room("bathroom", 1)),
    ("room:kitchen", room("kitchen", 0)),
    ("door", door(2)),
    ("room:bedroom", room("bedroom", 0)),
    ("room:bathroom", room("bathroom", 1)),
    ("room:bedroom", room("bedroom", 0)),
    ("room:bathroom", room("bathroom", 1)),
    ("room:bedroom", room("bedroom", 0)),
]
_DEAD_FOR_0 = (
    ["moose:bedroom"] * 4
    + ["moose:kitchen"] * 3
    + ["house"] * 4
    + ["trap", "trap", "room:living", "room:bathroom"]
)
_DEAD_FOR_1 = (
    ["moose:bathroom"] * 4
    + ["moose:living"] * 3
    + ["house"] * 4
    + ["trap", "room:bathroom", "room:bedroom", "room:bedroom"]
)
_FINALE = [
    ("moose:bathroom", moose("bathroom", 1, 2)),
    ("moose:bedroom", moose("bedroom", 0, 3)),
]
EMPTYING_HANDS = [
    ["room:living", "room:living", "moose:living", "moose:living"],
    ["room:kitchen", "room:kitchen", "moose:kitchen", "moose:kitchen"],
]
# The end phase: seat 0 starts; every action covers or opens a room on the other side.
EMPTYING_END = [
    room("living", 1),
    room("kitchen", 0),
    moose("living", 1, 5),
    moose("kitchen", 0, 6),
    room("living", 1),
    room("kitchen", 0),
    moose("living", 1, 6),
    moose("kitchen", 0, 7),
]


def emptying_game(*, trap_for_seat_1: bool = False) -> tuple[list[str], list[dict[str, Any]]]:
    """(deck, moves) of a 2-seat game (dealer 1) up to the start of its end phase.

    With `trap_for_seat_1`, seat 1 keeps a trap instead of one moose:kitchen
    through the whole game (allowing the last moose of the normal phase), so it
    can answer a moose in the end phase.
    """
    hands = [list(h) for h in EMPTYING_HANDS]
    dead0, dead1 = list(_DEAD_FOR_0), list(_DEAD_FOR_1)
    if trap_for_seat_1:
        hands[1][3] = "trap"
        dead1[dead1.index("trap")] = "moose:kitchen"
    draw = [card for card, _ in _SETUP]
    moves = [m for _, m in _SETUP]
    for c0, c1 in zip(dead0, dead1, strict=True):
        draw += [c0, c1]
        moves += [discard(c0), discard(c1)]
    draw += [card for card, _ in _FINALE]
    moves += [m for _, m in _FINALE]
    if trap_for_seat_1:
        moves.insert(-1, ALLOW)  # seat 1 lets the first moose in, keeping its trap
    return stacked_deck(2, hands, draw, dealer=1), moves
