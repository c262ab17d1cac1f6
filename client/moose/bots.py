"""Bots: players that choose a move from what one seat may see.

A bot is anything with ``choose(view, legal) -> move``. It is given the seat's
``rules.view(state, seat)`` (plain data: never the `State`, so it cannot look at
other hands or the draw pile) and the list of legal moves, and returns one of
them. Bots hold their own ``random.Random``; the same seed and the same views
give the same choices.

Public: `Bot`, `BOTS`, `make_bot`, `choose_timeout_move`, `play_game`; the bots
themselves live in moose.basic_bots (random, greedy, cautious) and moose.search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from moose import rules
from moose.basic_bots import Bot, CautiousBot, GreedyBot, Move, RandomBot, View
from moose.search import SearchBot

__all__ = [
    "BOTS",
    "SEARCHING",
    "Bot",
    "CautiousBot",
    "GreedyBot",
    "RandomBot",
    "choose_timeout_move",
    "make_bot",
    "play_game",
]


def _search_bot(seed: int | None = None) -> Bot:
    """The search bot (moose.search) with its default budget."""
    return SearchBot(seed)


BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "cautious": CautiousBot,
    "mcts": _search_bot,
}


# Bots that search: a few tenths of a second of CPU a move, which a server runs
# off its event loop.
SEARCHING: frozenset[str] = frozenset({"mcts"})


def make_bot(name: str, seed: int | None = None) -> Bot:
    """A new bot of the kind `name`, with its own random generator seeded by `seed`.

    The search bot takes a budget after a colon: "mcts:800" plays exactly 800
    playouts a move, with no time cap, so that a measurement does not depend on
    the machine's load; plain "mcts" stops at its time cap too.
    """
    kind, colon, budget = name.partition(":")
    if colon and kind == "mcts":
        if not budget.isdigit() or int(budget) < 1:
            raise ValueError(f"bad budget in {name!r}: playouts per move, e.g. mcts:400")
        return SearchBot(seed, iterations=int(budget), time_limit=math.inf)
    try:
        factory = BOTS[name]
    except KeyError:
        known = ", ".join(sorted(BOTS))
        raise ValueError(f"unknown bot {name!r} (known bots: {known}; mcts:N)") from None
    return factory(seed)


def choose_timeout_move(view: View, legal: list[Move]) -> Move:
    """The move played for a seat whose clock ran out: greedy's (`trap` whenever it can)."""
    return GreedyBot(seed=0).choose(view, legal)


def play_game(
    bots: Sequence[Bot],
    *,
    seed: int | str | None = None,
    dealer: int | None = None,
    stop_after: int | None = None,
) -> tuple[rules.State, list[Move]]:
    """Play one game, seat i moved by bots[i], to its end (or `stop_after` moves); return
    the state and the moves."""
    state = rules.new_game(len(bots), seed=seed, dealer=dealer)
    moves: list[Move] = []
    while not state.over and (stop_after is None or len(moves) < stop_after):
        seat = rules.to_act(state)
        assert seat is not None
        legal = rules.legal_moves(state)
        move = bots[seat].choose(rules.view(state, seat), legal)
        state = rules.apply(state, move)
        moves.append(move)
    return state, moves
