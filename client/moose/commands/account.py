"""`moose account register|password|logout-all`: a name of your own, with a password.

The password is asked for on the terminal (or read from MOOSE_PASSWORD, and
MOOSE_NEW_PASSWORD for a new one, for scripts); it is never printed.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys
from typing import Any

from moose.commands._common import DEFAULT_URL, ask, url_help


def add_parser(subparsers: Any) -> None:
    """Register `moose account`."""
    p = subparsers.add_parser(
        "account",
        help="claim your name with a password, change it, log out everywhere",
        description="Accounts keep your name, rating and history: `register` claims NAME "
        "for the guest `moose play --name NAME` has been on this server (its player id, "
        "rating and history; a new player if there is none), `password` changes an "
        "account's password, "
        "`logout-all` refuses every session token issued so far. `moose play --login` "
        "then plays as the account.",
    )
    p.add_argument("action", choices=("register", "password", "logout-all"))
    p.add_argument("--name", required=True, help="the account's name")
    p.add_argument("--url", default=DEFAULT_URL, help=url_help())
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose account`."""
    password = ask("password: ", "MOOSE_PASSWORD")
    new = None
    if args.action == "password":
        new = ask("new password: ", "MOOSE_NEW_PASSWORD")
    # A password typed is typed twice: a typo would lock the account's owner out.
    typed, env = (new, "MOOSE_NEW_PASSWORD") if new is not None else (password, "MOOSE_PASSWORD")
    if (
        args.action != "logout-all"
        and env not in os.environ
        and getpass.getpass("again: ") != typed
    ):
        print("moose account: the passwords differ", file=sys.stderr)
        return 2
    return asyncio.run(_main(args, password, new))


async def _main(args: argparse.Namespace, password: str, new: str | None) -> int:
    from moose import _saved
    from moose.client import Client, ConnectError, ServerError
    from moose.commands._common import open_kept

    client: Client | None = None
    try:
        if args.action == "register":
            # The guest session `moose play` kept for this name: the account keeps
            # its player id, rating and history.
            client = await open_kept(args.url, args.name, None)
            await client.register(password)
            if client.token:  # the guest's token was revoked: keep the account's
                _saved.save(args.url, args.name, client.token)
            print(f"{client.name} is an account now ({client.player})")
            return 0
        client = Client(args.url, name=args.name, password=password)
        await client.open()
        if new is not None:
            await client.change_password(password, new)
            print("password changed; your other sessions are logged out")
        else:
            await client.logout_all()
            print("logged out everywhere")
    except ConnectError:
        print(f"cannot reach {args.url}: is `moose serve` running?", file=sys.stderr)
        return 1
    except ServerError as exc:
        print(f"moose account: {exc.message} ({exc.code})", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            await client.close()
    return 0
