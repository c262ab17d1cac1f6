"""`moose following`: the players you follow, online or not, and the games they play.

You are the player `moose play --name NAME` has been on this server (its kept
session), or the account with `--login`. `--follow` and `--unfollow` change the
list first; `moose watch GAME_ID` watches a game listed.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from moose.commands._common import add_player_options, run_as_player

if TYPE_CHECKING:  # the client pulls in aiohttp: imported when the command runs
    from moose.client import Client


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
    add_player_options(p)
    p.set_defaults(func=run)


def describe(entry: dict[str, Any]) -> str:
    """One followed player as a line: name, online or not, games."""
    state = "online" if entry.get("online") else "offline"
    games = entry.get("games") or []
    playing = f", playing {', '.join(games)} (moose watch {games[0]})" if games else ""
    hidden = entry.get("private") or 0  # private tables' games: not ours to watch
    if hidden:
        playing += f", at {hidden} private table{'s' if hidden > 1 else ''}"
    return f"{entry.get('name')} ({entry.get('player')}): {state}{playing}"


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose following`."""

    async def act(client: Client) -> None:
        for player in args.follow:
            print(f"following {(await client.follow(player))['name']}")
        for player in args.unfollow:
            print(f"no longer following {(await client.unfollow(player))['name']}")
        answer = await client.following()
        for entry in answer["players"]:
            print(describe(entry))
        if not answer["players"]:
            print("you follow nobody yet: moose following --name NAME --follow PLAYER")

    return run_as_player(args, "moose following", act)
