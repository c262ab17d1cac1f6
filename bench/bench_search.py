"""Time a move of the search bot (`mcts`, its default budget) against greedy bots.

    python bench/bench_search.py --players 4 --games 6 --seed 1 [--time-limit 0]

Plays GAMES local games, the search bot in seat `game % players`, and times
each of its moves that searched (more than one legal move, not a trap answer):
wall clock and this process' CPU time, median, 90th percentile and maximum, in
ms, with the moves that ran into the time cap and the load average before and
after. Prints one JSON object. Win rates belong to `moose simulate`: these
games are too few.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from typing import Any

from moose import search
from moose.bots import make_bot, play_game
from moose.search import SearchBot


class Timed:
    """The default search bot, timing every move it searches."""

    name = "mcts"

    def __init__(self, seed: int, time_limit: float) -> None:
        self.bot = SearchBot(seed, time_limit=time_limit)
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def choose(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        """The bot's move, timed when it searches."""
        searches = len(legal) > 1 and view["phase"] != "answer"
        wall, cpu = time.perf_counter(), time.process_time()
        move = self.bot.choose(view, legal)
        if searches:
            self.wall.append((time.perf_counter() - wall) * 1000)
            self.cpu.append((time.process_time() - cpu) * 1000)
        return move


def _spread(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "median": round(statistics.median(ordered), 1),
        "p90": round(ordered[int(0.9 * (len(ordered) - 1))], 1),
        "max": round(ordered[-1], 1),
    }


def main() -> None:
    """Play the games and print the report."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--games", type=int, default=6)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--time-limit",
        type=float,
        default=search.TIME_LIMIT,
        help="the time cap in s (0: none, so that the CPU time is the whole budget's)",
    )
    args = p.parse_args()
    time_limit = args.time_limit or math.inf
    load_before = os.getloadavg()
    timed = [Timed(args.seed * 1000 + g, time_limit) for g in range(args.games)]
    for g, bot in enumerate(timed):
        bots: list[Any] = [make_bot("greedy", g * 10 + k) for k in range(args.players)]
        bots[g % args.players] = bot
        play_game(bots, seed=f"bench-search-{args.seed}-{g}")
    wall = [ms for t in timed for ms in t.wall]
    cpu = [ms for t in timed for ms in t.cpu]
    report = {
        "players": args.players,
        "games": args.games,
        "budget": {"iterations": search.ITERATIONS, "time_limit_s": args.time_limit or None},
        "moves_searched": len(wall),
        "wall_ms": _spread(wall),
        "cpu_ms": _spread(cpu),
        "capped": sum(ms >= time_limit * 1000 for ms in wall),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "nproc": os.cpu_count(),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
