"""Players' reports of players, for `moose admin reports`.

A report names a player (an account's name, a player id, or the name shown at
a game's table when it names the `game`), with a short reason. Each report
takes a token from two buckets shared by every instance, the reporter's and
their address's (`report_burst` at once, then one every `report_interval`
seconds): past that it is refused with `Limited` (`rate_limited`). Reports are
kept in a capped stream (moderation/store.py).
"""

from __future__ import annotations

import asyncio
import unicodedata

from moose_server.accounts import PlayerStore, name_key
from moose_server.addresses import limit_subject
from moose_server.errors import Refusal
from moose_server.limits.limits import Limited
from moose_server.moderation.store import ModerationStore
from moose_server.settings import Settings
from moose_server.storage.keys import limit_key
from moose_server.storage.scripts import LimitCall
from moose_server.storage.store import Store

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

    def __init__(
        self, moderation: ModerationStore, store: Store, players: PlayerStore, settings: Settings
    ) -> None:
        self.moderation = moderation
        self.store = store  # the rate limits
        self.players = players
        self.interval_ms = max(1, round(settings.report_interval * 1000))
        self.burst = settings.report_burst

    async def find(self, target: str) -> tuple[str, str]:
        """(player id, name) of an account by name or of a player by id; or no_such_player."""
        player = (
            target if target.startswith("p_") else await self.players.name_owner(name_key(target))
        )
        profile = (await self.players.profiles([player]))[0] if player else {}
        if not player or not profile:
            raise Refusal("no_such_player", f"no player is called {target[:24]!r}")
        return player, profile.get("name", target)

    async def take(self, reporter: str, address: str) -> None:
        """Pay for one report, per reporter and per address; `Limited` when none is left."""
        calls = [
            LimitCall(limit_key("report", "player", reporter), self.interval_ms, self.burst),
            LimitCall(
                limit_key("report", "address", limit_subject(address)), self.interval_ms, self.burst
            ),
        ]
        waits = await asyncio.gather(*(self.store.limit(c) for c in calls))
        if any(waits):
            raise Limited("too many reports; wait and try again", max(waits))

    async def keep(self, **fields: str | int | None) -> str:
        """Keep a report (reporter, reporter_name, address, player, name, game, reason, at)."""
        return await self.moderation.add_report(fields)
