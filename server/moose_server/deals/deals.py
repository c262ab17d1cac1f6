"""Provably fair deals (PROTOCOL.md, "Provably fair deals"): the seed phase.

Every game is dealt by moose.fair from a secret server seed whose commitment
its players get in `match` before any card. With no seat that asked for a fair
deal (`"fair": true`), the deal is immediate (`Games.create` draws the server
seed). Otherwise the deal waits in Redis (deals/seeds.py) with its server seed:
each fair seat's `seed` is taken there, and the cards are dealt as soon as the
last one awaited comes, or by the deadline loop of any instance once
`seed_time` is over; a seat that sent nothing contributes "". The deal is closed
to seeds before it is dealt, so whoever deals it deals the same cards, and the
game's commit (version 0) keeps one: it is dealt exactly once.

A waiting game is in its seats' game sets from the start, so the limits on
unfinished games count it and a seat that reconnects finds it: `sync` of a
waiting game answers with its `match` again (`waiting_match`) and seq 0.

A server with a fixed test deck (`settings.test_deck`) deals that, without `deal`.

Errors: `DealError(code, message)` with a PROTOCOL.md code (`not_fair`,
`already_seeded`, `already_dealt`, `not_in_game`, `no_such_game`, `bad_message`).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, NoReturn

from moose import fair
from moose_server.accounts import distinct
from moose_server.deals.seeds import SeedStore, Waiting
from moose_server.errors import Refusal
from moose_server.play import (
    Game,
    Games,
    Seat,
    days_info,
    seat_info_of,
    table_match,
)
from moose_server.settings import Settings
from moose_server.storage.codec import pack
from moose_server.storage.store import Store

__all__ = ["DealError", "Deals", "waiting_match"]

log = logging.getLogger(__name__)

Message = dict[str, Any]


class DealError(Refusal):
    """A `seed` the deal refuses; `code` is the PROTOCOL.md error code."""


_REFUSALS = {
    "not_fair": 'your seat did not ask for a fair deal ("fair": true): it sends no seed',
    "dup": "your seat has sent its seed for this game already",
    "dealt": "the cards are dealt already: too late for a seed",
}


class Deals:
    """Deals games: at once, or once the fair seats' seeds are in (or their time is up)."""

    def __init__(self, store: Store, seeds: SeedStore, games: Games, settings: Settings) -> None:
        self.store = store
        self.seeds = seeds
        self.games = games
        self.settings = settings

    async def start(
        self,
        seats: Sequence[Seat],
        *,
        game_id: str | None = None,
        code: str | None = None,
        rated: bool = False,
        profiles: list[dict[str, Any] | None] | None = None,
        days: int | None = None,
        together: bool = False,
    ) -> Game | None:
        """Deal a table's game, or make it wait for its fair seats' seeds (None).
        `days`: days per move of a correspondence game (None: real time); `together`:
        every seat's instance reads their `match` messages as one (Games.create)."""
        game_id = game_id or f"g_{secrets.token_hex(5)}"
        fixed = self.settings.fixed_deck()
        fair_seats = tuple(i for i, s in enumerate(seats) if s.fair and s.player is not None)
        if fixed is not None or not fair_seats:
            game = await self.games.create(
                seats,
                game_id=game_id,
                code=code,
                rated=rated,
                profiles=profiles,
                deck=fixed,
                dealer=None if fixed is None else 0,
                days=days,
                listed=code is None,  # a queue game goes on the live games list
                together=together,
            )
            return game
        server_seed = secrets.token_bytes(32)
        data = {
            "seats": [asdict(s) for s in seats],
            "code": code,
            "rated": rated,
            "profiles": profiles,
            "server_seed": server_seed,
            "days": days,
        }
        s = self.settings
        stored = await self.seeds.open(
            game_id, pack(data), int(s.seed_time * 1000), s.game_ttl, fair_seats
        )
        if stored is None:  # dealt already (an earlier start whose answer was lost)
            return await self.games.create(
                seats, game_id=game_id, code=code, rated=rated, profiles=profiles, days=days
            )
        # In the seats' game sets from now on: a seat that reconnects before the deal
        # finds its game (`welcome`, `sync`), and the limits on unfinished games count it.
        await self.store.add_player_game(_players(stored), game_id, days is not None)
        await self.store.publish_players(_matches(game_id, stored))
        log.info(
            "deal %s waits for the seeds of seats %s",
            game_id,
            list(fair_seats),
            extra={"event": "deal_waits", "game": game_id},
        )
        return None

    async def seed(self, game_id: str, player: str, seed: Any) -> Message:
        """A seat's seed (`seed` message): the `seeded` answer, or a DealError."""
        try:
            fair.check_seed(seed)
        except ValueError as exc:
            raise DealError("bad_message", str(exc)) from None
        data = await self.seeds.data(game_id)
        if data is None:
            await self._refuse_unknown(game_id, player)
        seat = _seat_of(data, player)
        if seat is None:
            raise DealError("not_in_game", f"you have no seat in game {game_id[:64]}")
        status = await self.seeds.seed(game_id, seat, seed)
        if status == "none":  # dealt and forgotten since we read it
            await self._refuse_unknown(game_id, player)
        if status in _REFUSALS:
            raise DealError(_CODES[status], _REFUSALS[status])
        if status == "all":
            await self.due(game_id)
        return {"type": "seeded", "game": game_id}

    async def waiting_match(self, game_id: str, player: str) -> Message | None:
        """The player's `match` again while the game's deal waits for seeds; None when
        no deal waits (dealt, or no such game), not_in_game for a stranger."""
        return await waiting_match(self.seeds, game_id, player)

    async def _refuse_unknown(self, game_id: str, player: str) -> NoReturn:
        """No deal waits: the game exists (too late), or not (no_such_game)."""
        game = await self.games.load(game_id)  # GameError no_such_game
        if game.seat_of(player) is None:
            raise DealError("not_in_game", f"you have no seat in game {game_id[:64]}")
        raise DealError("already_dealt", _REFUSALS["dealt"])

    async def due(self, game_id: str) -> bool:
        """Deal a waiting deal with the seeds it has (the last seed came, or its time is
        up); False when none waits. Safe to call any number of times, anywhere."""
        waiting = await self.seeds.close(game_id)
        if waiting is None:
            return False
        await self._deal(game_id, waiting)
        return True

    async def _deal(self, game_id: str, waiting: Waiting) -> None:
        seats = [Seat(**s) for s in waiting["seats"]]
        seeds = [waiting["seeds"].get(i, "") for i in range(len(seats))]
        await self.games.create(
            seats,
            game_id=game_id,
            code=waiting["code"],
            rated=waiting["rated"],
            profiles=waiting["profiles"],
            server_seed=waiting["server_seed"],
            seeds=seeds,
            told=True,
            days=waiting.get("days"),
            listed=waiting["code"] is None,
        )
        await self.seeds.forget(game_id)
        log.info(
            "deal %s dealt with %d seeds",
            game_id,
            sum(1 for s in seeds if s),
            extra={"event": "dealt", "game": game_id},
        )


async def waiting_match(seeds: SeedStore, game_id: str, player: str) -> Message | None:
    """`Deals.waiting_match`, for whoever has the seed store but not the deals (waiting.py)."""
    data = await seeds.data(game_id)
    if data is None:
        return None
    if _seat_of(data, player) is None:
        raise DealError("not_in_game", f"you have no seat in game {game_id[:64]}")
    return dict(_matches(game_id, data))[player]


_CODES = {"not_fair": "not_fair", "dup": "already_seeded", "dealt": "already_dealt"}


def _seat_of(data: dict[str, Any], player: str) -> int | None:
    """The seat of `player` in a waiting deal's data, or None."""
    return next((i for i, s in enumerate(data["seats"]) if s["player"] == player), None)


def _players(data: dict[str, Any]) -> list[str]:
    """The player ids seated in a waiting deal's data."""
    return [s["player"] for s in data["seats"] if s["player"] is not None]


def _matches(game_id: str, data: dict[str, Any]) -> list[tuple[str, Message]]:
    """Each seated player's `match` of a waiting deal, with its commitment."""
    seats = data["seats"]
    names = distinct([s["name"] for s in seats])
    info = seat_info_of([s["bot"] for s in seats], data["profiles"])
    deal = {"deal": fair.public(data["server_seed"]), **days_info(data.get("days"))}
    return [
        (s["player"], table_match(game_id, i, names, info, deal))
        for i, s in enumerate(seats)
        if s["player"] is not None
    ]
