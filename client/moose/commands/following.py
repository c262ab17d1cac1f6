"""`moose following`: the players you follow, online or not, and the games they play.

You are the player `moose play --name NAME` has been on this server (its kept
session), or the account with `--login`. `--follow` and `--unfollow` change the
list first; `moose watch GAME_ID` watches a game listed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from moose.commands._common import DEFAULT_URL, url_help


def add_parser(subparsers: Any) -> None:
    """Register `moose following`."""
    p = subparsers.add_parser(
        "following",
        help="the players you follow: who is online, who is playing",
        description="List the players you follow, whether each is online, and the "
        "unfinished games each sits in (watch one with `moose watch GAME_ID`).",
    )
    p.add_argument("--name", required=True, help="your name (as in `moose play --name`)")
    p.add_argument(
        "--follow",
        action="append",
        default=[],
        metavar="PLAYER",
        help="follow a player first (an account's name or a player id)",
    )
    p.add_argument(
        "--unfollow",
        action="append",
        default=[],
        metavar="PLAYER",
        help="stop following a player first",
    )
    p.add_argument(
        "--login", action="store_true", help="as your account (password asked, or MOOSE_PASSWORD)"
    )
    p.add_argument("--url", default=DEFAULT_URL, help=url_help())
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose following`."""
    from moose.commands._common import ask

    password = ask("password: ", "MOOSE_PASSWORD") if args.login else None
    return asyncio.run(_main(args, password))


def describe(entry: dict[str, Any]) -> str:
    """One followed player as a line: name, online or not, games."""
    state = "online" if entry.get("online") else "offline"
    games = entry.get("games") or []
    playing = f", playing {', '.join(games)} (moose watch {games[0]})" if games else ""
    hidden = entry.get("private") or 0  # private tables' games: not ours to watch
    if hidden:
        playing += f", at {hidden} private table{'s' if hidden > 1 else ''}"
    return f"{entry.get('name')} ({entry.get('player')}): {state}{playing}"


async def _main(args: argparse.Namespace, password: str | None) -> int:
    from moose.client import Client, ConnectError, ServerError
    from moose.commands._common import open_kept, who_hint

    client: Client | None = None
    try:
        client = await open_kept(args.url, args.name, password)
        for player in args.follow:
            print(f"following {(await client.follow(player))['name']}")
        for player in args.unfollow:
            print(f"no longer following {(await client.unfollow(player))['name']}")
        answer = await client.following()
        for entry in answer["players"]:
            print(describe(entry))
        if not answer["players"]:
            print("you follow nobody yet: moose following --name NAME --follow PLAYER")
        return 0
    except ConnectError:
        print(f"cannot reach {args.url}: is `moose serve` running?", file=sys.stderr)
        return 1
    except ServerError as exc:
        hint = who_hint(exc.code)
        print(f"moose following: {exc.message} ({exc.code}){hint}", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            await client.close()
