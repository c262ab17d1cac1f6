"""Passwords: the rules a new one must meet, its scrypt hash, and the threads that hash.

- **Policy**: a new password has 10 to 128 characters and is not on the list of
  the 20,000 most common passwords that Django ships (data/README.md says where
  it comes from); `weakness` says which rule a password breaks.
- **Hashes**: scrypt at OWASP's parameters (N=2^17, r=8, p=1: 128 MiB and about
  0.4 s of one core a hash), ``scrypt$N$r$p$salt$hash`` with a random salt each.
  A hash of older parameters still verifies; `outdated` tells the caller to
  store a new one once the password is known good (at login).
- **Hashing**: `Hashing` runs them in a few threads of its own, off the event
  loop. Registrations may use all but `hash_login_share` of them, at a lower
  CPU priority, so that a flood of new accounts cannot make the logins of
  existing ones wait behind it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import gzip
import hashlib
import hmac
import os
import secrets
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from importlib import resources
from typing import TypeVar

from moose_server.settings import Settings

__all__ = [
    "DUMMY_HASH",
    "MAX_PASSWORD",
    "MIN_PASSWORD",
    "Hashing",
    "hash_password",
    "outdated",
    "verify_password",
    "weakness",
]

MIN_PASSWORD, MAX_PASSWORD = 10, 128
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**17, 8, 1
REGISTRATION_NICE = 10  # more: a new account's hash gets ~1/10 of a busy core beside a login's
_COMMON = "data/common-passwords.txt.gz"
T = TypeVar("T")


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _maxmem(n: int, r: int, p: int) -> int:
    """What OpenSSL's scrypt allocates for these parameters, and a MiB to spare (its
    default cap, 32 MiB, is below N=2^17's 128 MiB)."""
    return 128 * r * (n + p + 2) + (1 << 20)


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, size: int) -> bytes:
    return hashlib.scrypt(
        password.encode(), salt=salt, n=n, r=r, p=p, dklen=size, maxmem=_maxmem(n, r, p)
    )


def hash_password(password: str, salt: bytes | None = None) -> str:
    """A slow salted hash: ``scrypt$N$r$p$salt$hash`` (base64 parts)."""
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = _scrypt(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P, 32)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(digest)}"


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` is the one `stored` was made from (constant-time compare)."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        want = base64.b64decode(digest)
        got = _scrypt(password, base64.b64decode(salt), int(n), int(r), int(p), len(want))
    except ValueError:
        return False
    return kind == "scrypt" and hmac.compare_digest(got, want)


def outdated(stored: str) -> bool:
    """Whether a stored hash was made with other parameters than today's."""
    return not stored.startswith(f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}$")


# What a login for a name no account holds is checked against, so that it costs
# the same as a real one (no password hashes to these zero bytes).
DUMMY_HASH = f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(bytes(16))}${_b64(bytes(32))}"


@functools.cache
def _common() -> frozenset[str]:
    """The common passwords long enough to pass the length rule (1,785 of 20,000)."""
    with resources.files("moose_server.accounts").joinpath(_COMMON).open("rb") as raw:
        lines = gzip.decompress(raw.read()).decode().splitlines()
    return frozenset(w for line in lines if len(w := line.strip()) >= MIN_PASSWORD)


def weakness(password: str) -> str | None:
    """Which rule a new password breaks, for the person choosing it; None if none."""
    if len(password) < MIN_PASSWORD:
        return f"a password needs at least {MIN_PASSWORD} characters"
    if len(password) > MAX_PASSWORD:
        return f"a password has at most {MAX_PASSWORD} characters"
    if password.strip().lower() in _common():
        return "that password is one of the most common ones: pick another"
    return None


def _background() -> None:
    """Lower this thread's CPU priority (on Linux a thread has its own), so that when
    the cores are busy, logins' hashes and the event loop go before new accounts'."""
    if sys.platform == "linux":
        me = threading.get_native_id()
        with contextlib.suppress(OSError):
            nice = os.getpriority(os.PRIO_PROCESS, me) + REGISTRATION_NICE
            os.setpriority(os.PRIO_PROCESS, me, min(19, nice))


class Hashing:
    """Password hashes, at most `hash_threads` at once, `hash_login_share` kept for logins.

    New accounts hash in threads of their own at a lower CPU priority: under a
    registration flood a login waits for no registration's hash, neither for a
    thread nor, on Linux, for a core.
    """

    def __init__(self, settings: Settings) -> None:
        threads, kept = settings.hash_threads, settings.hash_login_share
        self._logins = ThreadPoolExecutor(threads, thread_name_prefix="scrypt-login")
        self._new = ThreadPoolExecutor(
            threads - kept, thread_name_prefix="scrypt-register", initializer=_background
        )
        self._any = asyncio.Semaphore(threads)  # 128 MiB each
        # Registrations queue here first: they hold none of `_any` while they wait.
        self._registrations = asyncio.Semaphore(threads - kept)

    async def _run(self, pool: Executor, fn: Callable[..., T], *args: str) -> T:
        async with self._any:
            return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)

    async def for_login(self, fn: Callable[..., T], *args: str) -> T:
        """Run `fn(*args)` (a hash) for a login or a password change."""
        return await self._run(self._logins, fn, *args)

    async def for_registration(self, fn: Callable[..., T], *args: str) -> T:
        """Run `fn(*args)` for a new account, never in the share kept for logins."""
        async with self._registrations:
            return await self._run(self._new, fn, *args)

    def close(self) -> None:
        """Stop the threads (a hash under way finishes; queued ones are dropped)."""
        for pool in (self._logins, self._new):
            pool.shutdown(wait=False, cancel_futures=True)
