"""The lobby: matchmaking meets games. Forms queue tables and starts private ones.

Every instance runs the loop; `Matchmaker.form_tables` is atomic in Redis, so a
queued player is seated once whichever instance forms the table. A formed table
waits in Redis until its game is dealt; should the dealer fail (its Redis call,
or the instance itself), another round hands the table out again after a lease,
and the game id, made from the table's key, keeps that from dealing two games.
Table changes reach everyone seated through the player channel.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

from moose_server.deals import Deals, SeedStore
from moose_server.matchmaking.matchmaker import FormedTable, Matchmaker, TableInfo
from moose_server.play import Game, Games, Results, days_info
from moose_server.settings import Settings
from moose_server.storage.failures import StorageError, one_round
from moose_server.storage.store import Store
from moose_server.tasks import cancelling

__all__ = ["Lobby"]

log = logging.getLogger(__name__)

START_AT_ONCE = 8  # games dealt concurrently (a slice of matchmaking has 8 tables at most)


def game_id_of(key: str) -> str:
    """The id of the game of a formed table: the same whoever deals it, and however often."""
    return f"g_{hashlib.sha1(key.encode()).hexdigest()[:10]}"


class Lobby:
    """Starts games from the matchmaker's tables and tells players about tables."""

    def __init__(
        self,
        matchmaker: Matchmaker,
        games: Games,
        store: Store,
        settings: Settings,
        results: Results | None = None,
        deals: Deals | None = None,
    ) -> None:
        self.matchmaker = matchmaker
        self.games = games
        self.store = store
        self.settings = settings
        self.results = results  # the seats' ratings and bot flags as a game starts
        # Deals at once, or after the seeds of seats that asked for a fair deal.
        self.deals = deals or Deals(store, SeedStore(store.redis, store.buckets), games, settings)
        self.running = True

    async def start(self, table: FormedTable, *, told: bool = True) -> Game | None:
        """Deal the game of a formed table; every seated player gets `match`. None: the
        deal waits for the seeds of its fair seats (deals/deals.py). `told`: the
        matchmaker is told the table's game is dealt (Matchmaker.started); else the
        caller tells it (`start_all`: the tables of a round in one call)."""
        game_id = game_id_of(table.key) if table.key else None
        rated = table.rated if table.code is not None else self.settings.rate_queue
        profiles = None
        if self.results is not None:
            profiles = await self.results.profiles(table.seats, table.days, table.known)
        game = await self.deals.start(
            table.seats,
            game_id=game_id,
            code=table.code,
            rated=rated,
            profiles=profiles,
            days=table.days,
            together=table.together,
        )
        if table.key and told:
            await self.matchmaker.started(table.key)
        players = [s.player for s in table.seats if s.player is not None]
        gid = game.id if game is not None else game_id
        log.info(
            "match: game %s from %s with %d seats",
            gid,
            table.source,
            len(table.seats),
            extra={"event": "match", "game": gid, "players": players},
        )
        return game

    async def tell_table(self, info: TableInfo | None, skip: str | None) -> None:
        """Send the table's new state to everyone seated at it but `skip`."""
        if info is None:
            return
        message = info.as_message()
        for seat in info.seats:
            if seat is not None and seat.player is not None and seat.player != skip:
                await self.store.publish_player(seat.player, message)

    @staticmethod
    def started_message(code: str, host: str, table: FormedTable) -> dict[str, Any]:
        """The `table` answer to `start_table`: the seats the game starts with."""
        seats = [s.as_dict() for s in table.seats]
        return {
            "type": "table",
            "code": code,
            "host": host,
            "players": len(seats),
            "seats": seats,
            "rated": table.rated,
            **days_info(table.days),
        }

    def stop(self) -> None:
        """Form no more tables (draining): `run` ends after the round under way."""
        self.running = False

    async def run(self) -> None:
        """Form queue tables until stopped or cancelled, a slice at a time.

        Each call forms a bounded number of tables (Redis is held a few ms at most)
        and their games are dealt before the next call; a full slice is followed
        by the next one at once, else by a pause of `match_interval`.
        """
        while self.running:
            more = await one_round(self._form_and_start, "matchmaking", log)
            await asyncio.sleep(0 if more else self.settings.match_interval)

    async def _form_and_start(self) -> bool:
        """Form the tables that can be formed and deal their games; whether more wait."""
        tables = await self.matchmaker.form_tables()
        await self.start_all(tables)
        return self.matchmaker.full(tables)

    async def start_all(self, tables: list[FormedTable]) -> None:
        """Deal the games of the formed tables, several at once.

        Each start is a few Redis round trips; one after the other, a busy
        instance dealt fewer games a second than its players finished, and the
        queue grew until tickets waited `match_wait`.
        """
        gate = asyncio.Semaphore(START_AT_ONCE)

        async def start(table: FormedTable) -> None:
            async with gate:
                await self.start(table, told=False)

        results = await asyncio.gather(*(start(t) for t in tables), return_exceptions=True)
        # The tables whose games are dealt (or wait for seeds) are not handed out again:
        # one call for them all. Should it fail, their lease runs out and another round
        # deals them again, as the same games (their ids come from their keys).
        dealt = [
            t.key
            for t, result in zip(tables, results, strict=True)
            if t.key and not isinstance(result, BaseException)
        ]
        if dealt:
            results += await asyncio.gather(self.matchmaker.started(*dealt), return_exceptions=True)
        for result in results:
            if isinstance(result, asyncio.CancelledError):
                raise result
            if isinstance(result, StorageError | OSError):
                if cancelling():
                    raise asyncio.CancelledError from result
                log.warning("matchmaking cannot reach Redis: %s", result)
            elif isinstance(result, BaseException):
                log.error("starting a game failed", exc_info=result)
