"""The rules engine: There's a Moose in the House, exactly as RULES.md says.

Pure and deterministic: no I/O, no clock, no logging, no global random. A game
is a `State`; `apply(state, move)` returns the next one and never changes its
argument. States share the lists a move did not touch with the states they came
from, so never change a state in place: take `state.copy()` first. Moves are
plain maps in the RULES.md notation::

    {"action": "play", "card": "moose:kitchen", "target": 2, "room": 1}

Vocabulary: `new_game`, `legal_moves`, `apply`, `view`, `to_act`, `is_over`,
`scores`, `winners`. Everything else in this module is an implementation detail.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "CARDS",
    "CARD_CODES",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "ROOM_TYPES",
    "IllegalMove",
    "InvalidGame",
    "State",
    "apply",
    "cards_in_play",
    "check_deck",
    "doors",
    "house_view",
    "is_over",
    "legal_moves",
    "new_game",
    "normalize_move",
    "phase",
    "scores",
    "to_act",
    "view",
    "winners",
]

ROOM_TYPES: tuple[str, ...] = ("kitchen", "living", "bedroom", "bathroom")
MIN_PLAYERS = 2
MAX_PLAYERS = 6
HAND_SIZE = 4

# The 58 cards, in a fixed canonical order (used for shuffling from a seed).
CARDS: tuple[str, ...] = (
    *(f"room:{t}" for t in ROOM_TYPES for _ in range(5)),
    *(f"moose:{t}" for t in ROOM_TYPES for _ in range(5)),
    *("house",) * 10,
    *("door",) * 5,
    *("trap",) * 3,
)
CARD_CODES: frozenset[str] = frozenset(CARDS)
_CARD_COUNTS: dict[str, int] = {c: CARDS.count(c) for c in CARD_CODES}

# Room covers.
OPEN = 0
MOOSE = 1
DOOR = 2
_COVER_NAMES = (None, "moose", "door")
MAX_OPEN_ROOMS = 3

ACTIONS = frozenset({"play", "discard", "pass", "trap", "allow"})
_MOVE_KEYS = frozenset({"action", "card", "target", "room", "seat"})


class IllegalMove(ValueError):
    """A move the rules do not allow here; the message says why."""


class InvalidGame(ValueError):
    """A game cannot be set up this way (seat count, dealer, deck)."""


class State:
    """One position of a game. Immutable by contract: `copy()` before changing one.

    `apply` builds each new state sharing every list the move left alone (hands,
    rooms, piles) with the old one, which is what makes it fast.
    """

    __slots__ = (
        "dealer",
        "deck",
        "discard",
        "draw",
        "drew",
        "hands",
        "has_house",
        "n",
        "over",
        "pending",
        "rooms",
        "turn",
    )

    n: int
    dealer: int
    deck: tuple[str, ...]  # the initial deck, top first (hidden until the end)
    draw: list[str]  # the draw pile, top card LAST so a draw takes draw[-1]
    hands: list[list[str]]
    has_house: list[bool]
    rooms: list[list[tuple[str, int]]]  # per seat: (room type, cover)
    discard: list[str]  # bottom first, the top card is the last
    turn: int  # the seat whose turn it is (the attacker during a trap answer)
    drew: bool  # whether this turn is a normal turn (a card was drawn)
    pending: tuple[int, int, str] | None  # trap answer: (victim, room, moose card)
    over: bool

    def copy(self) -> State:
        """A copy that shares nothing mutable with this state."""
        s = self._clone()
        s.draw = self.draw.copy()
        s.hands = [h.copy() for h in self.hands]
        s.has_house = self.has_house.copy()
        s.rooms = [r.copy() for r in self.rooms]
        s.discard = self.discard.copy()
        return s

    def _clone(self) -> State:
        """A copy sharing the inner lists: whoever changes one must replace it first.

        `apply` copies only the hands, houses and piles a move touches, which is
        most of what makes it fast; `copy()` is the safe version for everyone else.
        """
        s = State.__new__(State)
        s.n = self.n
        s.dealer = self.dealer
        s.deck = self.deck
        s.draw = self.draw
        s.hands = self.hands.copy()
        s.has_house = self.has_house
        s.rooms = self.rooms.copy()
        s.discard = self.discard
        s.turn = self.turn
        s.drew = self.drew
        s.pending = self.pending
        s.over = self.over
        return s

    # -- plain data, for storage (msgpack/JSON) -------------------------------

    def to_dict(self, copy: bool = True) -> dict[str, Any]:
        """Everything, hidden parts included, as plain data (for storage only).

        `copy=False`: the state's own lists and tuples, not copies, for a caller that
        only packs it (msgpack writes a tuple as the list it stands for: the same
        bytes) and never changes it; not to be compared with a dict read back (a
        tuple is not equal to a list). ~0.4 us instead of ~2.9 us (4 players, 30
        moves in): the server's every commit.
        """
        if not copy:
            return {
                "n": self.n,
                "dealer": self.dealer,
                "deck": self.deck,
                "draw": self.draw,
                "hands": self.hands,
                "has_house": self.has_house,
                "rooms": self.rooms,
                "discard": self.discard,
                "turn": self.turn,
                "drew": self.drew,
                "pending": self.pending,
                "over": self.over,
            }
        return {
            "n": self.n,
            "dealer": self.dealer,
            "deck": list(self.deck),
            "draw": list(self.draw),
            "hands": [list(h) for h in self.hands],
            "has_house": list(self.has_house),
            "rooms": [[[t, c] for t, c in rs] for rs in self.rooms],
            "discard": list(self.discard),
            "turn": self.turn,
            "drew": self.drew,
            "pending": list(self.pending) if self.pending else None,
            "over": self.over,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], copy: bool = True) -> State:
        """The inverse of `to_dict`.

        `copy=False`: `d`'s lists and tuples are taken as they are, for a `d` that
        nobody else holds, already shaped as a state holds them (the deck and each
        room and `pending` tuples, a seat's hand a list).
        """
        s = cls.__new__(cls)
        if not copy:
            s.n, s.dealer, s.deck, s.draw = d["n"], d["dealer"], d["deck"], d["draw"]
            s.hands, s.has_house, s.rooms = d["hands"], d["has_house"], d["rooms"]
            s.discard, s.turn, s.drew = d["discard"], d["turn"], d["drew"]
            s.pending, s.over = d["pending"], d["over"]
            return s
        s.n = d["n"]
        s.dealer = d["dealer"]
        s.deck = tuple(d["deck"])
        s.draw = list(d["draw"])
        s.hands = [list(h) for h in d["hands"]]
        s.has_house = list(d["has_house"])
        s.rooms = [[(t, c) for t, c in rs] for rs in d["rooms"]]
        s.discard = list(d["discard"])
        s.turn = d["turn"]
        s.drew = d["drew"]
        p = d["pending"]
        s.pending = (p[0], p[1], p[2]) if p else None
        s.over = d["over"]
        return s

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<State players={self.n} to_act={to_act(self)} draw={len(self.draw)} over={self.over}>"
        )


# -- setting up ---------------------------------------------------------------


def check_deck(deck: Sequence[str]) -> None:
    """Raise `InvalidGame` unless `deck` is a permutation of the 58 cards."""
    if isinstance(deck, str | bytes) or not isinstance(deck, Sequence):
        raise InvalidGame("deck must be a list of 58 card codes")
    counts: dict[str, int] = {}
    for i, card in enumerate(deck):
        if not isinstance(card, str) or card not in CARD_CODES:
            raise InvalidGame(f"deck[{i}] is not a card code: {card!r}")
        counts[card] = counts.get(card, 0) + 1
    if len(deck) != len(CARDS) or counts != _CARD_COUNTS:
        wrong = sorted(c for c in CARD_CODES if counts.get(c, 0) != _CARD_COUNTS[c])
        raise InvalidGame(
            f"deck must hold each of the 58 cards exactly once ({len(deck)} cards given;"
            f" wrong counts of {', '.join(wrong)})"
        )


def new_game(
    players: int,
    *,
    seed: int | str | None = None,
    dealer: int | None = None,
    deck: Sequence[str] | None = None,
) -> State:
    """Deal a new game; shuffle with random.Random(seed) unless a deck is given."""
    if isinstance(players, bool) or not isinstance(players, int):
        raise InvalidGame(f"players must be an integer, not {players!r}")
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise InvalidGame(f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}, not {players}")
    rng = random.Random(seed)
    if deck is None:
        cards = list(CARDS)
        rng.shuffle(cards)
        deck = cards
    else:
        check_deck(deck)
    if dealer is None:
        dealer = rng.randrange(players)
    elif isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < players:
        raise InvalidGame(f"dealer must be a seat from 0 to {players - 1}, not {dealer!r}")

    s = State.__new__(State)
    s.n = players
    s.dealer = dealer
    s.deck = tuple(deck)
    first = (dealer + 1) % players
    hands: list[list[str]] = [[] for _ in range(players)]
    pos = 0
    for _ in range(HAND_SIZE):
        for k in range(players):
            hands[(first + k) % players].append(deck[pos])
            pos += 1
    s.hands = hands
    s.draw = list(reversed(deck[pos:]))
    s.has_house = [False] * players
    s.rooms = [[] for _ in range(players)]
    s.discard = []
    s.over = False
    s.pending = None
    s.turn = first
    s.drew = False
    _start_turn(s)
    return s


def _start_turn(s: State) -> None:
    """The seat in `s.turn` begins its turn: draw if the pile is not empty."""
    draw = s.draw
    if draw:
        s.hands[s.turn] = [*s.hands[s.turn], draw[-1]]
        s.draw = draw[:-1]
        s.drew = True
    else:
        s.drew = False


# -- queries ------------------------------------------------------------------


def to_act(state: State) -> int | None:
    """The seat that must move now, or None when the game is over."""
    if state.over:
        return None
    return state.pending[0] if state.pending else state.turn


def is_over(state: State) -> bool:
    """Whether the game has ended."""
    return state.over


def phase(state: State) -> str:
    """One of "normal", "end" (no draw this turn), "answer" (trap answer) or "over"."""
    if state.over:
        return "over"
    if state.pending:
        return "answer"
    return "normal" if state.drew else "end"


def _open_count(rooms: list[tuple[str, int]]) -> int:
    count = 0
    for _, cover in rooms:
        if cover == OPEN:
            count += 1
    return count


# The opponents of each seat, in play order from its left: _OPPONENTS[n][seat].
_OPPONENTS: dict[int, tuple[tuple[int, ...], ...]] = {
    n: tuple(tuple((seat + k) % n for k in range(1, n)) for seat in range(n))
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)
}


# -- plays (a-d) ----------------------------------------------------------------

_NO_HOUSE = "seat {target} has no house card, so no moose can enter"
_NOT_OPEN = "room {room} of seat {owner} is not open (it has a {cover})"
_NOT_TYPE = "{card} does not match room {room} of seat {target} ({rtype})"
_HAS_HOUSE = "seat {target} already has a house card"
_ROOMS_FULL = f"seat {{target}} already has {MAX_OPEN_ROOMS} open rooms"
_SOME: list[dict[str, Any]] = [{}]  # what `first` answers: there is a play (no need to build it)


def _plays(
    s: State,
    seat: int,
    cards: Iterable[str],
    place: tuple[Any, Any] | None = None,
    first: bool = False,
) -> tuple[list[dict[str, Any]], str | None]:
    """The legal plays (a-d) of `seat` with `cards`, and why the last place tried is refused.

    The one statement of when a card may be played: every (target, room) each
    card could name is tried, or only `place` when `_play` checks one play (the
    refusal is a template it fills in). `first`: only whether there is one
    (a list that is not empty). Plain loops: this is the engine's hot spot.
    """
    has_house, rooms = s.has_house, s.rooms
    if place is None:
        opponents, at = _OPPONENTS[s.n][seat], 0
    else:
        opponents, at = place[:1], place[1]
    out: list[dict[str, Any]] = []
    why = None
    for card in cards:
        kind = card[0]
        if kind == "m":  # moose:T: an opponent's open room of type T, in a house
            rtype = card[6:]
            for t in opponents:
                if not has_house[t]:
                    why = _NO_HOUSE
                    continue
                own = rooms[t]
                for i, (typ, cover) in enumerate(own) if place is None else ((at, own[at]),):
                    if cover != OPEN:
                        why = _NOT_OPEN
                    elif typ != rtype:
                        why = _NOT_TYPE
                    else:
                        if first:
                            return _SOME, None
                        out.append({"action": "play", "card": card, "target": t, "room": i})
        elif kind == "r":  # room:T: an opponent with fewer than 3 open rooms
            for t in opponents:
                if _open_count(rooms[t]) >= MAX_OPEN_ROOMS:
                    why = _ROOMS_FULL
                else:
                    if first:
                        return _SOME, None
                    out.append({"action": "play", "card": card, "target": t})
        elif kind == "h":  # house: an opponent without one
            for t in opponents:
                if has_house[t]:
                    why = _HAS_HOUSE
                else:
                    if first:
                        return _SOME, None
                    out.append({"action": "play", "card": card, "target": t})
        elif kind == "d":  # door: an open room of one's own
            own = rooms[seat]
            for i, (_, cover) in enumerate(own) if place is None else ((at, own[at]),):
                if cover != OPEN:
                    why = _NOT_OPEN
                else:
                    if first:
                        return _SOME, None
                    out.append({"action": "play", "card": card, "room": i})
    return out, why


def _has_play(s: State, seat: int) -> bool:
    """Whether `seat` has any legal play (a-d)."""
    return bool(_plays(s, seat, set(s.hands[seat]), None, True)[0])


def legal_moves(state: State) -> list[dict[str, Any]]:
    """Every legal move of the seat to act, in RULES.md notation."""
    if state.over:
        return []
    if state.pending:
        return [{"action": "trap"}, {"action": "allow"}]
    seat = state.turn
    # Sorted codes give the order door, house, moose:*, room:*, trap.
    plays = _plays(state, seat, sorted(set(state.hands[seat])))[0]
    if plays:
        return plays
    if state.drew:
        return [{"action": "discard", "card": c} for c in sorted(set(state.hands[seat]))]
    return [{"action": "pass"}]


# -- moves ----------------------------------------------------------------------


def _int_field(move: Mapping[str, Any], key: str) -> int:
    if key not in move:
        raise IllegalMove(f"{move['action']} {move.get('card', '')}: '{key}' is required".strip())
    v = move[key]
    if type(v) is not int and (isinstance(v, bool) or not isinstance(v, int)):
        raise IllegalMove(f"'{key}' must be an integer, not {v!r}")
    return v


def normalize_move(move: Any) -> dict[str, Any]:
    """Check a move's shape (not its legality) and return it in canonical form."""
    # `type is dict` first: isinstance against an ABC is slow, and most moves are dicts.
    if type(move) is not dict and not isinstance(move, Mapping):
        raise IllegalMove(f"a move must be a map, not {type(move).__name__}")
    if not _MOVE_KEYS.issuperset(move):
        unknown = set(move) - _MOVE_KEYS
        raise IllegalMove(f"unknown move field(s): {', '.join(sorted(map(str, unknown)))}")
    action = move.get("action")
    # A str check first: an unhashable action (a list from JSON) must not reach `in`.
    if not isinstance(action, str) or action not in ACTIONS:
        raise IllegalMove(
            f"unknown action {action!r} (expected one of {', '.join(sorted(ACTIONS))})"
        )
    out: dict[str, Any] = {"action": action}
    if action == "play" or action == "discard":
        card = move.get("card")
        if not isinstance(card, str) or card not in CARD_CODES:
            raise IllegalMove(f"unknown card code {card!r}")
        out["card"] = card
        if action == "play":
            _play_fields(move, card, out)
        elif "target" in move or "room" in move:
            raise IllegalMove(f"'discard' takes no {'target' if 'target' in move else 'room'}")
    else:
        if "card" in move:
            raise IllegalMove(f"'{action}' takes no card")
        for key in ("target", "room"):
            if key in move:
                raise IllegalMove(f"'{action}' takes no {key}")
    if "seat" in move:
        out["seat"] = _int_field(move, "seat")
    return out


def _play_fields(move: Mapping[str, Any], card: str, out: dict[str, Any]) -> None:
    """Copy the target and room a play of `card` needs into `out`, refusing the rest."""
    kind = card[0]
    if kind == "h" or kind == "r":  # house, room:T
        out["target"] = _int_field(move, "target")
        if "room" in move:
            raise IllegalMove(f"playing {card} takes no room")
    elif kind == "m":  # moose:T
        out["target"] = _int_field(move, "target")
        out["room"] = _int_field(move, "room")
    elif kind == "d":  # door
        out["room"] = _int_field(move, "room")
        if "target" in move:
            raise IllegalMove("a door is played on your own room: it takes no target")
    else:  # trap
        raise IllegalMove("a trap is never played as an action; it answers a moose")


def _without(hand: list[str], card: str) -> list[str]:
    """A new hand: `hand` less one `card` (the old list may belong to an older state)."""
    out = hand.copy()
    out.remove(card)
    return out


def apply(state: State, move: Mapping[str, Any]) -> State:
    """The state after `move`, or raise `IllegalMove` saying why."""
    m = normalize_move(move)
    if state.over:
        raise IllegalMove("the game is over")
    actor = state.pending[0] if state.pending else state.turn
    if "seat" in m and m["seat"] != actor:
        raise IllegalMove(f"it is seat {actor}'s move, not seat {m['seat']}'s")
    action = m["action"]
    if state.pending:
        if action != "trap" and action != "allow":
            raise IllegalMove(f"seat {actor} must answer the moose: 'trap' or 'allow'")
        s = state._clone()
        _answer(s, action == "trap")
        _finish_action(s)
        return s
    if action == "play":
        s = _play(state, actor, m)
    elif action == "discard":
        card = m["card"]
        if card not in state.hands[actor]:
            raise IllegalMove(f"seat {actor} holds no {card}")
        if not state.drew:
            raise IllegalMove("no discarding in the end phase (the draw pile is empty): pass")
        if _has_play(state, actor):
            raise IllegalMove("a card can be played, so discarding is not allowed")
        s = state._clone()
        s.hands[actor] = _without(s.hands[actor], card)
        s.discard = [*s.discard, card]
    elif action == "pass":
        if state.drew:
            raise IllegalMove("passing is only allowed in the end phase; discard instead")
        if _has_play(state, actor):
            raise IllegalMove("a card can be played, so passing is not allowed")
        s = state._clone()
    else:
        raise IllegalMove(f"there is no moose to answer with '{action}'")
    if not s.pending:
        _finish_action(s)
    return s


def _play(state: State, seat: int, m: dict[str, Any]) -> State:
    """Check play `m` by `seat` against `state`; return the state with the card played."""
    card = m["card"]
    if card not in state.hands[seat]:
        raise IllegalMove(f"seat {seat} holds no {card}")
    kind = card[0]
    # normalize_move has given each kind of card the fields it needs (ints).
    target: Any = m.get("target")
    room: Any = m.get("room")
    owner = seat if target is None else target  # of the room named
    if target is not None and not (0 <= target < state.n and target != seat):
        if target == seat:
            raise IllegalMove("only a door may be played into your own house")
        raise IllegalMove(f"target {target} is not a seat (0 to {state.n - 1})")
    if room is not None and not 0 <= room < len(state.rooms[owner]):
        count = len(state.rooms[owner])
        raise IllegalMove(f"seat {owner} has no room {room} (it has {count} rooms)")
    _, why = _plays(state, seat, (card,), (target, room), True)
    if why is not None:
        rtype, cover = state.rooms[owner][room] if room is not None else ("", OPEN)
        raise IllegalMove(
            why.format(
                seat=seat,
                card=card,
                target=target,
                room=room,
                owner=owner,
                cover=_COVER_NAMES[cover],
                rtype=rtype,
            )
        )
    s = state._clone()
    if kind == "h":  # house
        s.has_house = s.has_house.copy()
        s.has_house[target] = True
    elif kind == "r":  # room:T
        s.rooms[target] = [*s.rooms[target], (card[5:], OPEN)]
    elif kind == "d":  # door
        s.rooms[seat] = _covered(s.rooms[seat], room, DOOR)
    elif "trap" in s.hands[target]:  # moose:T, and the victim may answer
        s.pending = (target, room, card)
    else:
        s.rooms[target] = _covered(s.rooms[target], room, MOOSE)
    s.hands[seat] = _without(s.hands[seat], card)
    return s


def _covered(rooms: list[tuple[str, int]], index: int, cover: int) -> list[tuple[str, int]]:
    """A new room list with room `index` given `cover`."""
    out = rooms.copy()
    out[index] = (out[index][0], cover)
    return out


def _answer(s: State, trap: bool) -> None:
    assert s.pending is not None
    victim, r, card = s.pending
    s.pending = None
    if trap:
        hand = _without(s.hands[victim], "trap")
        s.discard = [*s.discard, card, "trap"]
        if s.draw:
            hand.append(s.draw[-1])
            s.draw = s.draw[:-1]
        s.hands[victim] = hand
    else:
        s.rooms[victim] = _covered(s.rooms[victim], r, MOOSE)


def _finish_action(s: State) -> None:
    """End the current turn: decide whether the game is over, else start the next."""
    if not any(s.hands):
        s.over = True
        return
    if not s.draw:
        for k in range(s.n):
            if _has_play(s, k):
                break
        else:
            s.over = True  # nobody can play and nobody can draw
            return
    s.turn = (s.turn + 1) % s.n
    _start_turn(s)


# -- results ----------------------------------------------------------------------


def scores(state: State) -> list[int]:
    """Each seat's score: moose in its house plus moose cards in its hand."""
    out = []
    for rooms, hand in zip(state.rooms, state.hands, strict=True):
        score = 0
        for _, cover in rooms:
            if cover == MOOSE:
                score += 1
        for card in hand:
            if card[0] == "m":  # moose:T
                score += 1
        out.append(score)
    return out


def doors(state: State) -> list[int]:
    """Each seat's number of doors in its house (the tie-break)."""
    return [[cover for _, cover in rooms].count(DOOR) for rooms in state.rooms]


def winners(state: State) -> list[int]:
    """The winning seats (lowest score, then most doors); [] while the game goes on."""
    if not state.over:
        return []
    sc = scores(state)
    best = min(sc)
    tied = [k for k in range(state.n) if sc[k] == best]
    ds = doors(state)
    most = max(ds[k] for k in tied)
    return [k for k in tied if ds[k] == most]


# -- views ------------------------------------------------------------------------


def view(state: State, seat: int | None, houses: Any = None) -> dict[str, Any]:
    """What `seat` may see (RULES.md section 6); `None` is a spectator.

    `houses`: the value of its "houses", where the caller has made it already
    (the server packs each house once: a stand-in for the packed bytes).
    """
    if seat is not None and (
        isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < state.n
    ):
        raise ValueError(f"seat {seat!r} is not at this table")
    # Built with plain loops: bots, the server and `simulate` take a view at every
    # move, so this costs as much as the rules themselves.
    if houses is None:  # each as `house_view` makes it, inline: 7 % of a view's time
        names = _COVER_NAMES
        houses = []
        for has_house, rooms in zip(state.has_house, state.rooms, strict=True):
            room_views = []
            for rtype, cover in rooms:
                room_views.append({"type": rtype, "cover": names[cover]})
            houses.append({"house": has_house, "rooms": room_views})
    pending = state.pending
    v: dict[str, Any] = {
        "players": state.n,
        "dealer": state.dealer,
        "seat": seat,
        "turn": state.turn,
        "to_act": to_act(state),
        "phase": phase(state),
        "draw_pile": len(state.draw),
        "discard": list(state.discard),
        "houses": houses,
        "hand_sizes": [len(h) for h in state.hands],
        "pending": None
        if pending is None
        else {"seat": pending[0], "attacker": state.turn, "room": pending[1], "card": pending[2]},
        "over": state.over,
    }
    if seat is not None:
        v["hand"] = sorted(state.hands[seat])
    if state.over:
        v["scores"] = scores(state)
        v["winners"] = winners(state)
    return v


def house_view(has_house: bool, rooms: Iterable[tuple[str, int]]) -> dict[str, Any]:
    """One seat's house as a view shows it: its house card, and its rooms with their covers."""
    names = _COVER_NAMES
    room_views = []
    for rtype, cover in rooms:
        room_views.append({"type": rtype, "cover": names[cover]})
    return {"house": has_house, "rooms": room_views}


def cards_in_play(state: State) -> Iterable[str]:
    """Every card of the game wherever it lies (for invariant checks)."""
    yield from state.draw
    for h in state.hands:
        yield from h
    yield from state.discard
    for k in range(state.n):
        if state.has_house[k]:
            yield "house"
        for t, c in state.rooms[k]:
            yield f"room:{t}"
            if c == DOOR:
                yield "door"
    # A covered room carries its moose card, even after the game.
    for k in range(state.n):
        for t, c in state.rooms[k]:
            if c == MOOSE:
                yield f"moose:{t}"
    if state.pending:
        yield state.pending[2]
