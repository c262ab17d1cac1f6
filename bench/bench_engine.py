"""Benchmark of the rules engine and the bots, on one core.

    python bench/bench_engine.py [--games 500] [--runs 5] [--match 2000] [--seed 1]

Prints (1) games per second of full 4-player games between random bots, the
median of several runs, each game calling `legal_moves`, `view` and `apply` at
every move exactly as `moose simulate` does; and (2) the greedy bot's win rate
against three random bots, next to the 25% a seat would get by chance. The
greedy bot takes each seat equally often.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import Counter

from moose import rules
from moose.bots import make_bot, play_game

PLAYERS = 4


def pin_to_one_core() -> str:
    """Run on a single CPU when the OS allows it; say which."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity here)"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu}"


def games_per_second(games: int, seed: int) -> float:
    """Play `games` random-bot games in a row and return their rate."""
    start = time.perf_counter()
    for g in range(games):
        bots = [make_bot("random", seed=seed + g * PLAYERS + k) for k in range(PLAYERS)]
        play_game(bots, seed=seed + g)
    return games / (time.perf_counter() - start)


def greedy_match(games: int, seed: int) -> tuple[float, float, float, float]:
    """Greedy against three random bots: win rates and shares of greedy and of a random seat."""
    wins: Counter[str] = Counter()
    shares: dict[str, float] = {"greedy": 0.0, "random": 0.0}
    for g in range(games):
        names = ["random"] * PLAYERS
        names[g % PLAYERS] = "greedy"  # every seat in turn: no seat advantage
        bots = [make_bot(name, seed=seed + g * PLAYERS + k) for k, name in enumerate(names)]
        state, _ = play_game(bots, seed=f"{seed}/{g}")
        won = rules.winners(state)
        for k in won:
            wins[names[k]] += 1
            shares[names[k]] += 1 / len(won)
    n_random = games * (PLAYERS - 1)
    return (
        wins["greedy"] / games,
        shares["greedy"] / games,
        wins["random"] / n_random,
        shares["random"] / n_random,
    )


def main() -> None:
    """Run both measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=500, help="games per speed run")
    parser.add_argument("--runs", type=int, default=5, help="speed runs (the median is shown)")
    parser.add_argument("--match", type=int, default=2000, help="games of greedy vs 3 random")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    print(f"moose engine benchmark, {PLAYERS} players, {pin_to_one_core()}")
    rates = [games_per_second(args.games, args.seed + r * 1_000_003) for r in range(args.runs)]
    print(
        f"random bots: {statistics.median(rates):.0f} games/s"
        f" (median of {args.runs} runs of {args.games} games;"
        f" min {min(rates):.0f}, max {max(rates):.0f})"
    )
    start = time.perf_counter()
    g_win, g_share, r_win, r_share = greedy_match(args.match, args.seed)
    seconds = time.perf_counter() - start
    print(f"greedy vs 3 random, {args.match} games ({seconds:.1f} s), seats rotated:")
    print(f"  greedy      win rate {g_win:6.1%}   win share {g_share:6.1%}")
    print(f"  random seat win rate {r_win:6.1%}   win share {r_share:6.1%}")
    print(f"  baseline    {1 / PLAYERS:6.1%} per seat")
    print("  (win rate counts a shared win for each winner; win share splits it)")


if __name__ == "__main__":
    main()
