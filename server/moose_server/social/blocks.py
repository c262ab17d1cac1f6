"""Players a player blocked: their chat is not delivered to the blocker,
and their challenges and rematch offers to the blocker are never told to them (a
challenge waits unanswered and expires, as one ignored would).

One hash per blocker in Redis (keys.blocks_key: blocked player id -> their name
when blocked), of at most `most` players, added to by a script
(lua/bounded_add.lua) so that two instances cannot pass the bound; it expires
`KEPT_MS` after its last change.
"""

from __future__ import annotations

from moose_server.errors import Refusal
from moose_server.limits.limiter import full
from moose_server.social.calls import BoundedAddCall
from moose_server.storage.codec import as_int, as_text
from moose_server.storage.gateway import Gateway
from moose_server.storage.keys import blocks_key

__all__ = ["KEPT_MS", "MOST", "Blocks"]

MOST = 200
KEPT_MS = 180 * 86_400_000  # a block lasts half a year after the blocker's last change


class Blocks:
    """Who blocked whom, shared by every instance."""

    def __init__(self, redis: Gateway, most: int = MOST) -> None:
        self.redis = redis
        self.most = most

    async def blocked(self, by_player: str, whom: str) -> bool:
        """Whether `by_player` blocked `whom`."""
        return await self.redis.hexists(blocks_key(by_player), whom)

    async def blockers(self, players: list[str], whom: str) -> set[str]:
        """Those of `players` who blocked `whom`."""
        if not players:
            return set()
        # One round trip for a whole room.
        found = await self.redis.all([self.redis.hexists(blocks_key(p), whom) for p in players])
        return {p for p, hit in zip(players, found, strict=True) if hit}

    async def block(self, by_player: str, whom: str, name: str = "") -> bool:
        """Block `whom` (called `name`); False if blocked already; `too_many_blocks` when
        the list is full."""
        if whom == by_player:
            raise Refusal("bad_message", "you cannot block yourself")
        call = BoundedAddCall(blocks_key(by_player), whom, name or whom, self.most, KEPT_MS)
        added = as_int(await self.redis.run(call, *call.build()))
        if added < 0:
            raise full("blocks", f"you block {self.most} players already; unblock one first")
        return added == 1

    async def unblock(self, by_player: str, whom: str) -> bool:
        """Unblock `whom`; False if they were not blocked."""
        return bool(await self.redis.hdel(blocks_key(by_player), whom))

    async def of(self, by_player: str) -> dict[str, str]:
        """Every player `by_player` blocked: id -> name, sorted by id."""
        found = await self.redis.hgetall(blocks_key(by_player))
        return {as_text(k): as_text(v) for k, v in sorted(found.items())}
