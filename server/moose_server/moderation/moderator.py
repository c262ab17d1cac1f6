"""What `moose admin` does: each action written to Redis, audited, announced.

An action is kept first (a ban in the bans hash), then written to the audit
log (who, what, when, why), then published as a notice that every instance
applies at once and logs (moderation/notices.py). An instance that misses the notice
still finds a ban in Redis within `ban_refresh` seconds. Time is Redis' clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from moose_server.accounts import PlayerStore, name_key
from moose_server.moderation.bans import Ban, ban_network
from moose_server.moderation.store import ModerationStore
from moose_server.play import GameError, Games
from moose_server.storage.store import Store

__all__ = ["ModerationError", "Moderator", "Target", "parse_duration"]

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


class ModerationError(Exception):
    """An action that cannot be done as asked; the message says why."""


def parse_duration(text: str | None) -> int:
    """ "90s", "30m", "1h", "7d", "2w" in ms; None, "", "permanent": 0 (for good)."""
    if text is None or text.strip().lower() in ("", "permanent", "forever"):
        return 0
    found = DURATION.match(text.lower())
    if found is None or float(found[1]) <= 0:
        raise ModerationError(f"{text!r} is not a duration such as 90s, 30m, 1h, 7d, 2w")
    return int(float(found[1]) * UNITS[found[2]] * 1000)


@dataclass(frozen=True)
class Target:
    """Whom an action is about: an account (player id, name) or an address (a network)."""

    kind: str  # "account" or "address"
    subject: str
    name: str = ""

    @property
    def field(self) -> str:
        """Its field in the bans hash."""
        return f"{self.kind}:{self.subject}"

    def __str__(self) -> str:
        return f"{self.name} ({self.subject})" if self.name else self.subject


class Moderator:
    """The actions of one moderator (`by`) on the service's Redis."""

    def __init__(
        self,
        records: ModerationStore,
        store: Store,
        players: PlayerStore,
        games: Games,
        by: str,
        tokens_kept_ms: int,
    ) -> None:
        self.records = records
        self.tokens_kept_ms = tokens_kept_ms  # how long a token issued now stays valid
        self.store = store
        self.players = players
        self.games = games
        self.by = by

    async def account(self, who: str) -> Target:
        """An account by name, or a player (a guest too) by id."""
        player = who if who.startswith("p_") else await self.players.name_owner(name_key(who))
        if player is None:
            raise ModerationError(f"no account is called {who!r} (a guest: give its player id)")
        [profile] = await self.players.profiles([player])
        return Target("account", player, profile.get("name", "" if who == player else who))

    @staticmethod
    def address(text: str) -> Target:
        """An address or a network (an IPv6 address stands for its /64)."""
        try:
            return Target("address", ban_network(text))
        except ValueError:
            raise ModerationError(f"{text!r} is not an IP address or network") from None

    async def ban(self, target: Target, reason: str, for_ms: int) -> tuple[Ban, int]:
        """Ban `target` for `for_ms` (0: for good); the ban and how many instances heard."""
        now = await self.store.now_ms()
        ban = Ban(
            target.kind,
            target.subject,
            reason,
            now + for_ms if for_ms else 0,
            self.by,
            now,
            target.name,
        )
        await self.records.set_ban(ban.field, ban.record())
        if target.kind == "account":  # no token of before the ban works after it
            await self.players.revoke_tokens(target.subject, self.tokens_kept_ms)
        await self._audit("ban", target, reason, now, until=ban.until or "permanent")
        return ban, await self.records.publish(
            {"action": "ban", "ban": ban.record(), "by": self.by}
        )

    async def unban(self, target: Target, reason: str) -> int:
        """Lift the ban on `target`; how many instances heard."""
        if not await self.records.remove_bans([target.field]):
            raise ModerationError(f"{target} is not banned")
        await self._audit("unban", target, reason, await self.store.now_ms())
        return await self.records.publish({"action": "unban", "field": target.field, "by": self.by})

    async def bans(self) -> list[Ban]:
        """The bans that hold now (those that ended are forgotten), newest first."""
        now = await self.store.now_ms()
        found = [Ban.of(r) for r in (await self.records.bans()).values()]
        await self.records.remove_bans([b.field for b in found if not b.active(now)])
        return sorted((b for b in found if b.active(now)), key=lambda b: -b.at)

    async def end_session(self, target: Target, reason: str) -> int:
        """Close every socket of the player, on every instance; how many instances heard."""
        await self._audit("end_session", target, reason, await self.store.now_ms())
        notice = {
            "action": "end_session",
            "player": target.subject,
            "reason": reason,
            "by": self.by,
        }
        return await self.records.publish(notice)

    async def take_over(self, game_id: str, who: str, reason: str) -> tuple[Target, int]:
        """Hand a seat to the server's bot until its player comes back; the seat's player
        and how many instances heard."""
        try:
            game = await self.games.load(game_id)
        except GameError as exc:
            raise ModerationError(exc.message) from None
        seat = game.seat_named(who)
        player = game.players[seat] if seat is not None else None
        if seat is None or player is None:
            raise ModerationError(f"no player of game {game_id} is called {who!r}")
        if game.finished:  # over by the rules, or abandoned
            raise ModerationError(f"game {game_id} is over")
        if game.away[seat]:
            raise ModerationError(f"seat {seat} of {game_id} is played by the bot already")
        target = Target("account", player, game.names[seat])
        await self._audit("takeover", target, reason, await self.store.now_ms(), game=game_id)
        notice = {"action": "takeover", "game": game_id, "player": player, "by": self.by}
        return target, await self.records.publish(notice)

    async def _audit(self, action: str, target: Target, reason: str, now: int, **more: Any) -> None:
        await self.records.audit(
            {
                "at": now,
                "by": self.by,
                "action": action,
                "target": str(target),
                "reason": reason,
                **more,
            }
        )
