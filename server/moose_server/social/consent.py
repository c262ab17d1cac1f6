"""Who may challenge a player: their own setting, kept with their profile.

`everyone` (the default), `registered` (players with an account), `following`
(players they follow) or `nobody`, as Lichess offers. The field `challenges` of
the player's profile hash (keys.profile_key); a guest's profile expires
`guest_ttl` after the change, as a guest's rating does.
"""

from __future__ import annotations

from moose.messages import CHALLENGE_SETTINGS
from moose_server.errors import Refusal
from moose_server.storage.codec import as_text_or_none
from moose_server.storage.gateway import Gateway
from moose_server.storage.keys import follows_key, profile_key

__all__ = ["SETTINGS", "Consent"]

SETTINGS = CHALLENGE_SETTINGS
FIELD = "challenges"
REFUSED = {
    "registered": "{} accepts challenges from players with an account only",
    "following": "{} accepts challenges only from players they follow",
    "nobody": "{} accepts no challenges",
}


class Consent:
    """Each player's setting of who may challenge them, and its check."""

    def __init__(self, redis: Gateway, guest_ttl: float) -> None:
        self.redis = redis
        self.guest_ttl_ms = max(1, round(guest_ttl * 1000))

    async def setting(self, player: str) -> str:
        """Who may challenge `player` (one of SETTINGS)."""
        found = as_text_or_none(await self.redis.hget(profile_key(player), FIELD))
        return found if found in SETTINGS else "everyone"

    async def change(self, player: str, setting: str) -> str:
        """Keep `player`'s setting; `bad_message` for one not in SETTINGS."""
        if setting not in SETTINGS:
            raise Refusal("bad_message", f"'challenges' must be one of {', '.join(SETTINGS)}")
        key = profile_key(player)
        # Sent in one loop turn, so in one round trip (the gateway's batch).
        written, name = self.redis.hset(key, {FIELD: setting}), self.redis.hget(key, "name")
        await written
        if await name is None:  # a guest: kept as their rating is
            await self.redis.pexpire(key, self.guest_ttl_ms)
        return setting

    async def check(self, whom: str, whom_name: str, challenger: str) -> None:
        """Refuse (`not_allowed`) a challenge `whom`'s setting does not let through."""
        setting = await self.setting(whom)
        if setting == "everyone":
            return
        if setting == "registered":
            allowed = await self.redis.hget(profile_key(challenger), "name") is not None
        elif setting == "following":
            allowed = await self.redis.hexists(follows_key(whom), challenger)
        else:
            allowed = False
        if not allowed:
            raise Refusal("not_allowed", REFUSED[setting].format(whom_name))
