"""The list of live public games, and the players online and waiting, for lobbies.

The index of live games is in Redis (store.py), so every instance lists the
same games: the lobby adds a game dealt from the public queue (never one of a
private table), and the commit that ends a game takes it out. Each instance
writes how many players it serves now and then, and reads everyone's total.

A socket that asks `games` with `follow` gets the list again whenever it
changes: the instance reads it once per `live_interval` while anyone here
follows it, and sends it to its followers when it differs from the last one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

from moose_server.matchmaking.matchmaker import Matchmaker
from moose_server.settings import Settings
from moose_server.storage.failures import one_round
from moose_server.storage.store import Store

__all__ = ["LiveGames"]

log = logging.getLogger(__name__)

LISTED = 50  # games in one `game_list`, newest first
ONLINE_TTL = 3  # intervals an instance's count of players stays without being renewed


class Follower(Protocol):
    """What the feed needs of a socket."""

    def send(self, message: dict[str, Any]) -> None:
        """Queue a message for the socket."""


class LiveGames:
    """The `game_list` of this service, and the sockets of this instance that follow it."""

    def __init__(
        self,
        store: Store,
        matchmaker: Matchmaker,
        settings: Settings,
        players_here: Callable[[], int],
    ) -> None:
        self.store = store
        self.matchmaker = matchmaker
        self.settings = settings
        self.players_here = players_here
        self.followers: set[Follower] = set()
        self.online = 0
        self._last: dict[str, Any] | None = None
        self._read_at = -1e9  # loop time of `_last`
        self._sent: dict[str, Any] | None = None  # what the followers were last sent

    def follow(self, follower: Follower) -> None:
        """Send the list to this socket whenever it changes."""
        self.followers.add(follower)

    async def answer(self) -> dict[str, Any]:
        """The list a `games` request is answered with.

        An answer that is not what the followers were last sent (it was read
        before the last tick, or since) makes the next tick send its list to
        all: otherwise a follower answered "0 online" before its own hello was
        counted never hears "1 online" when the followers before it were sent that.
        """
        now = await self.snapshot()
        if self._sent is not None and _changed(self._sent, now):
            self._sent = None
        return now

    def unfollow(self, follower: Follower) -> None:
        """Stop sending the list to this socket."""
        self.followers.discard(follower)

    async def snapshot(self) -> dict[str, Any]:
        """The `game_list` message as it is now (read at most once per interval)."""
        loop = asyncio.get_running_loop()
        if self._last is not None and loop.time() - self._read_at < self.settings.live_interval:
            return self._last
        sizes = await self.matchmaker.queue_sizes()
        games = await self.store.live_games(LISTED)
        self._last = {
            "type": "game_list",
            "games": games,
            "waiting": sum(sizes.values()),
            "online": self.online,
            "server_time": await self.store.now_ms(),
        }
        self._read_at = loop.time()
        return self._last

    async def tick(self) -> None:
        """Count our players into the total; tell the followers if the list changed."""
        ttl = int(self.settings.live_interval * ONLINE_TTL * 1000)
        self.online = await self.store.online(
            self.settings.instance_id, self.players_here(), max(ttl, 1000)
        )
        if not self.followers:
            return
        self._read_at = -1e9
        now = await self.snapshot()
        # Compared with what was sent, not with the last read: a `games` request
        # between two ticks reads a change that the older followers have not seen.
        if self._sent is None or _changed(self._sent, now):
            self._sent = now
            for follower in list(self.followers):
                follower.send(now)

    async def run(self) -> None:
        """Tick every `live_interval` until cancelled."""
        while True:
            await one_round(self.tick, "the live games list", log)
            await asyncio.sleep(self.settings.live_interval)


def _changed(before: dict[str, Any], now: dict[str, Any]) -> bool:
    """Whether a follower would see a difference (the server time alone is none)."""
    return any(before[k] != now[k] for k in ("games", "waiting", "online"))
