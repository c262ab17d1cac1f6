"""Limits per client, for a service open to anyone: sockets, join codes, logins, the API.

- `Sockets` counts the open sockets of this instance, in all and per client
  address (see addresses.py), and refuses one more beyond the caps before the
  WebSocket handshake: HTTP 503 when the instance is full (a load balancer
  tries another), 429 when that address has its share here. These counts live
  in memory: a count kept in Redis would outlive an instance that dies. The
  service-wide cap per address is the load balancer's (deploy/nginx.conf).
- `CodeGuard`, `Lockout` and `ApiLimit` name the limiter's (limiter.py) join-code
  guesses, failed logins and HTTP API requests for the parts that ask them;
  `Lockout` also slows the logins of an account failed from everywhere, never
  refusing them, so its owner still gets in.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager

from aiohttp import web

from moose_server.addresses import client_address, limit_subject, networks
from moose_server.errors import Refusal
from moose_server.limits.limiter import Limited, Limiter
from moose_server.settings import Settings
from moose_server.storage.keys import limit_key

__all__ = ["ApiLimit", "CodeGuard", "Limited", "Lockout", "Sockets"]

RETRY_AFTER = 5  # seconds, in the Retry-After of a refused handshake


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


class CodeGuard:
    """The join-code guess limit (rates `code`): what a request naming a code costs."""

    def __init__(self, limiter: Limiter) -> None:
        self.limiter = limiter

    def attempt(self, address: str, player: str) -> AbstractAsyncContextManager[None]:
        """Refused before the code is looked at when the client has no guess left; the
        request inside costs a guess only if it is refused (`bad_code`, `table_full`...)."""
        return self.limiter.attempt("code", address=address, player=player)


# -- Logins -------------------------------------------------------------


class Lockout:
    """Failed logins, kept so that no one can lock an account's owner out of it.

    Refused (`Limited`) past `login_attempts` failures of one address on one account,
    or `login_address_attempts` of one address on any (rates `login`, `login_any`); a
    success gives its tokens back. An account's failures from every address
    together only slow its logins: past `login_slow_after` each makes the answer wait
    `login_delay_step` s more, up to `login_delay_max`, and they are forgotten one per
    `login_window / login_attempts` s. So the owner, from an address with no failures,
    always gets in, at most `login_delay_max` late.
    """

    def __init__(self, limiter: Limiter, settings: Settings) -> None:
        s = settings
        self.limiter = limiter
        self.free, self.step, self.most = s.login_slow_after, s.login_delay_step, s.login_delay_max
        self.forget = s.login_window / s.login_attempts
        # Failures past the ones that reach the longest delay change nothing: not kept,
        # so that the slowing ends soon after an attack does.
        self.kept = self.free + math.ceil(self.most / self.step) + 1

    @contextlib.asynccontextmanager
    async def attempt(self, address: str, account: str) -> AsyncIterator[None]:
        """A login of `account` from `address`: refused, or slowed, then run inside."""
        async with self.limiter.attempt("login", "login_any", address=address, account=account):
            await asyncio.sleep(await self.delay(account))
            try:
                yield
            except Refusal:
                await self.limiter.tally(
                    limit_key("login", "account", account), self.forget, self.kept
                )
                raise

    async def delay(self, account: str) -> float:
        """Seconds a login of `account` waits now, for the failures it has had lately."""
        failures = await self.limiter.tallied(limit_key("login", "account", account), self.forget)
        return min(self.most, self.step * max(0.0, failures - self.free))


class ApiLimit:
    """HTTP API requests per client address, shared by every instance (rates `api`)."""

    def __init__(self, limiter: Limiter, settings: Settings) -> None:
        self.limiter = limiter
        self.trusted = networks(settings.trusted_proxies)

    async def check(self, peer: str | None, forwarded: str | None) -> None:
        """Take a request's token, or raise `Limited` (answered HTTP 429)."""
        await self.limiter.take("api", address=client_address(peer, forwarded, self.trusted))
