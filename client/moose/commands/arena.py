"""`moose arena`: arena tournaments.

`moose arena` (or `moose arena list`) lists them; `moose arena join ID` joins one
and plays every game it is seated in, in the terminal or with `--bot KIND`, until
the arena is over (Ctrl-C leaves it); `moose arena watch ID` prints its standings
on every change.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from moose.commands._common import DEFAULT_URL, url_help
from moose.commands.play import add_players_option

if TYPE_CHECKING:
    from moose.client import Client

OVER_POLL = 2.0  # seconds between looks at whether the arena we wait in is over


def add_parser(subparsers: Any) -> None:
    """Register `moose arena`."""
    from moose.bots import BOTS

    p = subparsers.add_parser(
        "arena",
        help="arena tournaments: list, join and play, watch the standings",
        usage="moose arena [-h] [--url URL] [list | join ID | watch ID] ...",
        description="List the arenas (`list`, or no step), join one and play its games, "
        "or watch its standings. An arena seats its waiting members together for its "
        "whole window; each finished game scores points by place.",
    )
    p.add_argument("--url", default=DEFAULT_URL, help=url_help())
    p.set_defaults(func=run, step=None)
    steps = p.add_subparsers(dest="step", metavar="STEP", prog="moose arena")
    listing = steps.add_parser(
        "list",
        help="list the arenas (as `moose arena` alone does)",
        description="List the arenas: id, state, window, table sizes, who may join, name.",
    )
    join = steps.add_parser(
        "join",
        help="join an arena and play its games until it ends",
        description="Join the arena and play every game it seats you "
        "in, until it is over; Ctrl-C leaves it.",
    )
    join.add_argument("arena", metavar="ID", help="the arena's id (see `moose arena`)")
    join.add_argument("--name", default=None, help="your name (default: your login)")
    join.add_argument(
        "--bot",
        choices=sorted(BOTS),
        default=None,
        help="play as this built-in bot instead of by hand",
    )
    join.add_argument("--plain", action="store_true", help="line-by-line output")
    add_players_option(join, "table sizes you accept, within the arena's (default 2-4)")
    watch = steps.add_parser(
        "watch",
        help="print an arena's standings as they change",
        description="Print the standings on every change, until the arena is over.",
    )
    watch.add_argument("arena", metavar="ID", help="the arena's id")
    for sub in (listing, join, watch):
        sub.add_argument("--url", default=DEFAULT_URL, help=url_help())


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose arena`."""
    step = {None: _list, "list": _list, "join": _join, "watch": _watch}[args.step]
    return asyncio.run(step(args))  # Ctrl-C: `cli.main` exits with 130


def _clock(ms: int) -> str:
    return time.strftime("%H:%M", time.localtime(ms / 1000))


def standings_lines(arena: dict[str, Any]) -> list[str]:
    """An `arena` message as text: its summary, then one line per member."""
    a = arena["arena"]
    lines = [
        f"{a['name']} ({a['id']}): {a['state']}, {_clock(a['start'])}-{_clock(a['end'])}, "
        f"tables of {a['min_players']}-{a['max_players']}, for {a['for']}"
    ]
    for s in arena["standings"]:
        now = f"playing {s['game']}" if s["game"] else s["state"]
        lines.append(
            f"{s['rank']:>3}. {s['name']:<24} {s['points']:>4} pts {s['games']:>3} games  {now}"
        )
    if a["winners"]:
        lines.append(
            "won by "
            + ", ".join(s["name"] for s in arena["standings"] if s["player"] in a["winners"])
        )
    return lines


async def _list(args: argparse.Namespace) -> int:
    from moose.client import Client, MooseError

    try:
        async with Client(args.url, name="spectator") as client:
            arenas = await client.arenas()
    except MooseError as exc:
        print(f"moose arena: {exc}", file=sys.stderr)
        return 1
    if not arenas:
        print("no arenas")
    for a in arenas:
        print(
            f"{a['id']:<28} {a['state']:<9} {_clock(a['start'])}-{_clock(a['end'])} "
            f"{a['min_players']}-{a['max_players']} for {a['for']:<7} {a['name']}"
        )
    return 0


async def _watch(args: argparse.Namespace) -> int:
    from moose.client import Client, MooseError

    try:
        async with Client(args.url, name="spectator") as client:
            arena = await client.watch_arena(args.arena)
            print("\n".join(standings_lines(arena)), flush=True)
            async for msg in client.events():
                if msg["type"] == "arena" and msg["arena"]["id"] == args.arena:
                    print("\n" + "\n".join(standings_lines(msg)), flush=True)
                    if msg["arena"]["state"] == "over":
                        break
    except MooseError as exc:
        print(f"moose arena: {exc}", file=sys.stderr)
        return 1
    return 0


async def _join(args: argparse.Namespace) -> int:
    from moose.client import Client, MooseError

    if args.bot is not None:
        name = args.name or f"{args.bot}-bot"
        low, high = args.players
        try:
            async with Client(args.url, name=name, bot=True) as client:
                results = await client.run_arena_bot(
                    args.bot, args.arena, min_players=low, max_players=high
                )
                print("\n".join(standings_lines(await client.arena(args.arena))))
        except MooseError as exc:
            print(f"moose arena: {exc}", file=sys.stderr)
            return 1
        print(f"{name} played {len(results)} games")
        return 0
    return await _join_by_hand(args)


async def _until_over(client: Client, arena: str, playing: Awaitable[int]) -> int:
    """Play one game (`playing`); 0 at its end, or once the arena is over while we wait."""
    task = asyncio.ensure_future(playing)
    while not task.done():
        await asyncio.wait([task], timeout=OVER_POLL)
        if task.done() or client.active_games:
            continue
        if (await client.arena(arena))["arena"]["state"] in ("closing", "over"):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return 0
    return task.result()


async def _join_by_hand(args: argparse.Namespace) -> int:
    """Play the arena's games in the terminal, one after the other, until it is over."""
    from rich.console import Console

    from moose._play import Play
    from moose._term import InputReader
    from moose.client import MooseError
    from moose.commands._common import login_name, open_kept

    live = not args.plain and sys.stdin.isatty() and sys.stdout.isatty()
    console = Console(highlight=False)
    try:
        client = await open_kept(args.url, args.name or login_name(), None)
    except MooseError as exc:
        console.print(f"moose arena: {exc}", markup=False)
        return 1
    # What `moose play` would have parsed; no challenge, and no staying for a rematch:
    # the arena seats us again.
    ns = argparse.Namespace(
        **vars(args),
        create=None,
        code=None,
        bots="",
        start_when_full=False,
        fair=False,
        challenge=None,
        rated=False,
        stay=False,
    )
    code = 0
    try:
        while code == 0:
            arena = await client.arena(args.arena)
            if arena["arena"]["state"] in ("closing", "over"):
                console.print("\n".join(standings_lines(arena)), markup=False)
                return 0
            play = Play(client, console, ns)
            reader = InputReader(keys=live, on_change=play.refresh)
            play.reader = reader
            try:
                reader.start()
                with play.live_screen(live):
                    code = await _until_over(client, args.arena, play.run())
            finally:
                reader.close()
        return code
    except MooseError as exc:
        console.print(f"moose arena: {exc}", markup=False)
        return 1
    finally:
        with contextlib.suppress(MooseError, TimeoutError):
            async with asyncio.timeout(5):
                await client.leave_arena(args.arena)
        await client.close()
