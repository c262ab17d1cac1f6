"""`moose challenges`: who may challenge you, read or changed.

You are the player `moose play --name NAME` has been on this server (its kept
session), or the account with `--login`. `--from` changes the setting first:
everyone (the default), registered (players with an account), following (the
players you follow) or nobody. Kept with you on the server, so every client of
yours (the page too) holds to it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from moose.commands._common import DEFAULT_URL, url_help
from moose.messages import CHALLENGE_SETTINGS

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
    p.add_argument(
        "--login", action="store_true", help="as your account (password asked, or MOOSE_PASSWORD)"
    )
    p.add_argument("--url", default=DEFAULT_URL, help=url_help())
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose challenges`."""
    from moose.commands._common import ask

    password = ask("password: ", "MOOSE_PASSWORD") if args.login else None
    return asyncio.run(_main(args, password))


async def _main(args: argparse.Namespace, password: str | None) -> int:
    from moose.client import Client, ConnectError, ServerError
    from moose.commands._common import open_kept, who_hint

    client: Client | None = None
    try:
        client = await open_kept(args.url, args.name, password)
        answer = await client.challenge_setting(args.setting)
        setting = str(answer["challenges"])
        print(f"{SAID.get(setting, setting)} ({setting})")
        return 0
    except ConnectError:
        print(f"cannot reach {args.url}: is `moose serve` running?", file=sys.stderr)
        return 1
    except ServerError as exc:
        hint = who_hint(exc.code)
        print(f"moose challenges: {exc.message} ({exc.code}){hint}", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            await client.close()
