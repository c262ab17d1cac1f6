"""Tests for moose.search: the search bot plays legally and sees only its seat's view."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from typing import Any

import pytest

from moose import rules, search
from moose.bots import GreedyBot, RandomBot, make_bot, play_game
from moose.playout import Greedy
from moose.search import SearchBot, determinize, unseen

Move = dict[str, Any]
SMALL = 12  # playouts a move: the choice logic is the same at any budget
# Tests that compare two searches give them no time cap: a loaded machine must not
# cut one short and not the other.


def _positions(players: int, seed: int) -> Iterator[rules.State]:
    """Every position of one random game, the first included."""
    rng = random.Random(seed)
    state = rules.new_game(players, seed=seed)
    while not state.over:
        yield state
        state = rules.apply(state, rng.choice(rules.legal_moves(state)))


def _hidden(state: rules.State, seat: int) -> list[str]:
    """The cards `seat` cannot see in `state`: the other hands and the draw pile."""
    cards = list(state.draw)
    for k, hand in enumerate(state.hands):
        if k != seat:
            cards.extend(hand)
    return sorted(cards)


def _shuffled_hidden(state: rules.State, seat: int, seed: int) -> rules.State:
    """`state` with every card `seat` cannot see dealt again at random.

    A seat answering a moose keeps a trap: the answer step shows it holds one.
    """
    other = state.copy()
    rng = random.Random(seed)
    cards = _hidden(state, seat)
    if state.pending and state.pending[0] != seat:
        cards.remove("trap")
    rng.shuffle(cards)
    for k in range(state.n):
        if k == seat:
            continue
        size = len(state.hands[k])
        hand = ["trap"] if state.pending and state.pending[0] == k else []
        hand += [cards.pop() for _ in range(size - len(hand))]
        other.hands[k] = hand
    other.draw = cards
    return other


@pytest.mark.parametrize("players", range(rules.MIN_PLAYERS, rules.MAX_PLAYERS + 1))
def test_unseen_is_exactly_the_hidden_cards_and_worlds_give_the_same_view(players: int) -> None:
    rng = random.Random(players)
    checked = 0
    for seed in range(6):
        for state in _positions(players, seed):
            seat = rules.to_act(state)
            assert seat is not None
            view = rules.view(state, seat)
            pool = unseen(view)
            assert pool == _hidden(state, seat)
            world = determinize(view, pool, rng)
            assert rules.view(world, seat) == view
            assert rules.legal_moves(world) == rules.legal_moves(state)
            checked += 1
    assert checked > 100


def test_a_seat_answering_a_moose_is_dealt_a_trap_in_every_world() -> None:
    answers = 0
    for seed in range(40):
        for state in _positions(4, seed):
            if not state.pending:
                continue
            attacker = state.turn
            view = rules.view(state, attacker)
            for k in range(5):
                world = determinize(view, unseen(view), random.Random(k))
                assert "trap" in world.hands[state.pending[0]]
            answers += 1
    assert answers > 0, "no trap answer came up; pick other seeds"


def test_search_is_a_function_of_the_view_only() -> None:
    # Two states that differ only in cards the seat cannot see give the same
    # view, so the same seed must give the same playout results and move.
    compared = 0
    for seed in range(12):
        for step, state in enumerate(_positions(3, seed)):
            seat = rules.to_act(state)
            assert seat is not None
            legal = rules.legal_moves(state)
            if step % 7 or len(legal) < 2 or state.pending:
                continue
            other = _shuffled_hidden(state, seat, seed * 1000 + step)
            assert _hidden(other, seat) == _hidden(state, seat)
            assert other.hands != state.hands or other.draw != state.draw
            view = rules.view(state, seat)
            assert rules.view(other, seat) == view
            a = SearchBot(seed, SMALL, math.inf).search(view, legal)
            b = SearchBot(seed, SMALL, math.inf).search(rules.view(other, seat), legal)
            assert a == b
            compared += 1
    assert compared > 10


def test_search_bot_is_given_plain_data_only() -> None:
    # Whatever play_game hands a bot: the view is JSON data with no State in it.
    given: list[tuple[Any, Any]] = []

    class Spy(SearchBot):
        def choose(self, view: dict[str, Any], legal: list[Move]) -> Move:
            given.append((json.loads(json.dumps(view)) == view, json.dumps(legal)))
            return super().choose(view, legal)

    play_game([Spy(1, iterations=SMALL), RandomBot(2), RandomBot(3)], seed=4)
    assert given and all(plain for plain, _ in given)


@pytest.mark.parametrize("players", range(rules.MIN_PLAYERS, rules.MAX_PLAYERS + 1))
def test_search_bot_only_ever_returns_a_legal_move(players: int) -> None:
    for game in range(4):
        state = rules.new_game(players, seed=f"search-{players}-{game}")
        bots: list[Any] = [SearchBot(game * 10 + k, iterations=SMALL) for k in range(2)]
        bots += [RandomBot(game * 10 + k) for k in range(2, players)]
        while not state.over:
            seat = rules.to_act(state)
            assert seat is not None
            legal = rules.legal_moves(state)
            move = bots[seat].choose(rules.view(state, seat), legal)
            assert move in legal
            state = rules.apply(state, move)


def test_search_bot_traps_a_moose_whenever_it_can() -> None:
    answer = [{"action": "allow"}, {"action": "trap"}]
    assert SearchBot(0).choose({"phase": "answer"}, answer) == {"action": "trap"}


def test_same_seed_same_game() -> None:
    a = play_game([SearchBot(k, SMALL, math.inf) for k in range(3)], seed=9)
    b = play_game([SearchBot(k, SMALL, math.inf) for k in range(3)], seed=9)
    assert a[1] == b[1]


def test_make_bot_takes_a_budget_after_a_colon() -> None:
    bot = make_bot("mcts:40", seed=1)
    assert isinstance(bot, SearchBot)
    assert (bot.iterations, bot.time_limit) == (40, math.inf)
    default = make_bot("mcts", seed=1)
    assert isinstance(default, SearchBot)
    assert (default.iterations, default.time_limit) == (search.ITERATIONS, search.TIME_LIMIT)
    for bad in ("mcts:0", "mcts:x", "mcts:", "greedy:5"):
        with pytest.raises(ValueError):
            make_bot(bad)


def test_search_bot_refuses_an_empty_list_of_moves() -> None:
    with pytest.raises(ValueError):
        SearchBot(0).choose({}, [])


@pytest.mark.parametrize("players", [2, 4, 6])
def test_the_playout_policy_chooses_as_greedy_does(players: int) -> None:
    compared = 0
    for seed in range(8):
        for step, state in enumerate(_positions(players, seed)):
            seat = rules.to_act(state)
            assert seat is not None
            legal = rules.legal_moves(state)
            expected = GreedyBot(seed=step).choose(rules.view(state, seat), legal)
            assert Greedy(random.Random(step)).choose(state, legal) == expected
            compared += len(legal) > 1
    assert compared > 50
