"""Limits per client, for a service open to anyone: sockets, and join-code guesses.

- `Sockets` counts the open sockets of this instance, in all and per client
  address (see addresses.py), and refuses one more beyond the caps before the
  WebSocket handshake: HTTP 503 when the instance is full (a load balancer
  tries another), 429 when that address has its share here. These counts live
  in memory: a count kept in Redis would outlive an instance that dies. The
  service-wide cap per address is the load balancer's (deploy/nginx.conf).
- `Meter` meters a kind of request per client: `CodeGuard` the requests that
  name a private table's join code, and accounts.py's the logins. Each
  takes a token from two buckets in Redis, the client address's and the
  player's, shared by every instance; a request that succeeds gives them back,
  so only failures (`bad_code`, `table_full`, ...) use them up. With none left
  the request is refused with `rate_limited` and `retry_after` (ms) before the
  code is even looked at, so guessing costs the same whatever the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Iterator

from aiohttp import web
from redis.exceptions import RedisError

from moose_server.addresses import client_address, limit_subject, networks
from moose_server.errors import Refusal
from moose_server.settings import Settings
from moose_server.storage.keys import limit_key
from moose_server.storage.scripts import LimitCall
from moose_server.storage.store import Store

__all__ = ["CodeGuard", "Limited", "Meter", "Sockets"]

RETRY_AFTER = 5  # seconds, in the Retry-After of a refused handshake


class Limited(Refusal):
    """`rate_limited`, with the ms after which the client may try again."""

    def __init__(self, message: str, retry_after_ms: int) -> None:
        super().__init__("rate_limited", message)
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
        with contextlib.suppress(RedisError, OSError):
            gives = (LimitCall(k, self.interval_ms, give=True) for k in keys)
            await asyncio.gather(*(self.store.limit(g) for g in gives))


class CodeGuard(Meter):
    """Meters requests that name a join code, per client address and per player."""

    def __init__(self, store: Store, settings: Settings) -> None:
        super().__init__(store, "code", settings.code_guesses, settings.code_guess_interval,
                         "too many join codes tried; wait and try again")  # fmt: skip
