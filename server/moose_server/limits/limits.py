"""Limits per client, for a service open to anyone: sockets, and join-code guesses.

- `Sockets` counts the open sockets of this instance, in all and per client
  address (see addresses.py), and refuses one more beyond the caps before the
  WebSocket handshake: HTTP 503 when the instance is full (a load balancer
  tries another), 429 when that address has its share here. These counts live
  in memory: a count kept in Redis would outlive an instance that dies. The
  service-wide cap per address is the load balancer's (deploy/nginx.conf).
- `Meter` meters a kind of request per client: `CodeGuard` the requests that
  name a private table's join code. Each
  takes a token from two buckets in Redis, the client address's and the
  player's, shared by every instance; a request that succeeds gives them back,
  so only failures (`bad_code`, `table_full`, ...) use them up. With none left
  the request is refused with `rate_limited` and `retry_after` (ms) before the
  code is even looked at, so guessing costs the same whatever the answer.
- Logins: `Registrations` counts new accounts per address an hour;
  `Lockout` refuses failed logins per (account, address) and per address, and
  only slows those of an account from everywhere, so its owner still gets in.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import Counter
from collections.abc import AsyncIterator, Iterator

from aiohttp import web

from moose_server.addresses import client_address, limit_subject, networks
from moose_server.errors import Refusal
from moose_server.settings import Settings
from moose_server.storage.failures import StorageError
from moose_server.storage.keys import limit_key
from moose_server.storage.scripts import LimitCall
from moose_server.storage.store import Store

__all__ = ["ApiLimit", "CodeGuard", "Limited", "Lockout", "Meter", "Registrations", "Sockets"]

RETRY_AFTER = 5  # seconds, in the Retry-After of a refused handshake


class Limited(Refusal):
    """A limit refused the request: `rate_limited` with the ms after which the client may
    try again, or a hold's code (`too_many_games`, ...), with `retry_after` where
    waiting helps (None: it clears when the client ends what it holds)."""

    def __init__(
        self, message: str, retry_after_ms: int | None, code: str = "rate_limited"
    ) -> None:
        super().__init__(code, message)
        if retry_after_ms is not None:
            self.fields = {"retry_after": max(1, retry_after_ms)}


class Sockets:
    """Open sockets of this instance, in all and per client address, under their caps."""

    def __init__(self, settings: Settings) -> None:
        self.limit = settings.max_sockets
        self.per_address = settings.max_sockets_per_address
        self.trusted = networks(settings.trusted_proxies)
        self.open = 0
        self.by_subject: Counter[str] = Counter()

    def address(self, peer: str | None, forwarded: str | None) -> str:
        """The client's address (X-Forwarded-For counts from trusted proxies only)."""
        return client_address(peer, forwarded, self.trusted)

    def refusal(self, address: str) -> web.HTTPException | None:
        """The answer to a handshake from `address` that would be one socket too many."""
        retry = {"Retry-After": str(RETRY_AFTER)}
        if self.open >= self.limit:
            return web.HTTPServiceUnavailable(text="this instance is full", headers=retry)
        if self.by_subject[limit_subject(address)] >= self.per_address:
            return web.HTTPTooManyRequests(text="too many sockets from your address", headers=retry)
        return None

    @contextlib.contextmanager
    def held(self, address: str) -> Iterator[None]:
        """Count a socket from `address` while it is open."""
        subject = limit_subject(address)
        self.open += 1
        self.by_subject[subject] += 1
        try:
            yield
        finally:
            self.open -= 1
            self.by_subject[subject] -= 1
            if self.by_subject[subject] <= 0:
                del self.by_subject[subject]


class Meter:
    """Meters a kind of request per client address and per subject (a player, an account).

    `burst` failures at once, then one more every `interval` seconds; successes are free.
    """

    def __init__(self, store: Store, kind: str, burst: int, interval: float, message: str) -> None:
        self.store = store
        self.kind = kind
        self.burst = burst
        self.interval_ms = max(1, round(interval * 1000))
        self.message = message

    @contextlib.asynccontextmanager
    async def attempt(self, address: str, subject: str) -> AsyncIterator[None]:
        """Pay a token per client for the request inside; a success gets them back."""
        keys = [
            limit_key(self.kind, "address", limit_subject(address)),
            limit_key(self.kind, "player", subject),
        ]
        waits = await asyncio.gather(
            *(self.store.limit(LimitCall(k, self.interval_ms, self.burst)) for k in keys)
        )
        taken = [k for k, wait in zip(keys, waits, strict=True) if wait == 0]
        if len(taken) < len(keys):
            await self._give(taken)
            raise Limited(self.message, max(waits))
        try:
            yield
        except Refusal:
            raise  # a refused request keeps its tokens: that is what guessing costs
        except BaseException:
            await self._give(keys)  # not the client's doing (Redis, a bug): no charge
            raise
        await self._give(keys)

    async def _give(self, keys: list[str]) -> None:
        with contextlib.suppress(StorageError, OSError):
            gives = (LimitCall(k, self.interval_ms, give=True) for k in keys)
            await asyncio.gather(*(self.store.limit(g) for g in gives))


class CodeGuard(Meter):
    """Meters requests that name a join code, per client address and per player."""

    def __init__(self, store: Store, settings: Settings) -> None:
        super().__init__(
            store,
            "code",
            settings.code_guesses,
            settings.code_guess_interval,
            "too many join codes tried; wait and try again",
        )


# -- Logins -------------------------------------------------------------


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


class Registrations:
    """New accounts per client address, shared by every instance: `registrations_per_hour`
    at once, then one more every hour / that many. Each costs a password hash."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.burst = settings.registrations_per_hour
        self.interval_ms = _ms(3600 / self.burst)

    async def take(self, address: str) -> None:
        """Count one more account from `address`, or `Limited` (none is given back)."""
        key = limit_key("register", "address", limit_subject(address))
        wait = await self.store.limit(LimitCall(key, self.interval_ms, self.burst))
        if wait:
            raise Limited("too many accounts registered from your address; try again later", wait)


class Lockout:
    """Failed logins, kept so that no one can lock an account's owner out of it.

    Refused (`Limited`) past `login_attempts` failures of one address on one account,
    or `login_address_attempts` of one address on any; both refill over `login_window`
    and a success gives its tokens back. An account's failures from every address
    together only slow its logins: past `login_slow_after` each makes the answer wait
    `login_delay_step` s more, up to `login_delay_max`, and they are forgotten one per
    `login_window / login_attempts` s. So the owner, from an address with no failures,
    always gets in, at most `login_delay_max` late.
    """

    def __init__(self, store: Store, settings: Settings) -> None:
        s = settings
        self.store = store
        self.pair = (s.login_attempts, _ms(s.login_window / s.login_attempts))
        self.address = (s.login_address_attempts, _ms(s.login_window / s.login_address_attempts))
        self.free, self.step, self.most = s.login_slow_after, s.login_delay_step, s.login_delay_max
        self.forget_ms = self.pair[1]
        # Failures past the ones that reach the longest delay change nothing: not kept,
        # so that the slowing ends soon after an attack does.
        self.kept = self.free + math.ceil(self.most / self.step) + 1

    def _keys(self, address: str, account: str) -> list[tuple[str, int, int]]:
        subject = limit_subject(address)
        return [
            (limit_key("login", "pair", f"{account}@{subject}"), self.pair[1], self.pair[0]),
            (limit_key("login", "address", subject), self.address[1], self.address[0]),
        ]

    @contextlib.asynccontextmanager
    async def attempt(self, address: str, account: str) -> AsyncIterator[None]:
        """A login of `account` from `address`: refused, or slowed, then run inside."""
        keys = self._keys(address, account)
        calls = [LimitCall(key, interval, burst) for key, interval, burst in keys]
        waits = await asyncio.gather(*(self.store.limit(c) for c in calls))
        taken = [c for c, wait in zip(calls, waits, strict=True) if wait == 0]
        if len(taken) < len(calls):
            await _give_back(self.store, taken)
            raise Limited("too many failed logins; try again later", max(waits))
        await asyncio.sleep(await self.delay(account))
        try:
            yield
        except Refusal:
            await self._failed(account)  # the pair's and the address' tokens stay spent
            raise
        except BaseException:
            await _give_back(self.store, calls)  # not the client's doing: no charge
            raise
        await _give_back(self.store, calls)

    async def delay(self, account: str) -> float:
        """Seconds a login of `account` waits now, for the failures it has had lately."""
        # A take with no burst never takes: it answers how long until the bucket's
        # level would allow one, (failures + 1) forget intervals.
        key = limit_key("login", "account", account)
        wait = await self.store.limit(LimitCall(key, self.forget_ms, 0))
        failures = wait / self.forget_ms - 1
        return min(self.most, self.step * max(0.0, failures - self.free))

    async def _failed(self, account: str) -> None:
        key = limit_key("login", "account", account)
        with contextlib.suppress(StorageError, OSError):
            await self.store.limit(LimitCall(key, self.forget_ms, self.kept))


async def _give_back(store: Store, calls: list[LimitCall]) -> None:
    with contextlib.suppress(StorageError, OSError):
        gives = (LimitCall(c.key, c.interval_ms, give=True) for c in calls)
        await asyncio.gather(*(store.limit(g) for g in gives))


class ApiLimit:
    """HTTP API requests per client address, shared by every instance (lua/limit.lua):
    `api_burst` at once, then `api_rate` a second."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.trusted = networks(settings.trusted_proxies)
        self.burst = settings.api_burst
        self.interval_ms = max(1, round(1000 / settings.api_rate))

    async def check(self, peer: str | None, forwarded: str | None) -> None:
        """Take a request's token, or raise `Limited` (answered HTTP 429)."""
        subject = limit_subject(client_address(peer, forwarded, self.trusted))
        call = LimitCall(limit_key("api", "address", subject), self.interval_ms, self.burst)
        wait = await self.store.limit(call)
        if wait:
            raise Limited("too many API requests from your address; slow down", wait)
