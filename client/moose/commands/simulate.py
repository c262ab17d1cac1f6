"""`moose simulate`: play many local games between bots and report how each did.

Seat i of the first game gets the i-th bot of ``--bots``; each later game turns
the line-up round by one seat, and the dealer comes from each game's seed, so no
bot keeps a seat advantage. Every game's seed comes from ``--seed``, so a run is
the same whatever ``--workers`` is.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moose import record, rules
from moose.bots import BOTS, make_bot, play_game
from moose.search import MCTS_COST

PROG = "moose simulate"
# Work handed to a worker process at once: small enough for a smooth progress
# bar, large enough that pickling results stays cheap next to playing.
CHUNK = 50


@dataclass(frozen=True)
class GameResult:
    """The outcome of one simulated game, as needed for the totals."""

    index: int
    names: tuple[str, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]


@dataclass
class BotTotals:
    """Running totals for every seat a bot of one kind took."""

    seats: int = 0  # seats per game in the line-up
    played: int = 0  # seat-games
    wins: int = 0  # a shared win counts as a win for each winner
    share: float = 0.0  # a shared win split evenly between the winners
    score: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The totals and rates as plain data (for --json)."""
        played = self.played or 1
        return {
            "seats": self.seats,
            "seat_games": self.played,
            "wins": self.wins,
            "win_rate": self.wins / played,
            "win_share": self.share / played,
            "mean_score": self.score / played,
        }


# -- argument checking ------------------------------------------------------------


def _int_at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low or (high is not None and value > high):
            span = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {span}, not {value}")
        return value

    return parse


def _known(name: str) -> bool:
    try:
        make_bot(name)
    except ValueError:
        return False
    return True


def _bot_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    unknown = [n for n in names if not _known(n)]
    if unknown:
        known = ", ".join([*sorted(BOTS), "mcts:N (N playouts a move)"])
        raise argparse.ArgumentTypeError(
            f"unknown bot(s): {', '.join(repr(n) for n in unknown)} (known bots: {known})"
        )
    return names


def add_parser(subparsers: Any) -> None:
    """Register `moose simulate`."""
    p = subparsers.add_parser(
        "simulate",
        help="play local games between bots and show win rates",
        description="Play many local games between bots and report how each did.",
    )
    p.add_argument(
        "--players",
        metavar="N",
        type=_int_at_least(rules.MIN_PLAYERS, rules.MAX_PLAYERS),
        default=4,
        help="seats per game, 2 to 6 (default 4)",
    )
    p.add_argument(
        "--games", metavar="N", type=_int_at_least(1), default=1000, help="games (default 1000)"
    )
    p.add_argument(
        "--bots",
        metavar="NAMES",
        type=_bot_list,
        default=["greedy", "random", "random", "random"],
        help=f"comma-separated bot per seat, or one for all seats ({', '.join(sorted(BOTS))},"
        f" or mcts:N for the search bot with N playouts a move; mcts, 200: {MCTS_COST});"
        " default greedy,random,random,random",
    )
    p.add_argument(
        "--seed", metavar="S", type=int, default=None, help="seed of the whole run (default random)"
    )
    p.add_argument(
        "--record-dir", metavar="DIR", type=Path, default=None, help="write each game here as JSON"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument(
        "--workers",
        metavar="W",
        type=_int_at_least(1),
        default=1,
        help="processes to play in (default 1)",
    )
    p.set_defaults(func=run)


def _error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


# -- playing ------------------------------------------------------------------------


def lineup_for(bots: Sequence[str], index: int) -> tuple[str, ...]:
    """The bot name at each seat of game `index`: the line-up turned by `index` seats."""
    n = len(bots)
    return tuple(bots[(seat + index) % n] for seat in range(n))


def play_one(bots: Sequence[str], index: int, seed: int, record_dir: Path | None) -> GameResult:
    """Play game `index` of a run from its own seed; write its record if asked."""
    names = lineup_for(bots, index)
    players = [make_bot(name, seed=seed + 1 + seat) for seat, name in enumerate(names)]
    state, moves = play_game(players, seed=seed)
    if record_dir is not None:
        record.dump(record.from_game(state, moves, names), record_dir / f"game-{index:06d}.json")
    return GameResult(index, names, tuple(rules.scores(state)), tuple(rules.winners(state)))


def play_chunk(
    bots: Sequence[str], jobs: Sequence[tuple[int, int]], record_dir: Path | None
) -> list[GameResult]:
    """Play the (index, seed) games of `jobs` (the unit of work of one worker task)."""
    return [play_one(bots, index, seed, record_dir) for index, seed in jobs]


def play_all(
    bots: Sequence[str], seeds: Sequence[int], record_dir: Path | None, workers: int
) -> Iterator[list[GameResult]]:
    """Play every game, yielding results a chunk at a time as they finish."""
    jobs = list(enumerate(seeds))
    chunks = [jobs[i : i + CHUNK] for i in range(0, len(jobs), CHUNK)]
    if workers == 1:
        for chunk in chunks:
            yield play_chunk(bots, chunk, record_dir)
        return
    # Spawned, not forked: the progress bar's refresh thread may hold a lock at
    # the moment of a fork, and a forked child would inherit it held.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        yield from pool.map(play_chunk, [bots] * len(chunks), chunks, [record_dir] * len(chunks))


def totals(bots: Sequence[str], results: Sequence[GameResult]) -> dict[str, BotTotals]:
    """Per-bot totals, bots in the order they first appear in the line-up."""
    out: dict[str, BotTotals] = {}
    for name in bots:
        out.setdefault(name, BotTotals()).seats += 1
    # Sorted so the float shares add up in the same order for any --workers.
    for r in sorted(results, key=lambda r: r.index):
        for seat, name in enumerate(r.names):
            t = out[name]
            t.played += 1
            t.score += r.scores[seat]
            if seat in r.winners:
                t.wins += 1
                t.share += 1 / len(r.winners)
    return out


# -- output -------------------------------------------------------------------------


def _progress(show: bool, games: int) -> Any:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("simulating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("games"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not show,
    )


def print_table(summary: dict[str, Any]) -> None:
    """Print the per-bot table and the run's totals with rich."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{summary['games']} games of {summary['players']} players")
    table.add_column("bot")
    table.add_column("seats", justify="right")
    table.add_column("seat-games", justify="right")
    table.add_column("win rate", justify="right")
    table.add_column("win share", justify="right")
    table.add_column("mean score", justify="right")
    for name, b in summary["bots"].items():
        table.add_row(
            name,
            str(b["seats"]),
            str(b["seat_games"]),
            f"{b['win_rate']:.1%}",
            f"{b['win_share']:.1%}",
            f"{b['mean_score']:.2f}",
        )
    console = Console(highlight=False)
    console.print(table)
    console.print(
        "win rate counts a shared win as a win for each winner; win share splits it."
        f" Baseline (an even chance): {summary['baseline_win_rate']:.1%} per seat."
    )
    workers = summary["workers"]
    console.print(
        f"{summary['games']} games in {summary['seconds']:.2f} s:"
        f" {summary['games_per_second']:.0f} games/s"
        f" ({workers} worker{'s' if workers != 1 else ''}), seed {summary['seed']}"
    )


def run(args: argparse.Namespace) -> int:
    """Run `moose simulate`; return the exit code."""
    bots: list[str] = args.bots
    if len(bots) == 1:
        bots = bots * args.players
    elif len(bots) != args.players:
        return _error(
            f"--bots names {len(bots)} bots for {args.players} players"
            " (give one bot per seat, or a single bot for all seats)"
        )
    record_dir: Path | None = args.record_dir
    if record_dir is not None:
        if record_dir.exists() and not record_dir.is_dir():
            return _error(f"--record-dir {str(record_dir)!r} is not a directory")
        try:
            record_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return _error(f"cannot use --record-dir {str(record_dir)!r}: {exc.strerror or exc}")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    master = random.Random(seed)
    seeds = [master.getrandbits(63) for _ in range(args.games)]

    results: list[GameResult] = []
    show = sys.stderr.isatty() and not args.json
    start = time.perf_counter()
    with _progress(show, args.games) as progress:
        task = progress.add_task("simulate", total=args.games)
        for chunk in play_all(bots, seeds, record_dir, args.workers):
            results.extend(chunk)
            progress.advance(task, len(chunk))
    seconds = time.perf_counter() - start

    summary: dict[str, Any] = {
        "games": args.games,
        "players": args.players,
        "lineup": bots,
        "seed": seed,
        "workers": args.workers,
        "seconds": seconds,
        "games_per_second": args.games / seconds if seconds > 0 else float("inf"),
        "baseline_win_rate": 1 / args.players,
        "wins": "win_rate counts a shared win as a win for each winner; win_share splits it",
        "bots": {name: t.as_dict() for name, t in totals(bots, results).items()},
    }
    if record_dir is not None:
        summary["record_dir"] = str(record_dir)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_table(summary)
    return 0
