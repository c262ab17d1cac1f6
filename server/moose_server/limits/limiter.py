"""The one limiter of per-client rates: every rate limit of rates.RATES, by name.

A shared limit keeps one counter per client it is `per` (a player, an address...)
in Redis (storage/lua/limit.lua: a token bucket kept as one number), so that every
instance counts together; the per-socket rate is in memory (`SocketRate`), as a
socket lives on one instance.

The rule for every limit: a request a limit refuses takes nothing. A request takes
a token from each of its counters; when one refuses, the tokens taken from the
others are given back (at once: a request of the same client at that very moment
may find one fewer), and the refusal (`Limited`, with `retry_after`) says when the
next one is free. The counters of one request have keys of their own, each on its
own Cluster slot, so each is one call, side by side.

Inside `attempt`, what the request then does decides what it costs (rates.COSTS):
a limit of requests done (`chat`, `report`...) gives the token back when the
request is refused for any other reason too (`no_such_player`, `too_many_follows`);
one of failures (`code`, `login`) gives it back when the request succeeds; one of
requests tried (`register`: each costs a password hash) keeps it. A fault that is
not the client's (Redis, a bug) costs nothing either.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator

from moose_server.addresses import limit_subject
from moose_server.errors import Refusal
from moose_server.limits.rates import Rate, hold, rate
from moose_server.settings import Settings
from moose_server.storage.failures import StorageError
from moose_server.storage.keys import limit_key
from moose_server.storage.scripts import LimitCall
from moose_server.storage.store import Store

__all__ = ["Limited", "Limiter", "SocketRate", "full"]


class Limited(Refusal):
    """A limit refused the request: `rate_limited` with the ms after which the client may
    try again, or a hold's code (`too_many_games`, ...), with `retry_after` where
    waiting helps (None: it clears when the client ends what it holds)."""

    def __init__(self, message: str, retry_after_ms: int | None, code: str) -> None:
        super().__init__(code, message)
        if retry_after_ms is not None:
            self.fields = {"retry_after": max(1, retry_after_ms)}


def full(name: str, message: str) -> Limited:
    """The refusal of the hold limit `name` (rates.HOLDS): its code, and no `retry_after`,
    as it clears when the client ends something it holds, not with time."""
    return Limited(message, None, hold(name).code)


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def subject(per: str, address: str = "", player: str = "", account: str = "") -> str:
    """The client a counter `per` counts: an address by its limit_subject (an IPv6 /64)."""
    if per == "player":
        return player
    if per == "address":
        return limit_subject(address)
    if per == "pair":
        return f"{account}@{limit_subject(address)}"
    raise ValueError(f"a shared limit is not counted {per}")


class Limiter:
    """Takes and gives back the tokens of the shared rate limits (rates.RATES)."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store  # its one Redis call: Store.limit (storage/lua/limit.lua)
        self.settings = settings

    def calls(self, names: tuple[str, ...], **who: str) -> list[tuple[Rate, LimitCall]]:
        """The counters a request of these limits takes a token from, for client `who`."""
        found = []
        for name in names:
            limit = rate(name)
            interval = _ms(limit.every(self.settings))
            burst = limit.burst(self.settings)
            for per in limit.per:
                key = limit_key(limit.kind, per, subject(per, **who))
                found.append((limit, LimitCall(key, interval, burst)))
        return found

    async def take(self, *names: str, **who: str) -> None:
        """One token of every counter of these limits, or none of them: `Limited`."""
        await self._take(self.calls(names, **who))

    @contextlib.asynccontextmanager
    async def attempt(self, *names: str, **who: str) -> AsyncIterator[None]:
        """Take the tokens, run the request inside, and keep them only if it costs them
        (rates.COSTS: a limit's `costs` says which requests do)."""
        counters = self.calls(names, **who)
        costs = {limit.costs for limit, _ in counters}
        assert len(costs) == 1, "the limits of one request count the same requests"
        cost = costs.pop()
        await self._take(counters)
        try:
            yield
        except Refusal:
            if cost == "done":
                await self._give([call for _, call in counters])
            raise
        except BaseException:
            await self._give([call for _, call in counters])  # not the client's doing
            raise
        if cost == "failed":
            await self._give([call for _, call in counters])

    async def _take(self, counters: list[tuple[Rate, LimitCall]]) -> None:
        waits = await asyncio.gather(*(self.store.limit(call) for _, call in counters))
        if not any(waits):
            return
        await self._give(
            [call for (_, call), wait in zip(counters, waits, strict=True) if not wait]
        )
        wait, limit = max(
            ((w, limit) for (limit, _), w in zip(counters, waits, strict=True) if w),
            key=lambda refused: refused[0],
        )
        raise Limited(limit.message.format(burst=limit.burst(self.settings)), wait, limit.code)

    async def _give(self, calls: list[LimitCall]) -> None:
        with contextlib.suppress(StorageError, OSError):
            gives = (LimitCall(c.key, c.interval_ms, give=True) for c in calls)
            await asyncio.gather(*(self.store.limit(g) for g in gives))

    async def tally(self, key: str, every: float, most: int) -> None:
        """Count one more in a counter that refuses nothing (kept up to `most`)."""
        with contextlib.suppress(StorageError, OSError):
            await self.store.limit(LimitCall(key, _ms(every), most))

    async def tallied(self, key: str, every: float) -> float:
        """How many a `tally` counter holds now, each forgotten `every` seconds later
        (fractions: one being forgotten)."""
        # A take with no burst never takes: it answers (count + 1) intervals.
        interval = _ms(every)
        wait = await self.store.limit(LimitCall(key, interval, 0))
        return max(0.0, wait / interval - 1)


class SocketRate:
    """The per-socket message rate (rates `messages`), in memory: a socket lives on one
    instance. A refused message takes nothing; `strikes` counts refusals in a row."""

    def __init__(self, settings: Settings, now: float) -> None:
        self.rate = settings.rate
        self.burst = float(settings.burst)
        self.allowance = self.burst
        self.checked = now
        self.strikes = 0

    def allow(self, now: float) -> bool:
        """Take one message's token at loop time `now`, or refuse (and count a strike)."""
        elapsed, self.checked = now - self.checked, now
        self.allowance = min(self.burst, self.allowance + elapsed * self.rate)
        if self.allowance >= 1:
            self.allowance -= 1
            self.strikes = 0
            return True
        self.strikes += 1
        return False

    def retry_after_ms(self) -> int:
        """The ms until the next message is allowed."""
        return max(1, math.ceil((1 - self.allowance) / self.rate * 1000))
