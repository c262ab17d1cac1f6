"""`moose watch GAME_ID`: follow a game as a spectator, one line per event, with the
spectators' chat as `[chat] name: text` lines.

`moose watch` with no game id lists the live public games instead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from moose.commands._common import DEFAULT_URL, url_help

if TYPE_CHECKING:  # the client pulls in aiohttp: imported when the command runs
    from rich.console import Console

    from moose.client import Client


def add_parser(subparsers: Any) -> None:
    """Register `moose watch`."""
    p = subparsers.add_parser(
        "watch",
        help="follow a game as a spectator",
        description="Print every event of a game as it happens, until the game is over. "
        "Without a game id, list the live public games.",
    )
    p.add_argument("game", metavar="GAME_ID", nargs="?", help="the game's id, such as g_9f8e7d6c5b")
    p.add_argument("--url", default=DEFAULT_URL, help=url_help())
    p.add_argument("--json", action="store_true", help="one JSON line per event message")
    p.add_argument("--name", default="spectator", help="the name to say hello with")
    p.add_argument(
        "--code",
        help="the join code of a private table's game (else only queue "
        "games and your own can be watched)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose watch`."""
    return asyncio.run(_main(args))  # Ctrl-C: `cli.main` exits with 130


async def _main(args: argparse.Namespace) -> int:
    from rich.console import Console

    from moose.client import Client, ConnectError, ConnectionLost, ServerError

    console = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    client = Client(args.url, name=args.name)
    try:
        await client.open()
    except ConnectError as exc:
        err.print(str(exc), markup=False, soft_wrap=True)
        return 1
    try:
        if args.game is None:
            return await _list(client, console, args.json)
        return await _follow(client, console, args)
    except ServerError as exc:
        what = "list the live games" if args.game is None else f"watch {args.game}"
        err.print(f"cannot {what}: {exc.message} ({exc.code})", markup=False)
        return 1
    except ConnectionLost as exc:
        err.print(f"lost the connection: {exc}", markup=False)
        return 1
    finally:
        await client.close()


async def _list(client: Client, console: Console, as_json: bool) -> int:
    """The live public games, as a table or one JSON line."""
    from moose import _render

    listing = await client.games()
    if as_json:
        sys.stdout.write(json.dumps(listing, separators=(",", ":")) + "\n")
    else:
        console.print(_render.live_games(listing))
    return 0


async def _follow(client: Client, console: Console, args: argparse.Namespace) -> int:
    """Print the game's events (and the spectators' chat) until it is over."""
    from moose import _render
    from moose.client import is_final

    names: list[str] | None = None
    seats: dict[str, Any] = {}  # the seats' bot marks and ratings
    await client.watch(args.game, args.code)
    for line in await client.chat_history(args.game):  # said before we came
        _chat_line(console, args.json, {"type": "chat", **line})
    async for msg in client.events():
        if msg.get("type") == "chat" and msg.get("game") == args.game:
            _chat_line(console, args.json, msg)
        if msg.get("type") == "deadline" and msg.get("game") == args.game:
            if args.json:  # a turn goes on past its deadline (PROTOCOL.md, Time)
                sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
                sys.stdout.flush()
            else:
                console.print(_render.describe_deadline(msg, names), markup=False)
        if msg.get("type") != "event" or msg.get("game") != args.game:
            continue
        event = msg.get("event") or {}
        names = event.get("names") or names
        if event.get("bots") is not None:  # `start` and `state` mark the bots
            seats = {"bots": event.get("bots"), "ratings": event.get("ratings") or []}
        if args.json:
            sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
            sys.stdout.flush()
        else:
            console.print(_render.describe_event(msg, names), markup=False)
            if event.get("kind") == "state":
                console.print(_render.board(msg.get("view") or {}, names, seats))
        if is_final(msg):
            if not args.json:
                console.print(_render.board(_render.final_view(msg), names, seats))
            return 0
    return 1


def _chat_line(console: Any, as_json: bool, msg: dict[str, Any]) -> None:
    """A chat line: a JSON line, or `[chat] name: text` (printed as text, never markup)."""
    if as_json:
        sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
        sys.stdout.flush()
    else:
        console.print(f"[chat] {msg.get('name')}: {msg.get('text')}", markup=False)
