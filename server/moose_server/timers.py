"""The deadline loop: every instance polls, claims due deadlines, plays the timeouts.

Claiming (lua/claim.lua) pushes an entry a lease into the future, so two
instances never work on it at once and one that dies after claiming only
delays it until the lease ends. The timeout itself is a commit checked against
the game's version: it fires once, whoever claims it.

A deadline that fell due while nobody could claim it (Redis unreachable or
restarted, no instance running) is not played at once when the service is
back: every deadline then moves to at least `outage_grace` seconds later, so
the player whose time ran out during the outage still gets a turn.

The timeouts one poll claims are played side by side (at most `AT_ONCE` at a
time): one after another, a poll that claimed a hundred on a busy instance took
seconds, and the next poll came so late that it looked like an outage (every
deadline of the bucket moved `outage_grace` later; seen at 20,000 players,
BENCHMARKS.md issue 14).
"""

from __future__ import annotations

import asyncio
import logging

from redis.exceptions import RedisError

from moose_server.games import GameError, Games
from moose_server.settings import Settings
from moose_server.store import Store
from moose_server.tasks import cancelling

__all__ = ["Timers"]

log = logging.getLogger(__name__)

OUTAGE_AFTER = 1.0  # seconds without a deadline claim that make an outage...
OUTAGE_POLLS = 4  # ...or this many poll intervals, if that is longer
AT_ONCE = 32  # timeouts of one poll played at the same time, at most


class Timers:
    """Polls the deadline sets of every bucket and applies what is due."""

    def __init__(self, store: Store, games: Games, settings: Settings) -> None:
        self.store = store
        self.games = games
        self.settings = settings
        self.running = True

    async def tick(self) -> int:
        """Claim and apply every due deadline once; return how many were due."""
        s = self.settings
        # A gap of several polls of every instance: nobody could claim (see claim.lua).
        outage = max(OUTAGE_AFTER, OUTAGE_POLLS * s.poll_interval)
        due = await self.store.claim(
            int(s.lease * 1000), int(outage * 1000), int(s.outage_grace * 1000)
        )
        if due:
            limit = asyncio.Semaphore(AT_ONCE)

            async def bounded(game: str, now: int) -> None:
                async with limit:
                    await self._timeout(game, now)

            await asyncio.gather(*(bounded(game, now) for game, now in due))
        return len(due)

    async def _timeout(self, game: str, now: int) -> None:
        """Play one claimed timeout; a failure is logged (the lease brings it back)."""
        try:
            await self.games.timeout(game, now)
        except (GameError, RedisError, OSError) as exc:
            if cancelling():
                raise asyncio.CancelledError from exc
            # The claim's lease brings it back at a later poll.
            log.warning("timeout of %s failed: %s", game, exc)
        except Exception:
            log.exception("timeout of %s failed", game)

    def stop(self) -> None:
        """Claim no more deadlines (draining): `run` ends after the poll under way."""
        self.running = False

    async def run(self) -> None:
        """Poll until stopped or cancelled."""
        while self.running:
            try:
                await self.tick()
            except (RedisError, OSError) as exc:
                if cancelling():
                    raise asyncio.CancelledError from exc
                log.warning("deadline poll cannot reach Redis: %s", exc)
            await asyncio.sleep(self.settings.poll_interval)
