"""The format of what the server stores, and which formats a release reads.

Every game's data map (the game hash's field ``data``, what every instance loads
to play a move) carries its format in the field ``fmt``. The maps written before
formats were numbered have no ``fmt``: that is format 0, the same fields as
format 1 (which only adds ``fmt``). The map is stored packed, or zlib-compressed
when it is read seldom (a finished game's, one waiting days for a move): that is
no format of its own, as every reader takes either (codec.unpack_stored).

Only the game data carries a number, because it is the one map Python reads,
changes and writes back: a release that misread it would write its misreading
over the game. The rest are read additively (within a format a field is only
ever added, never removed or given another meaning) and need none: a game's
stream entries and snapshots and its kept record are written once and never
rewritten; the JSON that scripts change in place (queue tickets, tables,
invites, arenas) goes through cjson's decode and encode, which keep every field
they do not know. A stream snapshot, too, may be stored zlib-compressed: this
release reads that (codec.unpack_stored) but writes none, so that the next one
may (for a game that waits days for a move) while this one still serves.

The rule that lets two releases serve the same games side by side (a rolling
upgrade, deploy/README.md):

- A release reads every format from `OLDEST` to `NEWEST` (at least the one the
  release before it writes, N-1), upgrading an older map on read
  (`_UPGRADES`); nothing is migrated in place: the next commit writes `WRITTEN`.
- A map of a format newer than `NEWEST` is refused with `UnknownFormat`, never
  read as if it were older: the instance writes nothing to that game (its
  request answers ``unavailable``, its loops log a warning and go on), so an
  old instance cannot corrupt a game a new one wrote. Its copy of a game in
  memory (play/copies.py) is committed only over the version it was read at:
  a newer release's commit makes it stale, and the game is read again, here.
- Fields are only ever added within a format, and an old reader ignores a field
  it does not know; but an old writer drops it when it rewrites the map. So a
  change whose loss would matter bumps the format in two releases: the first
  reads format F+1 (`NEWEST` = F+1) and still writes F, the next writes F+1.
  Upgrading one release at a time then never has an instance that meets a
  format it cannot read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError

__all__ = ["FIELD", "NEWEST", "OLDEST", "WRITTEN", "UnknownFormat", "read", "stamp"]

FIELD = "fmt"
WRITTEN = 1  # the format this release writes
NEWEST = 1  # the newest format it reads: WRITTEN, or WRITTEN + 1 ahead of a change
OLDEST = 0  # the oldest it reads (at least the format the release before wrote)

# Format f's map to format f + 1's: format 1 only added the field itself.
_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {0: lambda d: d}


class UnknownFormat(RedisError):
    """A stored map of a format this release does not read (a newer release wrote it).

    A storage error, so that every caller treats it as Redis out of reach for
    that one thing: the request answers ``unavailable`` and nothing is written.
    """

    def __init__(self, what: str, found: object) -> None:
        newer = isinstance(found, int) and found > NEWEST
        hint = "a newer release wrote it: upgrade this instance" if newer else "not a format"
        super().__init__(
            f"{what} is stored in format {found!r}, and this release reads formats "
            f"{OLDEST} to {NEWEST}: {hint}"
        )
        self.found = found


def stamp(d: dict[str, Any]) -> dict[str, Any]:
    """`d` with this release's format in it (the map is changed and returned)."""
    d[FIELD] = WRITTEN
    return d


def read(d: dict[str, Any], what: str) -> dict[str, Any]:
    """A stored map as this release's format: an older one upgraded, a newer one refused
    (`UnknownFormat`, naming `what`)."""
    found = d.get(FIELD, 0)
    if not isinstance(found, int) or isinstance(found, bool) or not OLDEST <= found <= NEWEST:
        raise UnknownFormat(what, found)
    for fmt in range(found, WRITTEN):
        d = _UPGRADES[fmt](d)
    return d
