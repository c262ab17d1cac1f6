"""Game records fetched from a server, for `moose record`, `moose verify GAME` and
`moose play`: the refusals said plainly, and where a record is saved.

A finished game's record comes over the socket (`record`, PROTOCOL.md "The
record"): a queue game's for anyone while the server keeps it, a private table's
for its players or with its join code.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from moose import record as records

if TYPE_CHECKING:
    from moose.client import Client

__all__ = ["GAME_ID", "fetch", "file_name", "kept_path"]

GAME_ID = re.compile(r"g_[0-9a-z]+")

# What each refusal of `record` means to the person who asked, by its code.
_REFUSED = {
    "no_such_game": "no finished game {game} on this server (it never was, or its record "
    "is no longer kept)",
    "not_over": "game {game} is still being played: its record comes at its end",
    "not_in_game": "game {game} is a private table's: give its join code with --code",
    "bad_code": "that is not the join code of game {game}'s table",
}


async def fetch(client: Client, game: str, code: str | None = None) -> records.Record:
    """The record of a finished game, checked; a RecordError that says why not."""
    from moose.client import ServerError

    try:
        data = await client.record(game, code)
    except ServerError as exc:
        said = _REFUSED.get(exc.code, "{game}: " + exc.message + f" ({exc.code})")
        raise records.RecordError(said.format(game=game)) from None
    return records.validate(data)


def file_name(game: str) -> str:
    """A record's file name, as the page's download names it: `moose-g_....json`."""
    return f"moose-{game}.json"


def kept_path(game: str) -> Path:
    """Where `moose play` keeps the record of a game it played (the user's data folder)."""
    import platformdirs

    folder = Path(platformdirs.user_data_dir("moose-house", appauthor=False)) / "records"
    return folder / file_name(game)
