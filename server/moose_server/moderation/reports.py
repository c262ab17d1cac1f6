"""Players' reports of players, for `moose admin reports`.

A report names a player (an account's name, a player id, or the name shown at
a game's table when it names the `game`), with a short reason. Each report kept
takes a token of the limiter's `report` (limits/rates.py), the reporter's and
their address's, shared by every instance: past that it is refused with
`Limited` (`rate_limited`); a refused report counts against nothing. Reports are
kept in a capped stream (moderation/store.py).
"""

from __future__ import annotations

import unicodedata

from moose_server.accounts import PlayerStore, name_key
from moose_server.errors import Refusal
from moose_server.limits.limiter import Limiter
from moose_server.moderation.store import ModerationStore

__all__ = ["Reports", "clean_reason"]

MAX_REASON = 200


def clean_reason(text: str) -> str:
    """The reason as kept: one line, no control or format characters; `bad_message` if empty."""
    kept = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text)
    kept = " ".join(kept.split())[:MAX_REASON]
    if not kept:
        raise Refusal("bad_message", "a report needs a reason")
    return kept


class Reports:
    """Takes players' reports: checked, metered, kept."""

    def __init__(self, moderation: ModerationStore, limiter: Limiter, players: PlayerStore) -> None:
        self.moderation = moderation
        self.limiter = limiter  # reports per reporter and per address (rates `report`)
        self.players = players

    async def find(self, target: str) -> tuple[str, str]:
        """(player id, name) of an account by name or of a player by id; or no_such_player."""
        player = (
            target if target.startswith("p_") else await self.players.name_owner(name_key(target))
        )
        profile = (await self.players.profiles([player]))[0] if player else {}
        if not player or not profile:
            raise Refusal("no_such_player", f"no player is called {target[:24]!r}")
        return player, profile.get("name", target)

    async def keep(self, reporter: str, address: str, **fields: str | int | None) -> str:
        """Keep a report (reporter_name, player, name, game, reason, at), within the
        reporter's and the address' limit; `Limited` takes nothing."""
        async with self.limiter.attempt("report", player=reporter, address=address):
            return await self.moderation.add_report(
                {"reporter": reporter, "address": address, **fields}
            )
