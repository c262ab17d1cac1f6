"""Arena tournaments: creating them, seating members, closing them.

Every instance runs `Arenas.run`: each round it seats the waiting members of
every running arena (arenas/store.py: one script, atomic across instances)
and deals their games, closes the arenas whose window is over once their last
game is scored, and puts the winners on their profiles. A table whose dealer
died is handed out again after `lease`, and its game id, made from the table,
keeps that from dealing two games. The points of a finished game are applied by
results.Results, exactly once, whichever instance sees it end.

Recurring arenas come from the setting `arenas` (MOOSE_ARENAS): entries
``FOR:EVERY:LENGTH:MIN-MAX`` separated by commas, FOR one of bots, people, all;
EVERY hourly or daily (starting on the hour, or at 00:00 UTC); LENGTH like 30m
or 2h; MIN-MAX the table sizes (2-6). Each occurrence has an id made from its
start (``bots-hourly-2026120214``), so every instance may create it: one does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

from moose_server.arenas.calls import ArenaCreateCall, ArenaSeatCall
from moose_server.arenas.store import WHO, Arena, ArenaError, ArenaStore
from moose_server.play import Games, Results, Seat
from moose_server.settings import Settings
from moose_server.storage.failures import one_round
from moose_server.storage.store import Store

__all__ = ["Arenas", "Recurring", "new_arena", "parse_minutes", "parse_recurring"]

log = logging.getLogger(__name__)

SCAN = 256  # waiting members one seating looks at
RECUR_EVERY = 10  # rounds between looks at the recurring arenas
_PERIODS = {"hourly": 3600, "daily": 86400}
_LENGTH = re.compile(r"(\d+)([mh])")
_SIZES = re.compile(r"([2-6])-([2-6])")


def parse_minutes(text: str) -> int:
    """A length like 30m or 2h, in minutes (ValueError otherwise)."""
    found = _LENGTH.fullmatch(text.strip())
    if not found or int(found[1]) <= 0:
        raise ValueError(f"a length is minutes or hours, like 30m or 2h, not {text!r}")
    return int(found[1]) * (60 if found[2] == "h" else 1)


def parse_sizes(text: str) -> tuple[int, int]:
    """Table sizes like 2-4 (ValueError otherwise)."""
    found = _SIZES.fullmatch(text.strip())
    if not found or int(found[1]) > int(found[2]):
        raise ValueError(f"table sizes are MIN-MAX within 2-6, like 2-4, not {text!r}")
    return int(found[1]), int(found[2])


@dataclass(frozen=True)
class Recurring:
    """One recurring arena of the setting `arenas`."""

    who: str
    every: str  # hourly, daily
    minutes: int
    min_players: int
    max_players: int

    def occurrence(self, at: float) -> tuple[str, int]:
        """The id and start (s) of the occurrence that starts at or before `at` (s)."""
        period = _PERIODS[self.every]
        start = int(at // period * period)
        stamp = time.strftime(
            "%Y%m%d%H" if self.every == "hourly" else "%Y%m%d", time.gmtime(start)
        )
        return f"{self.who}-{self.every}-{stamp}", start

    def name(self) -> str:
        """The arena's name, as the list shows it."""
        who = {"bots": "Bots'", "people": "People's", "all": "Open"}[self.who]
        return f"{who} {self.every} arena"


def parse_recurring(spec: str) -> list[Recurring]:
    """The recurring arenas of a setting like "bots:hourly:30m:2-4,people:daily:60m:2-4"."""
    out = []
    for entry in filter(None, (e.strip() for e in spec.split(","))):
        parts = entry.split(":")
        if len(parts) != 4 or parts[0] not in WHO or parts[1] not in _PERIODS:
            raise ValueError(
                f"MOOSE_ARENAS: {entry!r} is not FOR:EVERY:LENGTH:MIN-MAX with "
                "FOR bots, people or all and EVERY hourly or daily"
            )
        minutes = parse_minutes(parts[2])
        if minutes * 60 > _PERIODS[parts[1]]:
            raise ValueError(f"MOOSE_ARENAS: {entry!r} lasts longer than its period")
        out.append(Recurring(parts[0], parts[1], minutes, *parse_sizes(parts[3])))
    return out


def new_arena(
    name: str,
    who: str,
    minutes: float,
    sizes: tuple[int, int],
    *,
    start_ms: int = 0,
    rated: bool = False,
    by: str = "",
    arena_id: str | None = None,
) -> ArenaCreateCall:
    """The call that creates an arena (checked: ValueError on a bad field)."""
    if who not in WHO:
        raise ValueError(f"an arena is for bots, people or all, not {who!r}")
    if not name.strip() or len(name) > 64:
        raise ValueError("an arena's name is 1 to 64 characters")
    if not 0 < minutes <= 7 * 24 * 60:
        raise ValueError("an arena lasts more than 0 minutes and a week at most")
    low, high = sizes
    if not 2 <= low <= high <= 6:
        raise ValueError("table sizes are MIN-MAX within 2-6")
    ident = arena_id or f"a_{secrets.token_hex(4)}"
    return ArenaCreateCall(
        ident, name.strip(), who, low, high, start_ms, round(minutes * 60_000), rated, by
    )


class Arenas:
    """Seats arena members, deals their games and closes arenas; one per instance."""

    def __init__(
        self,
        arenas: ArenaStore,
        games: Games,
        store: Store,
        results: Results,
        settings: Settings,
    ) -> None:
        self.arenas = arenas
        self.games = games
        self.store = store
        self.results = results  # the seats' ratings as a game starts
        self.settings = settings
        self.recurring = parse_recurring(settings.arenas)
        self.running = True
        self._stopped = asyncio.Event()  # set by stop: a drain does not wait out the pause
        self._rounds = 0

    def stop(self) -> None:
        """Seat no more members (draining): `run` ends after the round under way."""
        self.running = False
        self._stopped.set()

    async def run(self) -> None:
        """Rounds until stopped or cancelled."""
        while self.running:
            await one_round(self.round, "arenas", log)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), self.settings.arena_interval)

    async def round(self) -> int:
        """Create due recurring arenas, seat members, close arenas; returns games dealt."""
        if self._rounds % RECUR_EVERY == 0:
            await self.recur(await self.store.now_ms())
        self._rounds += 1
        dealt = 0
        for arena in await self.arenas.listed():
            if arena.status == "over":
                continue
            dealt += await self.seat(arena)
            await self.close(arena.id)
        return dealt

    async def recur(self, now_ms: int) -> None:
        """Create the current and the next occurrence of each recurring arena (once)."""
        now = now_ms / 1000
        for r in self.recurring:
            for at in (now, now + _PERIODS[r.every]):
                ident, start = r.occurrence(at)
                if start + r.minutes * 60 <= now:
                    continue  # this one is over
                call = new_arena(
                    r.name(),
                    r.who,
                    r.minutes,
                    (r.min_players, r.max_players),
                    start_ms=start * 1000,
                    by="settings",
                    arena_id=ident,
                )
                if await self.arenas.create(call):
                    log.info(
                        "arena %s created from the settings",
                        ident,
                        extra={"event": "arena_created", "arena": ident},
                    )

    async def seat(self, arena: Arena) -> int:
        """Deal the games of the tables the arena can seat now; returns how many."""
        lease = int(self.settings.lease * 1000)
        tables = await self.arenas.seat(ArenaSeatCall(arena.id, lease, SCAN))
        for table in tables:
            await self.deal(arena, table)
        return len(tables)

    async def deal(self, arena: Arena, table: dict[str, Any]) -> None:
        """Deal one table's game (the same game whoever deals it, however often)."""
        seats = [Seat(s["player"], s["name"], None, bool(s.get("bot"))) for s in table["seats"]]
        profiles = await self.results.profiles(seats)
        game = await self.games.create(
            seats,
            game_id=table["game"],
            rated=arena.rated,
            profiles=profiles,
            arena=arena.id,
            listed=True,
        )
        await self.arenas.started(arena.id, table["key"])
        log.info(
            "arena %s: game %s with %d seats",
            arena.id,
            game.id,
            len(seats),
            extra={"event": "match", "game": game.id, "players": [s.player for s in seats]},
        )

    async def close(self, arena: str) -> None:
        """Close the arena if its window is over and its games scored; award its winners."""
        try:
            done = await self.arenas.finish(arena, keep=self.settings.record_ttl)
        except ArenaError:
            return
        if done["status"] == "over" and not done.get("awarded"):
            await self.arenas.award(arena, done["winners"], int(done["end"]))
            log.info(
                "arena %s over: won by %s",
                arena,
                ", ".join(done["winners"]) or "nobody",
                extra={"event": "arena_over", "arena": arena},
            )
