"""Tests for moose.bots: legal choices, no peeking, the greedy habits, strength."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from moose import rules, search
from moose.bots import BOTS, GreedyBot, RandomBot, choose_timeout_move, make_bot, play_game
from moose.rules import CARDS, State

Move = dict[str, Any]


@pytest.fixture(autouse=True)
def small_search_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search bot plays these many games on a few playouts a move, not its default."""
    monkeypatch.setattr(search, "ITERATIONS", 2)
    monkeypatch.setattr(search, "TIME_LIMIT", math.inf)  # seeded games replay alike


class Spy:
    """Wraps a bot and keeps every (view, legal, choice) it was given."""

    def __init__(self, bot: Any, check: Callable[[dict, list[Move], Move], None] | None = None):
        self.bot = bot
        self.name = bot.name
        self.check = check
        self.calls: list[tuple[dict, list[Move], Move]] = []

    def choose(self, view: dict, legal: list[Move]) -> Move:
        move = self.bot.choose(view, legal)
        self.calls.append((view, legal, move))
        if self.check:
            self.check(view, legal, move)
        return move


def _contains_state(value: Any) -> bool:
    if isinstance(value, State):
        return True
    if isinstance(value, dict):
        return any(_contains_state(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_contains_state(v) for v in value)
    return False


def _spies(names: list[str], seed: int, check: Callable | None = None) -> list[Spy]:
    return [Spy(make_bot(name, seed=seed * 10 + k), check) for k, name in enumerate(names)]


@pytest.mark.parametrize("players", range(rules.MIN_PLAYERS, rules.MAX_PLAYERS + 1))
@pytest.mark.parametrize(
    # The search bot's own tests (test_search.py) play fewer games in the fast lane.
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n == "mcts" else n for n in sorted(BOTS)],
)
def test_bot_always_returns_one_of_the_legal_moves(name: str, players: int) -> None:
    def check(view: dict, legal: list[Move], move: Move) -> None:
        assert move in legal

    for game in range(15):
        spies = _spies([name] * players, game, check)
        state, moves = play_game(spies, seed=f"legal-{name}-{players}-{game}")
        assert state.over
        assert sum(len(s.calls) for s in spies) == len(moves)


@pytest.mark.parametrize("players", [2, 4, 6])
def test_mixed_table_plays_to_the_end(players: int) -> None:
    names = [sorted(BOTS)[k % len(BOTS)] for k in range(players)]
    for game in range(10):
        state, _ = play_game(_spies(names, game), seed=game)
        assert rules.is_over(state)
        assert rules.winners(state)


def test_bots_get_exactly_the_seats_view_and_no_state() -> None:
    spies = _spies(["greedy", "random", "cautious"], seed=3)
    final, moves = play_game(spies, seed=99)
    # Replay the game and check each bot got its own seat's view, as plain data.
    state = rules.new_game(3, seed=99)
    calls = {id(s): iter(s.calls) for s in spies}
    for move in moves:
        seat = rules.to_act(state)
        assert seat is not None
        view, legal, chosen = next(calls[id(spies[seat])])
        assert not _contains_state(view) and not _contains_state(legal)
        assert json.loads(json.dumps(view)) == view
        assert view == rules.view(state, seat)
        assert legal == rules.legal_moves(state)
        assert chosen == move
        state = rules.apply(state, move)
    assert state == final


def test_greedy_ignores_what_its_view_does_not_show() -> None:
    # Same view, different hidden cards (opponent's hand and draw pile swapped
    # around): greedy with the same seed must choose the same move.
    state = rules.new_game(2, seed=5, dealer=1)
    hidden = state.copy()
    pool = hidden.hands[1] + hidden.draw
    pool.reverse()
    hidden.hands[1], hidden.draw = pool[:4], pool[4:]
    assert rules.view(hidden, 0) == rules.view(state, 0)
    a = GreedyBot(seed=1).choose(rules.view(state, 0), rules.legal_moves(state))
    b = GreedyBot(seed=1).choose(rules.view(hidden, 0), rules.legal_moves(hidden))
    assert a == b


def test_greedy_answers_a_moose_with_trap_whenever_it_can() -> None:
    answers = 0

    def check(view: dict, legal: list[Move], move: Move) -> None:
        nonlocal answers
        if view["phase"] == "answer":
            answers += 1
            assert move == {"action": "trap"}

    for game in range(60):
        play_game(_spies(["greedy"] * 4, game, check), seed=f"trap-{game}")
    assert answers > 0, "no trap answer came up; pick other seeds"


def test_greedy_never_discards_a_trap_or_keeps_a_moose_it_could_discard() -> None:
    def check(view: dict, legal: list[Move], move: Move) -> None:
        if move["action"] != "discard":
            return
        cards = {m["card"] for m in legal}
        if any(c.startswith("moose:") for c in cards):
            assert move["card"].startswith("moose:")
        if cards - {"trap"}:
            assert move["card"] != "trap"

    for game in range(60):
        bots = [Spy(GreedyBot(seed=game), check), RandomBot(seed=game), RandomBot(seed=-game)]
        play_game(bots, seed=f"discard-{game}")


def _deck(dealt: list[list[str]], draw: list[str]) -> list[str]:
    """Seat 0 plays first (2 players, dealer 1); the rest of the cards follow `draw`."""
    deck = [dealt[k][rnd] for rnd in range(4) for k in range(2)] + draw
    rest = Counter(CARDS) - Counter(deck)
    # Traps last, so nobody in the scenario can answer a moose.
    return deck + sorted(rest.elements(), key=lambda c: (c == "trap", c))


def test_greedy_shuts_its_open_room_with_a_door() -> None:
    deck = _deck(
        [
            ["house", "room:kitchen", "room:bedroom", "room:bathroom"],
            ["door", "house", "room:living", "room:bedroom"],
        ],
        ["door", "room:living", "house", "room:bathroom"],
    )
    state = rules.new_game(2, deck=deck, dealer=1)
    for move in (
        {"action": "play", "card": "house", "target": 1},
        {"action": "play", "card": "house", "target": 0},
        {"action": "play", "card": "room:kitchen", "target": 1},
    ):
        state = rules.apply(state, move)
    legal = rules.legal_moves(state)
    door = {"action": "play", "card": "door", "room": 0}
    assert door in legal and len(legal) > 1
    for seed in range(10):
        assert GreedyBot(seed=seed).choose(rules.view(state, 1), legal) == door


def test_greedy_plays_a_moose_on_the_leader() -> None:
    # Seat 0 holds moose:kitchen; seats 1 and 2 each have a house and an open
    # kitchen, but seat 2 already has a moose in its house: seat 1 leads.
    v = {
        "players": 3,
        "seat": 0,
        "hand": ["house", "moose:kitchen", "room:living", "room:living"],
        "hand_sizes": [4, 4, 4],
        "discard": ["trap", "trap", "trap"],
        "houses": [
            {"house": False, "rooms": []},
            {"house": True, "rooms": [{"type": "kitchen", "cover": None}]},
            {
                "house": True,
                "rooms": [
                    {"type": "kitchen", "cover": None},
                    {"type": "bedroom", "cover": "moose"},
                ],
            },
        ],
    }
    legal: list[Move] = [
        {"action": "play", "card": "house", "target": 0},
        {"action": "play", "card": "moose:kitchen", "target": 1, "room": 0},
        {"action": "play", "card": "moose:kitchen", "target": 2, "room": 0},
        {"action": "play", "card": "room:living", "target": 1},
        {"action": "play", "card": "room:living", "target": 2},
    ]
    assert GreedyBot(seed=0).choose(v, legal) == legal[1]


def test_choose_timeout_move_traps_and_otherwise_plays_greedy() -> None:
    answer = [{"action": "allow"}, {"action": "trap"}]
    assert choose_timeout_move({"phase": "answer"}, answer) == {"action": "trap"}
    state = rules.new_game(4, seed=11)
    for _ in range(20):
        seat = rules.to_act(state)
        assert seat is not None
        view, legal = rules.view(state, seat), rules.legal_moves(state)
        move = choose_timeout_move(view, legal)
        assert move == GreedyBot(seed=0).choose(view, legal)
        state = rules.apply(state, move)


def test_make_bot_rejects_unknown_names_and_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown bot 'clever'") as err:
        make_bot("clever")
    for name in BOTS:
        assert name in str(err.value)
    assert isinstance(make_bot("random", seed=1), RandomBot)


def test_bots_are_deterministic_for_a_seed() -> None:
    for name in BOTS:
        a = play_game([make_bot(name, seed=k) for k in range(4)], seed=7)
        b = play_game([make_bot(name, seed=k) for k in range(4)], seed=7)
        assert a[1] == b[1]
        assert a[0] == b[0]


def test_bots_refuse_an_empty_list_of_moves() -> None:
    for name in BOTS:
        with pytest.raises(ValueError):
            make_bot(name, seed=0).choose({}, [])


def test_greedy_clearly_beats_random_over_400_seeded_games() -> None:
    wins = Counter[str]()
    for game in range(400):
        seat = game % 4  # greedy takes every seat equally often
        names = ["random"] * 4
        names[seat] = "greedy"
        bots = [make_bot(n, seed=game * 10 + k) for k, n in enumerate(names)]
        state, _ = play_game(bots, seed=f"match-{game}")
        for k in rules.winners(state):
            wins[names[k]] += 1
    greedy = wins["greedy"] / 400
    random_seat = wins["random"] / 1200
    # Seeded, so this never flakes. Over 2,000 games greedy wins 43-47% and a
    # random seat 21-22% (shared wins count for each winner), against a 25%
    # baseline; these seeds gave 40% and 24%.
    assert greedy >= 0.35, (greedy, random_seat)
    assert greedy >= 1.5 * random_seat, (greedy, random_seat)
