"""`moose report PLAYER --reason TEXT`: tell the moderators about a player.

You report as the player `moose play --name NAME` has been on this server (its
kept session), or as the account with `--login`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from moose.commands._common import add_player_options, run_as_player, who_hint

if TYPE_CHECKING:  # the client pulls in aiohttp: imported when the command runs
    from moose.client import Client


def add_parser(subparsers: Any) -> None:
    """Register `moose report`."""
    p = subparsers.add_parser(
        "report",
        help="report a player to the moderators",
        description="Report a player to the server's moderators: PLAYER is an account's "
        "name or a player id, or with --game the name shown at that game's table. "
        "Reports are limited to a few a minute.",
    )
    p.add_argument("player", help="whom you report")
    p.add_argument("--reason", required=True, help="what happened (up to 200 characters)")
    p.add_argument("--game", help="the game it happened in (g_...)")
    p.add_argument("--name", required=True, help="your name (as in `moose play --name`)")
    add_player_options(p, "report as your account (password asked, or MOOSE_PASSWORD)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose report`."""

    async def act(client: Client) -> None:
        answer = await client.report(args.player, args.reason, args.game)
        print(f"reported {answer['name']} ({answer['player']}); thank you")

    def hint(code: str) -> str:
        return who_hint(code, in_game=args.game is not None, game_option=True)

    return run_as_player(args, "moose report", act, hint)
