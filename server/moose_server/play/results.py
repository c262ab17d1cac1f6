"""Finished rated games: the seats' new ratings, their histories, the leaderboards.

A correspondence game rates the correspondence pool, a real-time one the
real-time pool (accounts/ratings.py): the seats' standings at its start are read
from that pool (`profiles`), and its changes go back to it.

A rated game's last commit (games.py) also puts the game among its bucket's
unrated games and keeps its record for `record_ttl`, in that one atomic step.
The instance that committed it then applies the rating changes at once
(`apply`: one script, lua/rate.lua, sent in the same write as the commit's
other end-of-game call, so the last move costs one more round trip at most).
The script is idempotent per game: a marker makes a second run answer "dup".

Should that instance die between the commit and the update, or Redis fail the
update, the game stays among the unrated ones: every instance's `run` loop
looks for games that ended more than `rate_sweep_after` ago and are still there, and
rates them (the same changes: they come from the game's stored start ratings
and result). Instances racing on one game apply it once. Games rated here are
taken off the unrated sets in batches, off the move path.

Every other finished game goes the same way too: its end puts it among the
unrated games, and `apply` puts it in the histories of its players (those of
a rated game whom it did not rate too: lua/history.lua, once per game), so a
profile lists every finished game, rated or not.

An arena game's points go the same way: its end puts it among
the unrated games whether rated or not, `apply` applies its points through the
arena scorer (lua/arena_score.lua, once per game) besides any rating, and the
sweep does both again for a game its instance left.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Protocol

from moose import rules
from moose_server.accounts import HistoryCall, PlayerStore, RateCall, RatedSeat, Standing, ratings
from moose_server.play.correspondence import days_info
from moose_server.play.game import Game
from moose_server.play.seats import Seat
from moose_server.settings import Settings
from moose_server.storage.failures import one_round
from moose_server.storage.store import Store

__all__ = ["ArenaPoints", "Results"]


class ArenaPoints(Protocol):
    """Applies a finished arena game's points (arenas/points.py)."""

    async def apply(
        self,
        arena: str,
        game: str,
        players: list[str | None],
        state: rules.State,
        away: list[bool],
    ) -> bool:
        """Apply the points of a finished game of `arena`; False when done before."""


log = logging.getLogger(__name__)

SWEEP_INTERVAL = 0.5  # seconds between looks for games nobody rated
SWEEP_BATCH = 50
CACHE = 256  # games whose changes were computed lately (the `over` event, then `apply`)

Changes = list[tuple[Standing, Standing] | None]  # per seat: (before, after), None: unrated


def standings(game: Game) -> list[Standing | None]:
    """Each seat's standing at the start of the game (None: a server bot, not rated)."""
    profiles = game.profiles or [None] * len(game.players)
    return [Standing(p["mu"], p["sigma"], p["games"]) if p else None for p in profiles]


def _profiled(game: Game) -> list[str | None]:
    """Each seat's player id where it has a profile to open (None: a server bot)."""
    profiles = game.profiles or [None] * len(game.players)
    return [p if prof else None for p, prof in zip(game.players, profiles, strict=True)]


def _bot_flags(game: Game) -> list[bool]:
    """Each seat a bot or not: the server's, or a program that said so."""
    profiles = game.profiles or [None] * len(game.bots)
    return [
        b is not None or bool(p and p.get("bot")) for b, p in zip(game.bots, profiles, strict=True)
    ]


def _entry(
    game: Game, ended: int, seat: int, rating: int | None, change: int | None
) -> dict[str, Any]:
    """A finished game as `seat`'s history lists it (rating and change None: unrated)."""
    return {
        "game": game.id,
        "time": ended,
        "seat": seat,
        "names": game.names,
        "players": _profiled(game),
        "bots": _bot_flags(game),
        "scores": rules.scores(game.state),
        "place": game.places()[seat],
        "rating": rating,
        "change": change,
        "private": game.code is not None,
        **days_info(game.days),  # a correspondence game's rating is of that pool
    }


class Results:
    """Rates finished games (see the module docstring); one per instance."""

    def __init__(
        self,
        store: Store,
        players: PlayerStore,
        settings: Settings,
        arenas: ArenaPoints | None = None,
    ) -> None:
        self.store = store
        self.arenas = arenas  # an arena game's points
        self.players = players
        self.settings = settings
        self.running = True
        self._stopped = asyncio.Event()  # wakes `run` from its pause when `stop` is called
        self._changes: OrderedDict[str, Changes] = OrderedDict()
        self._done: list[str] = []  # rated here, still among the unrated in Redis

    # -- the seats of a new game ------------------------------------------------

    async def profiles(
        self,
        seats: list[Seat],
        days: int | None = None,
        known: Mapping[str, Mapping[str, str]] | None = None,
    ) -> list[dict[str, Any] | None]:
        """Each seat's rating and bot flag as the game starts (None: a server bot): the
        correspondence rating for a game of `days` a move, else the real-time one.
        `known`: real-time profile fields (bot, mu, sigma, games) of some players, as
        their queue tickets carried them: those are not read."""
        pool = ratings.pool_of(days)
        mu, sigma, played = (ratings.field(pool, f) for f in ("mu", "sigma", "games"))
        players = [s.player for s in seats if s.player is not None and s.bot is None]
        given = {p: f for p, f in (known or {}).items() if isinstance(f, Mapping)}
        given = given if days is None else {}
        read = [p for p in players if p not in given]
        found: dict[str, Mapping[str, str]] = dict(given)
        found.update(zip(read, await self.players.profiles(read), strict=True))
        out: list[dict[str, Any] | None] = []
        for seat in seats:
            p = found.get(seat.player) if seat.player is not None and seat.bot is None else None
            if p is None:
                out.append(None)
                continue
            games = int(p.get(played, 0))
            out.append(
                {
                    "bot": p.get("bot") == "1",
                    "mu": float(p.get(mu, ratings.MU)),
                    "sigma": float(p.get(sigma, ratings.SIGMA)),
                    "games": games,
                    "provisional": games < self.settings.provisional_games,
                }
            )
        return out

    # -- the end of a game ------------------------------------------------------

    def changes(self, game: Game, state: rules.State) -> Changes:
        """Each seat's (before, after) standing for a finished game (computed once)."""
        places = game.places(state)
        # The places are in the key: a commit refused as stale may have computed
        # another end of the same game first.
        key = f"{game.id}:{places}"
        known = self._changes.get(key)
        if known is not None:
            return known
        before = standings(game)
        after = ratings.update(before, places)
        out: Changes = [
            None if b is None or a is None else (b, a) for b, a in zip(before, after, strict=True)
        ]
        self._changes[key] = out
        if len(self._changes) > CACHE:
            self._changes.popitem(last=False)
        return out

    def over_ratings(self, game: Game, state: rules.State) -> list[dict[str, Any] | None]:
        """For the `over` event: each rated seat's new rating, its change, provisional or not."""
        n = self.settings.provisional_games
        return [
            None
            if c is None
            else {
                "rating": c[1].rating,
                "change": c[1].rating - c[0].rating,
                "provisional": c[1].provisional(n),
            }
            for c in self.changes(game, state)
        ]

    async def apply(self, game: Game, ended: int) -> None:
        """Apply a finished game's rating changes and arena points, once whoever calls
        (`ended`: its end, ms)."""
        rated = await self._rate(game, ended) if game.rated else set()
        await self._list(game, ended, rated)
        if game.arena is not None and self.arenas is not None:
            away = list(game.away)
            if await self.arenas.apply(game.arena, game.id, game.players, game.state, away):
                log.info(
                    "arena %s: scored %s",
                    game.arena,
                    game.id,
                    extra={"event": "arena_scored", "game": game.id},
                )
        self._done.append(game.id)

    async def _rate(self, game: Game, ended: int) -> set[int]:
        """Apply a finished rated game's changes, once whoever calls; the seats rated."""
        changes = self.changes(game, game.state)
        bots = _bot_flags(game)
        seats, rated = [], set()
        for k, change in enumerate(changes):
            player = game.players[k]
            if change is None or player is None or change[0] == change[1]:
                continue  # a server bot, or too few rated seats to learn anything
            before, after = change
            entry = _entry(game, ended, k, after.rating, after.rating - before.rating)
            seats.append(
                RatedSeat(
                    player,
                    game.names[k],
                    bots[k],
                    after.mu - before.mu,
                    after.sigma / before.sigma,
                    json.dumps(entry),
                )
            )
            rated.add(k)
        call = self._rate_call(game.id, seats, ratings.pool_of(game.days))
        if seats and await self.players.rate(call):
            log.info(
                "rated %s: %d seats", game.id, len(seats), extra={"event": "rated", "game": game.id}
            )
        return rated

    async def _list(self, game: Game, ended: int, rated: set[int]) -> None:
        """Put a finished game in the histories of its players it did not rate, once."""
        entries = [
            (player, json.dumps(_entry(game, ended, k, None, None)))
            for k, player in enumerate(game.players)
            if player is not None and game.bots[k] is None and k not in rated
        ]
        if not entries:
            return
        s = self.settings
        call = HistoryCall(
            game.id, entries, 2 * s.game_ttl, s.history_size, int(s.guest_ttl * 1000)
        )
        if await self.players.list_game(call):
            log.info(
                "listed %s: %d seats",
                game.id,
                len(entries),
                extra={"event": "listed", "game": game.id},
            )

    def _rate_call(self, game: str, seats: list[RatedSeat], pool: str) -> RateCall:
        """The rating update of a game's seats in a pool, on this service's scales and
        settings."""
        s = self.settings
        return RateCall(
            game=game,
            seats=seats,
            marker_ttl=2 * s.game_ttl,
            history_size=s.history_size,
            guest_ttl_ms=int(s.guest_ttl * 1000),
            provisional_games=s.provisional_games,
            base=ratings.BASE,
            scale=ratings.SCALE,
            base_ordinal=ratings.BASE_ORDINAL,
            spread=ratings.SPREAD,
            mu=ratings.MU,
            sigma=ratings.SIGMA,
            pool=pool,
        )

    # -- the loop ---------------------------------------------------------------

    def stop(self) -> None:
        """Rate no more forgotten games (draining): `run` ends after the round under way."""
        self.running = False
        self._stopped.set()

    async def run(self) -> None:
        """Take rated games off the unrated sets; rate those their instance left."""
        while self.running:
            await one_round(self.sweep, "rating games", log)
            # Woken by `stop`: a drain waits for the round under way, not for the pause.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), SWEEP_INTERVAL)
        await self.sweep(forgotten=False)

    async def sweep(self, *, forgotten: bool = True) -> int:
        """One round: clear what was rated here; rate the games that ended
        `rate_sweep_after` ago and still wait. Returns how many such games it rated."""
        done, self._done = self._done, []
        if done:
            await self.store.rated(done)
        if not forgotten:
            return 0
        now = await self.store.now_ms()
        after = int(self.settings.rate_sweep_after * 1000)
        found = await self.store.unrated(now - after, SWEEP_BATCH)
        for game_id in found:
            loaded = await self.store.load(game_id)
            if loaded.data is None:  # expired before anyone rated it: nothing left to rate
                await self.store.rated([game_id])
                continue
            game = Game.from_data(game_id, loaded.version, loaded.deadline, loaded.data)
            log.info(
                "rating %s, which its instance left unrated",
                game_id,
                extra={"event": "rate_forgotten", "game": game_id},
            )
            await self.apply(game, now)
        if found:
            await self.store.rated([g for g in found if g in self._done])
            self._done = [g for g in self._done if g not in found]
        return len(found)
