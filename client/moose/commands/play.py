"""`moose play`: a person plays one game in the terminal, from the queue or a private table."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from moose.commands._common import DEFAULT_URL, ask, login_name, open_kept, url_help


def add_parser(subparsers: Any) -> None:
    """Register `moose play`."""
    from moose.bots import BOTS
    from moose.search import MCTS_COST

    p = subparsers.add_parser(
        "play",
        help="play a game in the terminal",
        description="Play There's a Moose in the House against people and bots on a server. "
        "Type the number of a move and Enter; `quit` leaves. Run it again with the same "
        "--name and --url to take your seat back in an unfinished game.",
    )
    p.add_argument("--url", default=DEFAULT_URL, help=url_help())
    p.add_argument("--name", default=None, help="your name at the table (default: your login)")
    p.add_argument(
        "--login",
        action="store_true",
        help="play as the account --name (asks its password, or MOOSE_PASSWORD)",
    )
    add_players_option(p, "table size wanted from the public queue, e.g. 2-4 or 3 (default 2-4)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--code", help="join the private table with this join code")
    where.add_argument("--create", type=int, metavar="N", help="create a private table of N seats")
    where.add_argument(
        "--challenge",
        metavar="NAME",
        help="challenge this player (account name or player id) to a table of --players seats",
    )
    p.add_argument("--rated", action="store_true", help="with --challenge: a rated game")
    p.add_argument(
        "--stay",
        action="store_true",
        help="after a game, stay for a rematch or a challenge (`quit` leaves)",
    )
    p.add_argument(
        "--bots",
        default="",
        metavar="BOT,BOT",
        help=f"with --create: seat these server bots ({', '.join(sorted(BOTS))}; mcts: "
        f"{MCTS_COST}); the game starts once every seat is taken",
    )
    p.add_argument(
        "--start-when-full",
        action="store_true",
        help="with --create: start as soon as every seat is taken",
    )
    p.add_argument(
        "--fair",
        action="store_true",
        help="add a random seed of yours to the deal: nobody, the server included, can "
        "choose your cards (check a game's record with `moose verify`)",
    )
    p.add_argument(
        "--plain",
        action="store_true",
        help="line-by-line output even on a terminal (the default when piped)",
    )
    p.set_defaults(func=run)


def add_players_option(p: argparse.ArgumentParser, help: str) -> None:
    """`--players MIN-MAX`: the table size wanted from the queue, (2, 4) by default."""
    p.add_argument("--players", type=players_range, default=(2, 4), metavar="MIN-MAX", help=help)


def players_range(text: str) -> tuple[int, int]:
    """`2-4` or `3` as (min, max) seats, each 2 to 6."""
    lo, _, hi = text.partition("-")
    try:
        low, high = int(lo), int(hi or lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN-MAX such as 2-4, not {text!r}") from None
    if not 2 <= low <= high <= 6:
        raise argparse.ArgumentTypeError(f"seats must be 2 to 6 with MIN <= MAX, not {text!r}")
    return low, high


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose play`."""
    problem = check_args(args)
    if problem:
        print(f"moose play: {problem}", file=sys.stderr)
        return 2
    return asyncio.run(_main(args))  # Ctrl-C: `cli.main` exits with 130


def check_args(args: argparse.Namespace) -> str | None:
    """What is wrong with the options, before anything is created on the server."""
    from moose.bots import BOTS

    if args.create is not None and not 2 <= args.create <= 6:
        return "--create takes 2 to 6 seats"
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    if bots and args.create is None:
        return "--bots needs --create"
    unknown = [b for b in bots if b not in BOTS]
    if unknown:
        return f"unknown bot {unknown[0]!r}: the bots are {', '.join(sorted(BOTS))}"
    if args.create is not None and len(bots) > args.create - 1:
        others = args.create - 1
        return (
            f"a table of {args.create} has {others} seat{'s' * (others > 1)} besides "
            f"yours, and --bots names {len(bots)} bots"
        )
    return None


async def _main(args: argparse.Namespace) -> int:
    from rich.console import Console

    from moose._play import Play
    from moose._term import InputReader
    from moose.client import ConnectError, ServerError

    live = not args.plain and sys.stdin.isatty() and sys.stdout.isatty()
    console = Console(highlight=False)
    password = None
    if args.login:
        password = ask("password: ", "MOOSE_PASSWORD")
    try:
        client = await open_kept(args.url, args.name or login_name(), password)
    except ConnectError as exc:
        console.print(str(exc), markup=False, soft_wrap=True)
        return 1
    except ServerError as exc:
        console.print(f"the server refused the connection: {exc}", markup=False)
        return 1
    play = Play(client, console, args)
    reader = InputReader(keys=live, on_change=play.refresh)
    play.reader = reader
    try:
        reader.start()
        with play.live_screen(live):
            return await play.run()
    finally:
        reader.close()
        await play.leave_table()  # Ctrl-C too: a table not started keeps no ghost seat
        await client.close()
