"""`moose admin`: moderate a running service, talking to its Redis.

It takes the Redis the servers use (`--redis` / MOOSE_REDIS_URL /
MOOSE_REDIS_URL_FILE, as `moose serve`); without one it reaches the bundled
Redis of a `moose serve` running on this machine through its unix socket in
`--data-dir` (MOOSE_DATA_DIR). Every action is written to Redis, to the audit
log, and announced to every instance (moderation/moderator.py). Run as
``python -m moose_server.commands.admin`` where the `moose` entry points are
not installed.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import socket
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

Action = Callable[[argparse.Namespace, Any, Console], Awaitable[int]]


def add_parser(sub: Any) -> None:
    """Register `moose admin` and its subcommands."""
    parser = sub.add_parser(
        "admin",
        help="moderate the service: bans, sessions, seats, refusals, reports, audit log",
        description="Moderate a Moose House service through its Redis. Every action is "
        "audited (`moose admin audit`) and applied by every instance within a second.",
    )
    parser.add_argument(
        "--redis",
        "--redis-url",
        dest="redis_url",
        default=None,
        help="the servers' Redis URL (default: MOOSE_REDIS_URL, else the "
        "bundled Redis of a moose serve running in --data-dir)",
    )
    parser.add_argument(
        "--data-dir",
        default=None,
        help="the data folder of that moose serve (default: MOOSE_DATA_DIR, "
        "else the user data dir)",
    )
    parser.add_argument(
        "--by", default=None, help="who acts, for the audit log (default: your user name and host)"
    )
    parser.set_defaults(func=lambda args: _usage(parser))
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    _add_actions(actions)


def _add_actions(actions: Any) -> None:
    ban = actions.add_parser(
        "ban",
        help="ban an account or an address, for a time or for good",
        description="Ban an account (by name, or a guest by player id) or "
        "an address or network. The banned client is refused with the "
        "error `banned`; its open sockets close with code 4003.",
    )
    _target(ban)
    ban.add_argument(
        "--for",
        dest="duration",
        default=None,
        help="how long: 90s, 30m, 1h, 7d, 2w (default: for good)",
    )
    ban.add_argument("--reason", required=True, help="why (shown to the banned client)")
    unban = actions.add_parser("unban", help="lift a ban", description="Lift a ban.")
    _target(unban)
    unban.add_argument("--reason", default="", help="why (for the audit log)")
    actions.add_parser("bans", help="list the bans that hold now", description="List the bans.")
    end = actions.add_parser(
        "end-session",
        help="close every socket of a player",
        description="Close every socket of a player on every instance "
        "(close code 4004); they may come back unless banned.",
    )
    end.add_argument("player", help="an account's name, or a player id")
    end.add_argument("--reason", default="", help="why (for the audit log and the player)")
    take = actions.add_parser(
        "takeover",
        help="have the server's bot play a player's seat",
        description="Hand a seat to the server's bot (event `away`) "
        "until its player comes back (sends anything).",
    )
    take.add_argument("game", help="the game id (g_...)")
    take.add_argument("player", help="the seat's player: name as shown at the table, or id")
    take.add_argument("--reason", default="", help="why (for the audit log)")
    ref = actions.add_parser(
        "refusals",
        help="recent refusals, and the heaviest users of each limit",
        description="Recent refusals of limits by client, and per limit the clients refused most.",
    )
    ref.add_argument("--count", type=int, default=20, help="recent refusals shown (20)")
    ref.add_argument("--hours", type=int, default=1, help="hours summed for the heaviest (1)")
    ref.add_argument("--top", type=int, default=5, help="heaviest clients per limit (5)")
    rep = actions.add_parser(
        "reports",
        help="players' reports of players",
        description="The latest reports, newest first.",
    )
    rep.add_argument("--count", type=int, default=20, help="reports shown (20)")
    aud = actions.add_parser(
        "audit",
        help="the audit log of moderators' actions",
        description="The latest actions, newest first.",
    )
    aud.add_argument("--count", type=int, default=20, help="actions shown (20)")
    _add_arena(actions)
    for name, parser in actions.choices.items():
        parser.set_defaults(func=_runner(name))


def _add_arena(actions: Any) -> None:
    """`moose admin arena create/list/end`."""
    arena = actions.add_parser(
        "arena",
        help="arena tournaments: create, list, end",
        description="Create, list and end arena tournaments.",
    )
    steps = arena.add_subparsers(dest="arena_action", metavar="STEP", required=True)
    create = steps.add_parser(
        "create",
        help="create an arena",
        description="Create an arena: waiting members are seated together.",
    )
    create.add_argument("--name", required=True, help="its name, as the list shows it")
    create.add_argument("--minutes", type=float, required=True, help="how long it lasts")
    create.add_argument("--players", default="2-4", help="table sizes, MIN-MAX (2-4)")
    create.add_argument(
        "--for",
        dest="who",
        choices=("bots", "people", "all"),
        default="all",
        help="who may join (all)",
    )
    create.add_argument("--start-in", default=None, help="start later: 90s, 5m, 1h (now)")
    create.add_argument("--rated", action="store_true", help="its games change ratings")
    steps.add_parser("list", help="the arenas, last ending first", description="List arenas.")
    end = steps.add_parser(
        "end",
        help="end an arena's window now (games under way count)",
        description="End an arena now; games under way count.",
    )
    end.add_argument("arena", help="the arena's id")


def _target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("player", nargs="?", help="an account's name, or a player id (p_...)")
    parser.add_argument("--address", help="an IP address or network (an IPv6 address: its /64)")


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _runner(name: str) -> Callable[[argparse.Namespace], int]:
    """The subcommand `name`, importing the server only when it runs."""

    def run(args: argparse.Namespace) -> int:
        from moose_server.commands import require_server_extra

        if (missing := require_server_extra("admin")) is not None:
            print(missing, file=sys.stderr)
            return 2
        from moose_server.commands.admin_actions import ACTIONS

        return asyncio.run(_session(args, ACTIONS[name]))

    return run


def redis_url(given: str | None, data_dir: str | None) -> str:
    """The servers' Redis: given, MOOSE_REDIS_URL, or a running moose serve's bundled one."""
    from moose.redact import redact_url
    from moose_server.commands.admin_actions import AdminError
    from moose_server.commands.serve import PASSWORD_IN_ARGV
    from moose_server.settings import Settings

    if given and redact_url(given) != given:  # as moose serve says (commands/serve.py)
        print(f"moose admin: warning: {PASSWORD_IN_ARGV}", file=sys.stderr)
    settings = Settings.from_env(redis_url=given, data_dir=data_dir)
    if settings.redis_url:
        return settings.redis_url
    sock = Path(settings.data_dir).expanduser() / "redis" / "redis.sock"
    if not sock.exists():
        raise AdminError(
            f"no Redis given, and no moose serve runs with the data folder "
            f"{settings.data_dir}: give --redis URL or --data-dir"
        )
    return f"unix://{sock}"


async def _session(args: argparse.Namespace, action: Action) -> int:
    from moose_server.commands.admin_actions import AdminError, moderator
    from moose_server.storage.failures import StorageError

    # No markup: names and reasons are anyone's text, printed as they are ("[/]" or
    # "[link=...]" in a reason must neither crash the listing nor style it).
    console = Console(highlight=False, soft_wrap=False, markup=False)
    by = args.by or f"{getpass.getuser()}@{socket.gethostname()}"
    try:
        async with moderator(redis_url(args.redis_url, args.data_dir), by) as mod:
            return await action(args, mod, console)
    except AdminError as exc:
        print(f"moose admin: {exc}", file=sys.stderr)
        return 1
    except (StorageError, OSError) as exc:
        print(f"moose admin: cannot reach Redis: {exc}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    """`moose admin ...` without the `moose` entry points: python -m moose_server.commands.admin."""
    parser = argparse.ArgumentParser(prog="moose")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["admin", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
