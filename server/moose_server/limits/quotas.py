"""What one client may hold at once, shared by every instance through Redis.

Per player and per client address (addresses.limit_subject: an IPv6 /64):

- unfinished games, real-time and correspondence ones (days a move) each against
  limits of their own: a player's are its game set (store.add_player_game, written
  as a game is dealt, or as its fair deal starts waiting for seeds, and emptied
  as it ends); an address' are a hold
  (limits/holdings.py): the games its sockets were dealt (`seated`), or took a
  place for by starting a private table (`starting`, atomic against the limit,
  so several instances never let one address past it). Nothing is a bare
  counter: when a player or address is at its limit, the ids it holds are
  checked against the games' own state (a game whose deadline was cleared has
  ended; one whose hash is gone has expired) and those are dropped, so a game
  that ended on an instance that died never counts for long;
- open private tables an address hosts (a player sits at one table at most);
- private tables' games started from an address per hour, new bot players (a
  `hello` as a bot without a token writes a profile) and new guests per hour:
  rate limits (lua/limit.lua);
- bot sessions from an address at once: counted per server process under a
  lease it renews (`run`), so a process that dies takes its count with it.

Each refusal is a `limits.Limited` with a PROTOCOL.md code.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from dataclasses import dataclass

from moose_server.addresses import limit_subject
from moose_server.limits.calls import HoldCall, SessionsCall
from moose_server.limits.holdings import Holdings
from moose_server.limits.limiter import Limited, Limiter, full
from moose_server.settings import Settings
from moose_server.storage.failures import StorageError
from moose_server.storage.keys import hold_key, sessions_key
from moose_server.storage.store import Store

__all__ = ["Held", "Quotas"]

RESERVED_MS = 60_000  # a place taken for a start that never finished is free after this
HOLD_TTL_MS = 2 * 86_400_000  # an address that takes nothing for this long is forgotten
PRUNE_SLICE = 25  # a full hold's ids checked at a time, oldest first

Dead = Callable[[list[str]], Awaitable[set[str]]]


@dataclass
class Held:
    """A place taken in a hold for something not made yet: name it (`id`) once it is."""

    id: str = ""


class Quotas:
    """The per-player and per-address holds of one instance's clients (built in app.py)."""

    def __init__(
        self, holdings: Holdings, limiter: Limiter, store: Store, settings: Settings
    ) -> None:
        self.holdings = holdings
        self.limiter = limiter  # the hourly rates: private games started, new bot players
        self.store = store
        self.settings = settings
        self.process = f"{settings.instance_id}/{secrets.token_hex(4)}"
        self.bots: Counter[str] = Counter()  # bot sessions of this process, per address
        self.lease_ms = max(1000, round(settings.instance_ttl * 1000))

    # -- unfinished games -------------------------------------------------------------

    async def may_play(self, address: str, player: str, days: int | None = None) -> int:
        """Refuse `too_many_games` when the player or the address holds its limit of games
        (`days`: of a correspondence game, counted apart from real-time ones). Else the
        player's games of that kind it counted (some may have ended since: 0 is sure)."""
        held = await self._player_games(player, days)
        key, limit = self._address_games(address, days is not None)
        if not await self._room(key, limit, self._ended_games):
            raise _too_many_games("your address has", days)
        return held

    async def seated(
        self, address: str, games: list[str], correspondence: Collection[str] = ()
    ) -> None:
        """The address' player has a seat in these games (dealt, or resumed at hello); those
        in `correspondence` are played days a move, and held apart."""
        slow = [g for g in games if g in correspondence]
        fast = [g for g in games if g not in correspondence]
        for days_a_move, held in ((False, fast), (True, slow)):
            key = self._address_games(address, days_a_move)[0]
            await self.holdings.put(key, held, HOLD_TTL_MS)

    def _address_games(self, address: str, days_a_move: bool) -> tuple[str, int]:
        """The hold of the address' unfinished games, real-time or correspondence ones,
        and its limit."""
        subject, s = limit_subject(address), self.settings
        if not days_a_move:
            return hold_key("games", subject), s.games_per_address
        return hold_key("corr_games", subject), s.correspondence_games_per_address

    @contextlib.asynccontextmanager
    async def starting(
        self, address: str, player: str, days: int | None = None
    ) -> AsyncIterator[Held]:
        """Take a place for the game a private table starts; name it with the game's id.

        Atomic per address across instances; also one token of the address' hourly
        starts. A start that fails inside gives both back.
        """
        await self.player_room(player, days)
        key, limit = self._address_games(address, days is not None)
        async with (
            self.limiter.attempt("start", address=address),
            self._taking(key, limit, self._ended_games) as held,
        ):
            if held is None:
                raise _too_many_games("your address has", days)
            yield held

    async def player_room(self, player: str, days: int | None = None) -> None:
        """Refuse `too_many_games` when the player holds its limit of unfinished games:
        real-time ones, or with `days` correspondence ones (each kind its own limit)."""
        await self._player_games(player, days)

    async def _player_games(self, player: str, days: int | None) -> int:
        """`player_room`, and the games it counted (below the limit, ended ones too)."""
        real_time = days is None
        limit = self.settings.games_per_player if real_time else self.settings.correspondence_games
        # A few ids each: no SCARD needed.
        counted = await self.holdings.games_of(player, real_time)
        if len(counted) < limit:
            return len(counted)
        over = await self.holdings.ended_games(counted, missing=False)
        for game in over:
            await self.store.remove_player_game([player], game, not real_time)
        if len(counted) - len(over) >= limit:
            raise _too_many_games("you have", days)
        return len(counted) - len(over)

    async def _ended_games(self, games: list[str]) -> set[str]:
        return await self.holdings.ended_games(games, missing=True)

    # -- open private tables ------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def hosting(self, address: str) -> AsyncIterator[Held]:
        """Take a place for a private table the address opens; name it with its code."""
        key = hold_key("tables", limit_subject(address))
        async with self._taking(key, self.settings.tables_per_address, self._closed) as held:
            if held is None:
                raise full(
                    "tables",
                    f"your address hosts {self.settings.tables_per_address} open "
                    "private tables; start or leave one first",
                )
            yield held

    async def _closed(self, codes: list[str]) -> set[str]:
        open_now = await self.holdings.open_tables(codes, await self.store.now_ms())
        return set(codes) - open_now

    # -- bot sessions -----------------------------------------------------------------------

    async def enter_bot(self, address: str, new: bool) -> None:
        """One more bot session from the address (`new`: a new bot player, also metered
        per hour); `too_many_sessions` or `rate_limited` past the limits."""
        subject, s = limit_subject(address), self.settings
        enter = SessionsCall(
            sessions_key(subject), "enter", self.process, s.bot_sessions_per_address, self.lease_ms
        )
        if await self.holdings.sessions(enter) < 0:
            raise full(
                "bot_sessions",
                f"your address has {s.bot_sessions_per_address} bot sessions open; close one first",
            )
        self.bots[subject] += 1
        if new:
            try:
                await self.limiter.take("bot", address=address)
            except Limited:
                await self.leave_bot(address)
                raise

    async def new_guest(self, address: str) -> None:
        """One more new guest from the address this hour, or `rate_limited`."""
        await self.limiter.take("guest", address=address)

    async def leave_bot(self, address: str) -> None:
        """A bot session from the address ended."""
        subject = limit_subject(address)
        self.bots[subject] -= 1
        if self.bots[subject] <= 0:
            del self.bots[subject]
        await self.holdings.sessions(SessionsCall(sessions_key(subject), "leave", self.process))

    async def run(self) -> None:
        """Renew the lease of this process' bot sessions until cancelled."""
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            for subject in list(self.bots):
                call = SessionsCall(
                    sessions_key(subject), "renew", self.process, lease_ms=self.lease_ms
                )
                with contextlib.suppress(StorageError, OSError):
                    await self.holdings.sessions(call)

    # -- holds --------------------------------------------------------------------------------

    async def _room(self, key: str, limit: int, dead: Dead) -> bool:
        """Whether the hold has fewer than `limit` ids, once those that ended are pruned."""
        if await self.holdings.count(key) < limit:
            return True
        # Oldest first, a slice at a time: a hold full of games mostly over reads one
        # slice, not every id (an address' games keep ending as its players play on).
        held = await self.holdings.held(key)
        over = len(held) - limit + 1  # ids to drop for room
        for start in range(0, len(held), PRUNE_SLICE):
            over -= len(await self._prune(key, held[start : start + PRUNE_SLICE], dead))
            if over <= 0:
                return True
        return False

    @contextlib.asynccontextmanager
    async def _taking(self, key: str, limit: int, dead: Dead) -> AsyncIterator[Held | None]:
        """A reserved place in the hold (None: it is full), named by the body or given back."""
        reserved = f"~{secrets.token_hex(6)}"
        take = HoldCall(key, "take", reserved, limit, HOLD_TTL_MS)
        taken = await self.holdings.hold(take) >= 0
        if not taken:
            await self._prune(key, await self.holdings.held(key), dead)
            taken = await self.holdings.hold(take) >= 0
        if not taken:
            yield None
            return
        held = Held()
        try:
            yield held
        except BaseException:
            with contextlib.suppress(StorageError, OSError):
                await self.holdings.hold(HoldCall(key, "drop", reserved))
            raise
        op = "swap" if held.id else "drop"
        await self.holdings.hold(
            HoldCall(key, op, held.id or reserved, ttl_ms=HOLD_TTL_MS, old=reserved)
        )

    async def _prune(self, key: str, held: list[tuple[str, int]], dead: Dead) -> set[str]:
        """Drop the ids of a hold that ended; return them."""
        now = await self.store.now_ms()
        stale = {i for i, taken in held if i.startswith("~") and taken < now - RESERVED_MS}
        named = [i for i, _ in held if not i.startswith("~")]
        gone = stale | await dead(named)
        await self.holdings.drop(key, sorted(gone))
        return gone


def _too_many_games(who: str, days: int | None = None) -> Limited:
    mine = who == "you have"
    if days is None:
        name, what = ("games" if mine else "address_games"), "unfinished games"
    else:
        name = "correspondence_games" if mine else "correspondence_address_games"
        what = "unfinished correspondence games"
    return full(name, f"{who} too many {what}; finish one first")
