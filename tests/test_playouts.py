"""Randomised playouts: thousands of seeded games, invariants checked after every move.

Cheap invariants run on every game; the costly ones (every legal move applies,
near-miss moves are refused, views leak nothing) run on a share of the games.
Every game is also turned into a record and replayed.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from moose import record as records
from moose import rules, search
from moose.bots import BOTS, make_bot
from moose.rules import CARD_CODES, CARDS, IllegalMove, State

Move = dict[str, Any]
Chooser = Callable[[State, list[Move]], Move]

GAMES_PER_SEAT_COUNT = 400  # random games for each of 2..6 seats
DEEP_EVERY = 10  # every n-th game also gets the costly checks
BOT_GAMES = 30  # games per bot kind and seat count
ALL_CARDS = Counter(CARDS)


@pytest.fixture(autouse=True)
def small_search_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search bot plays these many games on a few playouts a move, not its default."""
    monkeypatch.setattr(search, "ITERATIONS", 2)
    monkeypatch.setattr(search, "TIME_LIMIT", math.inf)  # seeded games replay alike


def move_bound(players: int) -> int:
    """Most moves a game can take: 58 cards leave hands at most once each, at most
    20 moose get an answer, and fewer than `players` passes come in a row."""
    return (len(CARDS) + 20) * players


# -- cheap invariants (every move of every game) ---------------------------------------


def check_state(s: State) -> None:
    """Invariants of any position."""
    assert Counter(rules.cards_in_play(s)) == ALL_CARDS
    sizes = [len(h) for h in s.hands]
    phase = rules.phase(s)
    if phase == "normal":
        assert sizes == [5 if k == s.turn else 4 for k in range(s.n)]
    elif phase == "answer" and s.drew:
        assert sizes == [4] * s.n
    else:
        assert max(sizes) <= 4 and not s.draw
    assert all(sum(1 for _, c in rs if c == rules.OPEN) <= 3 for rs in s.rooms)
    if s.pending:
        victim, room, card = s.pending
        assert victim != s.turn and "trap" in s.hands[victim] and s.has_house[victim]
        assert s.rooms[victim][room] == (card[6:], rules.OPEN)
    if s.over:
        assert rules.legal_moves(s) == [] and rules.to_act(s) is None
        assert not any(s.hands) or (not s.draw and not any(_plays(s, k) for k in range(s.n)))
    elif phase == "end":
        assert any(_plays(s, k) for k in range(s.n)), "an end-phase turn with nothing to play"


def _plays(s: State, seat: int) -> list[Move]:
    t = s.copy()
    t.turn, t.pending, t.drew = seat, None, False
    return [m for m in rules.legal_moves(t) if m["action"] == "play"]


def check_deal(s: State) -> None:
    """Four rounds, one card at a time from the first player; the first player draws."""
    n, first = s.n, (s.dealer + 1) % s.n
    assert rules.to_act(s) == first
    for k in range(n):
        dealt = [s.deck[r * n + (k - first) % n] for r in range(rules.HAND_SIZE)]
        assert s.hands[k][:4] == dealt
    assert s.hands[first][4] == s.deck[4 * n]


def check_step(before: State, move: Move, after: State) -> None:
    """Invariants of one move: turn order, the card played leaves the hand, piles."""
    assert len(after.draw) <= len(before.draw)
    assert after.discard[: len(before.discard)] == before.discard
    if not after.over:
        # A moose waiting for its answer keeps the turn; anything else passes it left.
        expected = before.turn if after.pending else (before.turn + 1) % before.n
        assert after.turn == expected
    if move["action"] == "trap":
        assert after.discard[len(before.discard) :] == [before.pending[2], "trap"]
    if move["action"] in ("play", "discard"):
        seat = before.turn
        gone = Counter(before.hands[seat]) - Counter(after.hands[seat])
        assert gone[move["card"]] >= 1
    if move["action"] == "discard":
        assert after.discard[len(before.discard)] == move["card"]


# -- costly invariants (every move of some games) -------------------------------------


def check_every_legal_move_applies(s: State, legal: list[Move]) -> None:
    """Each listed move applies, leaves its argument alone, and the list is duplicate-free."""
    snapshot = s.to_dict()
    for m in legal:
        rules.apply(s, m)
    assert s.to_dict() == snapshot
    assert len({json.dumps(m, sort_keys=True) for m in legal}) == len(legal)


def near_misses(s: State, legal: list[Move], rng: random.Random) -> Iterator[Move]:
    """Moves one step away from legal ones, plus a sample of every shape of move."""
    n, actor = s.n, rules.to_act(s)
    most_rooms = max(len(rs) for rs in s.rooms)
    for m in legal:
        for key, delta in (("target", 1), ("target", -1), ("room", 1), ("room", -1)):
            if key in m:
                yield {**m, key: m[key] + delta}
        if "card" in m:
            yield {**m, "card": rng.choice(sorted(CARD_CODES))}
        yield {**m, "seat": (actor + 1) % n}  # type: ignore[operator]
    yield {"action": "pass"}
    yield {"action": "trap"}
    yield {"action": "allow"}
    for card in CARD_CODES:
        yield {"action": "discard", "card": card}
    for _ in range(12):
        card = rng.choice(sorted(CARD_CODES - {"trap"}))
        move: Move = {"action": "play", "card": card}
        if card != "door":
            move["target"] = rng.randrange(-1, n + 1)
        if card == "door" or card.startswith("moose:"):
            move["room"] = rng.randrange(-1, most_rooms + 2)
        yield move


def check_only_legal_moves_apply(s: State, legal: list[Move], rng: random.Random) -> None:
    """A well-formed move applies exactly when it is in the legal list."""
    for m in near_misses(s, legal, rng):
        core = {k: v for k, v in m.items() if k != "seat"}
        right_seat = m.get("seat", rules.to_act(s)) == rules.to_act(s)
        expected = right_seat and core in legal
        try:
            rules.apply(s, m)
        except IllegalMove as exc:
            assert not expected, f"legal move {m} refused: {exc}"
            assert str(exc)
        else:
            assert expected, f"illegal move {m} accepted"


def check_views_hide_secrets(s: State, rng: random.Random) -> None:
    """A view is the same whatever the other hands, the draw order and the deck are."""
    for seat in [None, *range(s.n)]:
        d = s.to_dict()
        others = [k for k in range(s.n) if k != seat]
        hidden = [c for k in others for c in d["hands"][k]] + d["draw"]
        rng.shuffle(hidden)
        for k in others:
            size = len(d["hands"][k])
            d["hands"][k], hidden = hidden[:size], hidden[size:]
        d["draw"] = hidden
        d["deck"] = list(reversed(d["deck"]))
        twin = State.from_dict(d)
        assert rules.view(twin, seat) == rules.view(s, seat)
        v = rules.view(s, seat)
        assert v["hand_sizes"] == [len(h) for h in s.hands]
        if seat is None:
            assert "hand" not in v
        else:
            assert v["hand"] == sorted(s.hands[seat])


def check_result(s: State) -> None:
    """Scores and winners counted again from the public view of the end."""
    v = rules.view(s, None)
    scores = [
        sum(r["cover"] == "moose" for r in v["houses"][k]["rooms"])
        + sum(c.startswith("moose:") for c in s.hands[k])
        for k in range(s.n)
    ]
    doors = [sum(r["cover"] == "door" for r in h["rooms"]) for h in v["houses"]]
    low = [k for k in range(s.n) if scores[k] == min(scores)]
    best = [k for k in low if doors[k] == max(doors[j] for j in low)]
    assert v["scores"] == scores and v["winners"] == best


def check_round_trip(s: State) -> None:
    """`to_dict` survives JSON and `from_dict` gives back an equal state."""
    back = State.from_dict(json.loads(json.dumps(s.to_dict())))
    assert back == s
    assert back.to_dict() == s.to_dict()
    assert rules.legal_moves(back) == rules.legal_moves(s)


# -- the playout driver ---------------------------------------------------------------


def playout(players: int, seed: int, choose: Chooser, *, deep: bool) -> None:
    """Play one game with `choose`, checking invariants after every move and the record."""
    rng = random.Random(f"checks-{seed}")
    state = rules.new_game(players, seed=seed)
    start, moves, passes = state, [], 0
    check_deal(state)
    check_state(state)
    while not state.over:
        legal = rules.legal_moves(state)
        assert legal
        if deep:
            check_every_legal_move_applies(state, legal)
            check_only_legal_moves_apply(state, legal, rng)
            check_views_hide_secrets(state, rng)
            check_round_trip(state)
        move = choose(state, legal)
        assert move in legal
        after = rules.apply(state, move)
        check_step(state, move, after)
        check_state(after)
        passes = passes + 1 if move["action"] == "pass" else 0
        assert passes < players, "a whole round of passes, yet the game went on"
        moves.append(move)
        assert len(moves) <= move_bound(players)
        state = after
    check_result(state)
    result = records.replay(records.loads(records.dumps(records.from_game(start, moves))))
    assert result.ok and result.applied == len(moves)
    assert result.state == state


def random_chooser(seed: int) -> Chooser:
    """Uniformly random among the legal moves, from its own seeded generator."""
    rng = random.Random(seed)
    return lambda state, legal: rng.choice(legal)


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_random_playouts_keep_every_invariant(players: int) -> None:
    for seed in range(GAMES_PER_SEAT_COUNT):
        playout(players, seed, random_chooser(seed), deep=seed % DEEP_EVERY == 0)


@pytest.mark.slow
@pytest.mark.parametrize("bot", sorted(BOTS))
def test_bot_playouts_keep_every_invariant(bot: str) -> None:
    for players in range(rules.MIN_PLAYERS, rules.MAX_PLAYERS + 1):
        for seed in range(BOT_GAMES):
            bots = [make_bot(bot, seed=seed * 10 + k) for k in range(players)]

            def choose(state: State, legal: list[Move], bots: list[Any] = bots) -> Move:
                seat = rules.to_act(state)
                return bots[seat].choose(rules.view(state, seat), legal)  # type: ignore[index]

            playout(players, 10_000 + seed, choose, deep=seed % DEEP_EVERY == 0)


@pytest.mark.slow  # about 2 s: many whole games of the search bot
def test_mixed_bot_tables_keep_every_invariant() -> None:
    names = sorted(BOTS)
    for seed in range(40):
        players = 2 + seed % 5
        lineup = [names[(seed + k) % len(names)] for k in range(players)]
        bots = [make_bot(name, seed=seed + k) for k, name in enumerate(lineup)]

        def choose(state: State, legal: list[Move], bots: list[Any] = bots) -> Move:
            seat = rules.to_act(state)
            return bots[seat].choose(rules.view(state, seat), legal)  # type: ignore[index]

        playout(players, 20_000 + seed, choose, deep=seed % 4 == 0)


def test_playouts_reach_every_kind_of_move() -> None:
    # Guards the playouts themselves: were a kind of move never chosen, the
    # invariants above would never have been checked on it.
    seen: Counter[str] = Counter()
    for seed in range(200):
        rng = random.Random(seed)
        state = rules.new_game(2 + seed % 5, seed=seed)
        while not state.over:
            move = rng.choice(rules.legal_moves(state))
            kind = move["action"] if move["action"] != "play" else move["card"].split(":")[0]
            seen[kind] += 1
            state = rules.apply(state, move)
    assert set(seen) == {"house", "room", "moose", "door", "discard", "pass", "trap", "allow"}
