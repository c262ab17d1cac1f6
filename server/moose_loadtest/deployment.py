"""What `moose loadtest` knows of a server: only what the server documents for operators.

The load test talks to a server through the public protocol (PROTOCOL.md) and
measures it from outside. The few facts it needs beyond that are kept here, each
read from the documentation named beside it, never from the server's code (a test
checks that no module of this package imports `moose_server`):

- the defaults of the settings table in deploy/README.md ("Settings"), and the
  same ``MOOSE_*`` variables an operator sets, read from our environment (which a
  server we spawn shares);
- the Redis keys of deploy/README.md ("Keys read from outside"): a game's keys,
  to sum its memory, and a player's rating profile, which the matchmaking phase
  fills in before its players queue;
- where `moose serve` puts its bundled Redis (README.md, "Serve and play in the
  terminal").

When the server changes one of these, its documentation and this module change
together: tests/test_loadtest.py checks them against the server's code, and runs
the load test against a real server.
"""

from __future__ import annotations

import os
import re
import zlib
from pathlib import Path
from typing import Any

__all__ = [
    "BURST",
    "RATE",
    "SOCKETS_PER_ADDRESS",
    "TURN_TIME",
    "buckets",
    "embedded_redis_url",
    "game_grace",
    "game_keys",
    "is_game_hash",
    "key_kind",
    "max_sockets",
    "queue_rating",
]

# deploy/README.md, "Settings": the defaults of a server nobody configured.
RATE = 20.0  # MOOSE_RATE: messages a second a socket may send...
BURST = 40  # MOOSE_BURST: ...and at once
SOCKETS_PER_ADDRESS = 64  # MOOSE_MAX_SOCKETS_PER_ADDRESS: open sockets of one client address
TURN_TIME = 30.0  # MOOSE_TURN_TIME: seconds for a turn
MAX_SOCKETS = 20_000  # MOOSE_MAX_SOCKETS: open sockets of one instance
GAME_GRACE = 60.0  # MOOSE_GAME_GRACE: seconds a finished game keeps its events
BUCKETS = 16  # MOOSE_BUCKETS: game buckets


def _env(name: str, default: float) -> float:
    raw = os.environ.get(f"MOOSE_{name}", "")
    return float(raw) if raw else default


def max_sockets() -> int:
    """MOOSE_MAX_SOCKETS as a spawned server (sharing our environment) reads it."""
    return int(_env("MAX_SOCKETS", MAX_SOCKETS))


def game_grace() -> float:
    """MOOSE_GAME_GRACE as a spawned server reads it, in seconds."""
    return _env("GAME_GRACE", GAME_GRACE)


def buckets() -> int:
    """MOOSE_BUCKETS as a spawned server reads it (every instance uses the same)."""
    return int(_env("BUCKETS", BUCKETS))


# deploy/README.md, "Keys read from outside". A game's keys carry its bucket's hash
# tag; its bucket is the crc32 of its id modulo MOOSE_BUCKETS.
GAME_KEYS = (
    "moose:{{b{bucket}}}:game:{game}",
    "moose:{{b{bucket}}}:events:{game}",
    "moose:{{b{bucket}}}:moves:{game}",
    "moose:{{b{bucket}}}:record:{game}",
)
PROFILE_KEY = "moose:{{pl}}:p:{player}"
PROFILE_TTL_MS = 3_600_000  # the profiles we write are gone an hour after the run
_ID = re.compile(r"[a-z]+_[0-9a-z]+")  # g_..., p_...: a game's or a player's id


def game_keys(game: str, bucket_count: int) -> list[str]:
    """Every key one game holds: its hash, events, move ids and (rated) kept record."""
    bucket = zlib.crc32(game.encode()) % bucket_count
    return [k.format(bucket=bucket, game=game) for k in GAME_KEYS]


def _pattern(template: str) -> re.Pattern[str]:
    """A key template as a regular expression: any bucket, any id."""
    text = re.escape(template.format(bucket="\0", game="\1"))
    return re.compile(text.replace("\0", r"\d+").replace("\1", r"[^:]+"))


GAME_HASH = _pattern(GAME_KEYS[0])


def is_game_hash(key: str) -> bool:
    """Whether a key is a game's hash: the first key of a move's commit script."""
    return GAME_HASH.fullmatch(key) is not None


def key_kind(key: str) -> str:
    """What a key is: its name after its hash tag, without ids (``moose:{b3}:game:g_1f``: game)."""
    parts = key.split(":")
    tags = [i for i, p in enumerate(parts) if p.startswith("{")]
    kept = [p for p in parts[tags[-1] + 1 if tags else 0 :] if not _ID.fullmatch(p)]
    return ":".join(kept) or key


def queue_rating(pipe: Any, player: str, name: str, mu: float, sigma: float, games: int) -> None:
    """Add to a redis-py pipeline the commands that give a player this rating.

    The public queue seats players by the rating in their profile; a guest has
    none until it has played rated games, so the matchmaking phase writes one.
    """
    key = PROFILE_KEY.format(player=player)
    pipe.hset(
        key, mapping={"name": name, "mu": repr(mu), "sigma": repr(sigma), "games": games, "bot": 0}
    )
    pipe.pexpire(key, PROFILE_TTL_MS)


def embedded_redis_url(data_dir: str | os.PathLike[str]) -> str:
    """The bundled Redis of a `moose serve --data-dir DATA_DIR` given no --redis."""
    return f"unix://{Path(data_dir) / 'redis' / 'redis.sock'}"
