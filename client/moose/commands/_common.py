"""What the `moose` subcommands share: the server's default URL, a password asked
for, the session kept per server and name, and the name to play under."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the client pulls in aiohttp: imported when a command runs
    from moose.client import Client

__all__ = [
    "BUILT_IN_URL",
    "DEFAULT_URL",
    "add_player_options",
    "ask",
    "login_name",
    "open_kept",
    "run_as_player",
    "url_help",
    "who_hint",
]

BUILT_IN_URL = "ws://127.0.0.1:8080/ws"  # what `moose serve` listens on by default
DEFAULT_URL = os.environ.get("MOOSE_URL", BUILT_IN_URL)


def url_help(what: str = "server WebSocket URL") -> str:
    """--url's help: its default, and the environment variable that sets it."""
    return f"{what} (default %(default)s; MOOSE_URL sets another default)"


def ask(prompt: str, env: str) -> str:
    """A password from the environment variable `env`, or typed without echo."""
    return os.environ.get(env) or getpass.getpass(prompt)


async def open_kept(url: str, name: str, password: str | None) -> Client:
    """Connect with the session kept for this server and name, or as a new player.

    The kept token brings back the same player, and so their unfinished games; a
    guest's and an account's sessions of one name are kept apart.
    """
    from moose import _saved
    from moose.client import Client, ServerError

    who = name if password is None else f"{name} (account)"
    token = _saved.load(url, who)
    client = Client(url, name=name, token=token, password=password)
    try:
        await client.open()
    except ServerError as exc:
        if token is None or exc.code not in ("bad_token", "token_expired", "token_revoked"):
            raise
        _saved.forget(url, who)  # a server that forgot its secret, or an old token
        client = Client(url, name=name, password=password)
        await client.open()
    if client.token:
        _saved.save(url, who, client.token)
    return client


def add_player_options(p: argparse.ArgumentParser, login_help: str = "") -> None:
    """--login and --url, for a command run as the player `--name` has been."""
    p.add_argument(
        "--login",
        action="store_true",
        help=login_help or "as your account (password asked, or MOOSE_PASSWORD)",
    )
    p.add_argument("--url", default=DEFAULT_URL, help=url_help())


def run_as_player(
    args: argparse.Namespace,
    command: str,
    act: Callable[[Client], Awaitable[None]],
    hint: Callable[[str], str] = lambda code: who_hint(code),
) -> int:
    """Run `act` with the kept session of `args.name` (the account's with --login) on
    `args.url`; 0, or 1 with the refusal or the unreachable server said on stderr."""
    password = ask("password: ", "MOOSE_PASSWORD") if args.login else None
    return asyncio.run(_as_player(args, password, command, act, hint))


async def _as_player(
    args: Any,
    password: str | None,
    command: str,
    act: Callable[[Client], Awaitable[None]],
    hint: Callable[[str], str],
) -> int:
    from moose.client import ConnectError, ServerError

    client: Client | None = None
    try:
        client = await open_kept(args.url, args.name, password)
        await act(client)
        return 0
    except ConnectError:
        print(f"cannot reach {args.url}: is `moose serve` running?", file=sys.stderr)
        return 1
    except ServerError as exc:
        print(f"{command}: {exc.message} ({exc.code}){hint(exc.code)}", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            await client.close()


def login_name() -> str:
    """The name to play under when none is given: this machine's login name."""
    with contextlib.suppress(Exception):
        return getpass.getuser()[:24] or "player"
    return "player"


def who_hint(code: str, *, in_game: bool = False, game_option: bool = False) -> str:
    """What names a player, said after a refusal to find one by a name alone ("" else).

    `game_option`: the command takes --game GAME, which names a guest as at that table.
    """
    if code != "no_such_player" or in_game:
        return ""
    then = " (give --game GAME to name them as at that table)" if game_option else ""
    return (
        f"; only an account's name or a player id (p_...) names a player: a guest's "
        f"name is not unique{then}"
    )
