"""The search bot: determinized Monte Carlo search over the rules engine.

`SearchBot.choose(view, legal)` gets what every bot gets: one seat's view and
its legal moves, never the `State`. From the view alone it lists the cards it
cannot see (`unseen`: the 58 cards less its hand, the discard pile, the cards on
the table and a moose waiting for an answer) and deals them at random into the
other hands and the draw pile (`determinize`): a world that gives exactly the
same view. In each world it plays each candidate move, then plays the game out
with greedy's heuristic for every seat (`moose.playout`); the reward is its
share of the win plus a little for its score margin.

How the playouts are spent: sequential halving over paired playouts. Every
candidate is played out in the same worlds with the same playout randomness, so
two moves are compared on the same cards, and after each round the worse half
is dropped. Flat (no tree below the root): a move gets a few hundred playouts,
too few to grow a useful tree, and the other seats' moves hang on hands the bot
cannot see.

Budget: `iterations` playouts per move (the same seed and view give the same
move), cut short by `time_limit` seconds should the machine be slow (`math.inf`:
never, for measurements and tests that must not depend on the machine's load).
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Sequence

from moose import rules
from moose.basic_bots import Move, View
from moose.playout import Greedy

__all__ = ["ITERATIONS", "MCTS_COST", "TIME_LIMIT", "SearchBot", "determinize", "unseen"]

ITERATIONS = 200  # playouts per move
TIME_LIMIT = 0.5  # seconds: a cap for a loaded machine, not the budget
# What the search bot costs, as every help text says it: BENCHMARKS.md's "The
# search bot" measured 98 ms (2 seats) and 141 ms (4 seats) of CPU a move.
MCTS_COST = "about 0.1-0.15 s of CPU a move, never over 0.5 s"
MARGIN = 0.02  # reward per point of score margin, beside 1 for a win

_COVERS = {None: rules.OPEN, "moose": rules.MOOSE, "door": rules.DOOR}


def unseen(view: View) -> list[str]:
    """The cards `view`'s seat cannot see: other hands and the draw pile, sorted."""
    left = Counter(rules.CARDS)
    left.subtract(view["hand"])
    left.subtract(view["discard"])
    for house in view["houses"]:
        if house["house"]:
            left["house"] -= 1
        for room in house["rooms"]:
            left[f"room:{room['type']}"] -= 1
            if room["cover"] == "moose":
                left[f"moose:{room['type']}"] -= 1
            elif room["cover"] == "door":
                left["door"] -= 1
    pending = view["pending"]
    if pending is not None:
        left[pending["card"]] -= 1
    if any(count < 0 for count in left.values()):
        raise ValueError("the view shows more of some card than the deck holds")
    return sorted(left.elements())


def determinize(view: View, pool: Sequence[str], rng: random.Random) -> rules.State:
    """A full game state that gives exactly `view`, the `pool` cards dealt at random.

    A seat answering a moose in the view must hold a trap; it gets one first.
    """
    me, n = view["seat"], view["players"]
    cards = list(pool)
    rng.shuffle(cards)
    hands: list[list[str]] = [[] for _ in range(n)]
    hands[me] = list(view["hand"])
    pending = view["pending"]
    if pending is not None and pending["seat"] != me:
        cards.remove("trap")  # the answer step itself shows the victim holds one
        hands[pending["seat"]].append("trap")
    for seat in range(n):
        if seat != me:
            need = view["hand_sizes"][seat] - len(hands[seat])
            hands[seat].extend(cards[len(cards) - need :])
            del cards[len(cards) - need :]
    if len(cards) != view["draw_pile"]:
        raise ValueError("the view's hand sizes and draw pile do not add up to the unseen cards")
    return rules.State.from_dict(
        {
            "n": n,
            "dealer": view["dealer"],
            "deck": [],  # the deal is not known, and the rules never look back at it
            "draw": cards,
            "hands": hands,
            "has_house": [h["house"] for h in view["houses"]],
            "rooms": [
                [(r["type"], _COVERS[r["cover"]]) for r in h["rooms"]] for h in view["houses"]
            ],
            "discard": view["discard"],
            "turn": view["turn"],
            "drew": view["phase"] == "normal",
            "pending": None
            if pending is None
            else (pending["seat"], pending["room"], pending["card"]),
            "over": False,
        }
    )


class SearchBot:
    """Determinized Monte Carlo search with greedy playouts; see the module docstring."""

    name = "mcts"

    def __init__(
        self,
        seed: int | None = None,
        iterations: int | None = None,
        time_limit: float | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        # Read here, not bound at definition: tests play many games on a small budget.
        self.iterations = ITERATIONS if iterations is None else iterations
        self.time_limit = TIME_LIMIT if time_limit is None else time_limit  # math.inf: no cap
        # The playout policy, for every seat: greedy draws on its own generator.
        self.policy = Greedy(random.Random(self.rng.getrandbits(32)))

    def choose(self, view: View, legal: list[Move]) -> Move:
        """The legal move with the best mean playout reward (a trap whenever it can)."""
        if not legal:
            raise ValueError("no legal move to choose from")
        if len(legal) == 1:
            return legal[0]
        for move in legal:
            if move["action"] == "trap":
                return move  # a moose kept out always beats one let in
        means = self.search(view, legal)
        return legal[means.index(max(means))]

    def search(self, view: View, legal: list[Move]) -> list[float]:
        """Each legal move's mean playout reward (-1 for moves dropped early).

        Sequential halving over paired playouts: each round deals fresh worlds
        and plays every move still in the running out in each of them, with the
        same playout randomness, so moves are compared on the same cards; then
        the worse half is dropped. Iterations count playouts.
        """
        pool = unseen(view)
        me = view["seat"]
        total = [0.0] * len(legal)
        played = [0] * len(legal)
        running = list(range(len(legal)))
        rounds = max(1, math.ceil(math.log2(len(legal))))
        budget = self.iterations
        deadline = time.perf_counter() + self.time_limit
        for r in range(rounds):
            worlds = max(1, budget // ((rounds - r) * len(running)))
            for _ in range(worlds):
                world = determinize(view, pool, self.rng)
                seed = self.rng.getrandbits(32)
                for i in running:
                    self.policy.rng.seed(seed)
                    total[i] += self._playout(rules.apply(world, legal[i]), me)
                    played[i] += 1
                budget -= len(running)
                if time.perf_counter() > deadline:
                    break
            running.sort(key=lambda i: total[i] / played[i], reverse=True)
            if budget <= 0 or time.perf_counter() > deadline:
                running = running[:1]
                break
            running = running[: max(1, (len(running) + 1) // 2)]
        means = [-1.0] * len(legal)
        means[running[0]] = total[running[0]] / played[running[0]]
        return means

    def _playout(self, state: rules.State, me: int) -> float:
        """Play `state` out with the greedy policy; `me`'s share of the win."""
        policy = self.policy
        while not state.over:
            state = rules.apply(state, policy.choose(state, rules.legal_moves(state)))
        won = rules.winners(state)
        share = 1.0 / len(won) if me in won else 0.0
        # The margin over the best other seat tells apart moves that win (or
        # lose) the same worlds: less noise per playout.
        sc = rules.scores(state)
        margin = min(sc[k] for k in range(state.n) if k != me) - sc[me]
        return share + MARGIN * margin
