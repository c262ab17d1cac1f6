"""`moose report PLAYER --reason TEXT`: tell the moderators about a player.

You report as the player `moose play --name NAME` has been on this server (its
kept session), or as the account with `--login`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from moose.commands._common import DEFAULT_URL, url_help


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
    p.add_argument(
        "--login",
        action="store_true",
        help="report as your account (password asked, or MOOSE_PASSWORD)",
    )
    p.add_argument("--url", default=DEFAULT_URL, help=url_help())
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose report`."""
    from moose.commands._common import ask

    password = ask("password: ", "MOOSE_PASSWORD") if args.login else None
    return asyncio.run(_main(args, password))


async def _main(args: argparse.Namespace, password: str | None) -> int:
    from moose.client import Client, ConnectError, ServerError
    from moose.commands._common import open_kept, who_hint

    client: Client | None = None
    try:
        client = await open_kept(args.url, args.name, password)
        answer = await client.report(args.player, args.reason, args.game)
        print(f"reported {answer['name']} ({answer['player']}); thank you")
        return 0
    except ConnectError:
        print(f"cannot reach {args.url}: is `moose serve` running?", file=sys.stderr)
        return 1
    except ServerError as exc:
        hint = who_hint(exc.code, in_game=args.game is not None, game_option=True)
        print(f"moose report: {exc.message} ({exc.code}){hint}", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            await client.close()
