"""Who is connected, on any instance: a challenge goes only to a player who is here;
and which games they have open (`looking`): a notice never goes to a player who
has its game open on any instance.

Each instance writes, for every player with a socket on it, its own word in the
player's key (keys.presence_key, a hash: instance -> when the word lapses, and
`name`: the name they play under, which a guest has nowhere else), at hello and
again every third of `presence_ttl`; a player's last socket here closing takes
it out. An instance that dies stops renewing, so its word lapses by itself: no
count outlives the process that kept it.

The renewals are spread over that third, a slice every `TICK`, as the heartbeats
are (net/heartbeats.py): written 500 players a batch at once, 10,000 players
held the event loop for a few ms twenty times in a row every 20 s, and a lobby of
10,000 had a move p99 of 20 ms against 5 ms at 2,000 (BENCHMARKS.md).

A player whose every live word is that of an instance whose heartbeat
(ops/liveness.py) is gone or stale is `stranded`: their instance died and they
are reconnecting (or about to), so the deadline loop spares their turn once
(play/timers.py). A heartbeat is stale when it has less than half its ttl left:
a live instance renews it every third of its ttl.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Iterable

from moose_server.net.router import Router
from moose_server.net.session import Message, Session, player_of
from moose_server.storage.failures import StorageError
from moose_server.storage.gateway import Gateway, Pending
from moose_server.storage.keys import instance_key, looking_key, presence_key

__all__ = ["Presence"]

log = logging.getLogger(__name__)

TICK = 0.1  # seconds between two slices of the renewals (at most)
BEAT = b"1"  # a heartbeat's value (ops/liveness.py); b"dead" marks one taken for dead


def _lives(fields: dict[bytes, bytes], now: int) -> bool:
    """Whether some instance's word in a presence hash has not lapsed at `now` (ms)."""
    return any(int(v) > now for k, v in fields.items() if k != b"name")


class Presence:
    """This instance's word on who is connected, and the service's answer to "is X here"."""

    def __init__(
        self,
        redis: Gateway,
        instance: str,
        ttl: float,
        local: Callable[[], Iterable[tuple[str, str]]],
        still_here: Callable[[str], bool] = lambda player: True,
        instance_ttl: float = 10.0,
    ) -> None:
        self.redis = redis
        self.instance = instance
        self.ttl_ms = max(1000, round(ttl * 1000))
        self.local = local  # (player, name) of each player with a socket here now
        # Whether a player has a socket here still: a slice renews only those.
        self.still_here = still_here
        # A heartbeat with less left than this missed a beat: its instance died.
        self.stale_ms = max(1, round(instance_ttl * 1000)) // 2

    def register(self, router: Router) -> None:
        """A player's last socket here closing takes their word out."""
        router.on_closed(self.closed)

    async def arrived(self, conn: Session, resumed: bool) -> Message:
        """A socket said hello: its player is here (no field for `welcome`)."""
        await self.here([(player_of(conn), conn.name)])
        return {}

    async def closed(self, conn: Session) -> None:
        """The socket closed: its player has left this instance if it was their last."""
        if conn.player is not None and not self.still_here(conn.player):
            await self.left(conn.player)

    async def here(self, players: list[tuple[str, str]]) -> None:
        """Say that these (player, name) have a socket on this instance."""
        if not players:
            return
        now = await self._now()
        writes: list[Pending[object]] = []
        for player, name in players:
            key = presence_key(player)
            writes.append(self.redis.hset(key, {self.instance: now + self.ttl_ms, "name": name}))
            writes.append(self.redis.pexpire(key, self.ttl_ms))
            # The games they follow (play/hub.py) live as long as their presence.
            writes.append(self.redis.pexpire(looking_key(player), self.ttl_ms))
        await self.redis.all(writes)

    async def left(self, player: str) -> None:
        """The player's last socket on this instance closed."""
        await self.redis.hdel(presence_key(player), self.instance)

    async def online(self, player: str) -> str | None:
        """The name of the player when some live instance has a socket of theirs, else None."""
        now = await self._now()
        fields = await self.redis.hgetall(presence_key(player))
        name = fields.get(b"name")
        return name.decode() if name is not None and _lives(fields, now) else None

    async def looking(self, player: str, game: str, anywhere: bool = False) -> bool:
        """Whether a socket of the player follows the game on a live instance (with
        `anywhere`: whether the player has a socket on one at all)."""
        now = await self._now()
        fields, looks = await self.redis.all(
            [self.redis.hgetall(presence_key(player)), self.redis.hgetall(looking_key(player))]
        )
        if anywhere:
            return _lives(fields, now)
        prefix = f"{game} ".encode()
        for look in looks:
            if look.startswith(prefix):
                word = fields.get(look[len(prefix) :])
                if word is not None and int(word) > now:
                    return True
        return False

    async def stranded(self, player: str) -> bool:
        """Whether the player has a live word only from instances whose heartbeat is
        gone or stale: they were connected through an instance that died. False when
        they have no live word at all (they left) or one from a healthy instance."""
        clock, read = self.redis.time(), self.redis.hgetall(presence_key(player))  # one batch
        sec, usec = await clock
        fields = await read
        now = int(sec) * 1000 + int(usec) // 1000
        instances = [k.decode() for k, v in fields.items() if k != b"name" and int(v) > now]
        if not instances:
            return False
        reads: list[Pending[object]] = []
        for key in map(instance_key, instances):
            reads += [self.redis.get(key), self.redis.pttl(key)]
        beats = await self.redis.all(reads)
        for value, left in zip(beats[::2], beats[1::2], strict=True):
            if value == BEAT and isinstance(left, int) and left >= self.stale_ms:
                return False  # a healthy instance has them
        return True

    async def online_many(self, players: list[str]) -> list[bool]:
        """Whether each player has a socket on some live instance (one round trip)."""
        if not players:
            return []
        now = await self._now()
        found = await self.redis.all([self.redis.hgetall(presence_key(p)) for p in players])
        return [_lives(fields, now) for fields in found]

    async def _now(self) -> int:
        sec, usec = await self.redis.time()
        return int(sec) * 1000 + int(usec) // 1000

    async def run(self) -> None:
        """Renew this instance's word for its players until cancelled: each player's
        once every third of the ttl, a slice of them every tick. A cycle lasts that
        third however few players there are (a lobby of one is written once a cycle,
        not every tick)."""
        cycle = self.ttl_ms / 3000
        tick = min(TICK, cycle / 4)
        slices = max(1, round(cycle / tick))  # ticks a cycle
        todo: list[tuple[str, str]] = []
        each = ticks = 0
        while True:
            await asyncio.sleep(tick)
            if ticks == 0:  # a new cycle: the players here now, in slices
                todo = list(self.local())
                each, ticks = math.ceil(len(todo) / slices), slices
            ticks -= 1
            cut = max(0, len(todo) - each)
            batch = todo[cut:]
            del todo[cut:]
            if not batch:
                continue
            try:
                await self.here([(p, name) for p, name in batch if self.still_here(p)])
            except (StorageError, OSError) as exc:
                log.warning("cannot renew who is connected: %s", exc)
