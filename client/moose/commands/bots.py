"""`moose bots`: N bot clients in this process play through the public queue."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from moose.commands._common import DEFAULT_URL, url_help
from moose.commands.play import add_players_option
from moose.search import MCTS_COST

if TYPE_CHECKING:  # the client pulls in aiohttp: imported when the command runs
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from moose.client import Client, GameResult


def add_parser(subparsers: Any) -> None:
    """Register `moose bots`."""
    from moose.bots import BOTS

    p = subparsers.add_parser(
        "bots",
        help="run bot players against a server",
        description="Connect COUNT bots to a server; they play from the public queue until "
        "GAMES games have finished (games already running are played out), or, without "
        "--games, until every bot has played one game.",
    )
    p.add_argument("--count", type=int, default=2, help="bot clients to run (default 2)")
    p.add_argument(
        "--bot",
        default="greedy",
        choices=sorted(BOTS),
        help=f"bot kind (default %(default)s; mcts: {MCTS_COST})",
    )
    p.add_argument(
        "--games",
        type=int,
        default=None,
        help="stop once this many games have finished in all (default: every bot plays one)",
    )
    p.add_argument(
        "--url",
        default=DEFAULT_URL,
        help=url_help()[:-1] + "); several instances' URLs, comma separated: the bots "
        "start spread over them and reconnect to the next one in turn",
    )
    add_players_option(p, "table size wanted from the queue, e.g. 2-4 (default 2-4)")
    p.add_argument("--seed", type=int, default=None, help="seed of the first bot (+1 per bot)")
    p.add_argument("--name", default=None, help="name prefix (default: the bot kind)")
    p.add_argument(
        "--accept-challenges",
        action="store_true",
        help="do not queue: accept every challenge sent to the bots and play those games",
    )
    p.add_argument(
        "--arena",
        default=None,
        metavar="ID",
        help="join this arena and play its games until it is over, instead of "
        "the queue (see `moose arena`)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose bots`."""
    if args.count < 1 or (args.games is not None and args.games < 1):
        print("moose bots: --count and --games must be at least 1", file=sys.stderr)
        return 2
    if args.arena is not None and args.games is not None:
        print("moose bots: an arena's bots play until it is over: no --games", file=sys.stderr)
        return 2
    if args.arena is not None and args.accept_challenges:
        print("moose bots: --arena or --accept-challenges, not both", file=sys.stderr)
        return 2
    return asyncio.run(_main(args))  # Ctrl-C: `cli.main` exits with 130


@dataclass
class Tally:
    """What the bots did, for the progress bar and the summary."""

    target: int | None  # games in all; None: one game for each of `bots`
    bots: int
    games: set[str] = field(default_factory=set)
    # bot -> game -> won: a game whose end the server lost is told again, and counts once
    results: dict[str, dict[str, bool]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    finished: asyncio.Event = field(default_factory=asyncio.Event)

    def record(self, name: str, result: GameResult) -> None:
        """A bot's game ended (again, if the server lost its first end)."""
        self.results.setdefault(name, {})[result.game] = result.won
        self.games.add(result.game)
        if self.done:
            self.finished.set()

    def played(self, name: str) -> int:
        """Games the bot finished."""
        return len(self.results.get(name, {}))

    def wins(self, name: str) -> int:
        """Games the bot won."""
        return sum(self.results.get(name, {}).values())

    @property
    def done(self) -> bool:
        """Whether enough games have finished."""
        if self.target is None:
            return len(self.results) >= self.bots
        return len(self.games) >= self.target

    @property
    def total(self) -> int:
        """The progress bar's total."""
        return self.bots if self.target is None else self.target

    @property
    def progress(self) -> int:
        """The progress bar's count."""
        return len(self.results) if self.target is None else min(len(self.games), self.target)

    def bot_done(self, name: str) -> bool:
        """Whether the bot called `name` should stop after its game."""
        return self.played(name) >= 1 if self.target is None else self.done


# Refusals that say the server is in trouble (not the game moving on): reported.
TROUBLE = frozenset({"unavailable", "rate_limited", "internal"})


def spread(url: str, index: int) -> list[str]:
    """The URL list of bot `index`: "a,b,c" starts bot 0 on a, bot 1 on b, bot 3 on a..."""
    urls = [u.strip() for u in url.split(",") if u.strip()] or [url]
    turn = index % len(urls)
    return urls[turn:] + urls[:turn]


async def _main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from moose.client import Client, ConnectError

    console = Console(highlight=False, stderr=False)
    tally = Tally(target=args.games, bots=args.count)
    prefix = args.name or args.bot
    clients = [
        Client(spread(args.url, i), name=f"{prefix}-{i + 1}", bot=True) for i in range(args.count)
    ]
    try:
        await asyncio.gather(*(c.open() for c in clients))
    except ConnectError as exc:
        console.print(str(exc), markup=False, soft_wrap=True)
        await asyncio.gather(*(c.close() for c in clients))
        return 1
    if args.accept_challenges:  # say whom to challenge: a guest bot is challenged by its id
        for c in clients:
            console.print(f"{c.name} ({c.player}) accepts challenges", markup=False)
    what = "bots done" if tally.target is None else "games finished"
    columns = (TextColumn(what), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task("games", total=tally.total)
        tasks = [
            asyncio.create_task(_bot(c, i, args, tally, progress, bar))
            for i, c in enumerate(clients)
        ]
        # An arena's bots stop when it is over.
        stopper = asyncio.create_task(
            _stop_when_done(tally, clients) if args.arena is None else asyncio.sleep(0)
        )
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in (*tasks, stopper):
                task.cancel()
            await asyncio.gather(*tasks, stopper, return_exceptions=True)
            await asyncio.gather(*(c.close() for c in clients))
    _summary(console, tally, clients)
    return 1 if tally.errors else 0


async def _bot(
    client: Client,
    index: int,
    args: argparse.Namespace,
    tally: Tally,
    progress: Progress,
    bar: TaskID,
) -> None:
    """One bot client: play until the tally is done, then leave the queue."""
    from moose.bots import make_bot
    from moose.client import MooseError

    seed = None if args.seed is None else args.seed + index
    name = client.name or f"bot-{index}"

    def on_result(result: GameResult) -> None:
        tally.record(name, result)
        progress.update(bar, completed=tally.progress)

    low, high = args.players
    try:
        if args.arena is not None:
            await client.run_arena_bot(
                make_bot(args.bot, seed),
                args.arena,
                min_players=low,
                max_players=high,
                on_result=on_result,
            )
            return
        await client.run_bot(
            make_bot(args.bot, seed),
            None,
            min_players=low,
            max_players=high,
            stop=lambda: tally.bot_done(name),
            on_result=on_result,
            accept_challenges=args.accept_challenges,
        )
    except MooseError as exc:
        tally.errors.append(f"{name}: {exc}")


async def _stop_when_done(tally: Tally, clients: list[Client]) -> None:
    """Once enough games finished, close the bots waiting in the queue.

    A bot in a game plays it out and then stops by itself (`stop` in run_bot);
    one that cannot leave the queue has just been seated, and does the same.
    """
    from moose.client import MooseError

    await tally.finished.wait()
    for client in clients:
        if client.active_games:
            continue
        with contextlib.suppress(MooseError):
            await client.leave_queue()
            await client.close()  # it was idle in the queue: nothing is lost


def _summary(console: Console, tally: Tally, clients: list[Client]) -> None:
    from rich.table import Table

    count = len(tally.games)
    table = Table(title=f"{count} game{'' if count == 1 else 's'} finished")
    table.add_column("bot")
    table.add_column("games", justify="right")
    table.add_column("wins", justify="right")
    for c in clients:
        name = c.name or "?"
        table.add_row(name, str(tally.played(name)), str(tally.wins(name)))
    console.print(table)
    # Server trouble the bots rode out (Redis unreachable: retried) counts too.
    trouble: Counter[str] = Counter()
    for c in clients:
        trouble.update({k: n for k, n in c.refusals.items() if k in TROUBLE})
    count = len(tally.errors) + sum(trouble.values())
    detail = ", ".join(f"{code} {n}" for code, n in sorted(trouble.items()))
    retried = f" ({detail}: requests the server refused and the bots retried)" if detail else ""
    console.print(f"errors: {count}{retried}", markup=False)
    for line in tally.errors:
        console.print(f"  {line}", markup=False)
