"""`moose challenges`: who may challenge you, read or changed.

You are the player `moose play --name NAME` has been on this server (its kept
session), or the account with `--login`. `--from` changes the setting first:
everyone (the default), registered (players with an account), following (the
players you follow) or nobody. Kept with you on the server, so every client of
yours (the page too) holds to it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from moose.commands._common import add_player_options, run_as_player
from moose.messages import CHALLENGE_SETTINGS

if TYPE_CHECKING:  # the client pulls in aiohttp: imported when the command runs
    from moose.client import Client

SAID = {
    "everyone": "anyone may challenge you",
    "registered": "only players with an account may challenge you",
    "following": "only the players you follow may challenge you",
    "nobody": "nobody may challenge you",
}


def add_parser(subparsers: Any) -> None:
    """Register `moose challenges`."""
    p = subparsers.add_parser(
        "challenges",
        help="who may challenge you: everyone, registered, following or nobody",
        description="Say who may challenge you to a game (as on the page's account "
        "screen), or with no --from, what you said last.",
    )
    p.add_argument("--name", required=True, help="your name (as in `moose play --name`)")
    p.add_argument(
        "--from",
        dest="setting",
        choices=CHALLENGE_SETTINGS,
        default=None,
        help="who may challenge you from now on (default: leave it as it is)",
    )
    add_player_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose challenges`."""

    async def act(client: Client) -> None:
        answer = await client.challenge_setting(args.setting)
        setting = str(answer["challenges"])
        print(f"{SAID.get(setting, setting)} ({setting})")

    return run_as_player(args, "moose challenges", act)
