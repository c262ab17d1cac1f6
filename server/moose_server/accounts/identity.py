"""Who a socket is: guests, accounts with a password, bots; tokens and logging in.

A guest says hello with a name and gets a player id and a token, as always. A
guest may claim their name as an account with a password (`register`): the
same player id, so their rating and history stay theirs. An account logs in
from anywhere with its name and password (a `hello` with `password`), may
change its password and may log out everywhere: both raise its token
generation, so tokens issued before are refused at hello on every instance.

Account names are unique by `name_key` (names.skeleton): case and look-alike
letters do not make a new name, and a guest may not take a name an account holds. Passwords
are kept only as scrypt hashes (`hashlib.scrypt`, a random salt each), hashed
in a worker thread so that the event loop keeps serving moves; failed logins
are metered per client address and per account in Redis (limits.Meter, shared
by every instance): `login_attempts` at once, then one more per
`login_window / login_attempts` seconds; past that a login is refused with
`rate_limited` (and `retry_after`, ms) before its password is even hashed.

Errors: `AccountError(code, message)` with a PROTOCOL.md code.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from moose_server.accounts.limits import Meter
from moose_server.accounts.names import renamings, skeleton
from moose_server.accounts.tokens import TokenError, TokenInfo, Tokens
from moose_server.errors import Refusal
from moose_server.settings import Settings
from moose_server.storage.players import PlayerStore
from moose_server.storage.scripts import AccountClaimCall

__all__ = ["AccountError", "Accounts", "Identity", "hash_password", "name_key", "verify_password"]

MIN_PASSWORD, MAX_PASSWORD = 8, 128
# scrypt's cost: 16 MiB and about 50 ms a hash on one core (OWASP's minimum is N=2**17
# with r=8 for 128 MiB; this server hashes in its own process, so it takes less memory).
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
HASHING_AT_ONCE = 2  # hashes in flight per instance: a flood of logins cannot take every core


def name_key(name: str) -> str:
    """What an account name looks like whatever its case or look-alike letters
    (names.skeleton: "B0B" and "bob" with a Cyrillic o are "bob")."""
    return skeleton(name)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def hash_password(password: str, salt: bytes | None = None) -> str:
    """A slow salted hash: ``scrypt$N$r$p$salt$hash`` (base64 parts)."""
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.scrypt(
        password.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32
    )
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(digest)}"


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` is the one `stored` was made from (constant-time compare)."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        want = base64.b64decode(digest)
        got = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=int(n),
                             r=int(r), p=int(p), dklen=len(want))  # fmt: skip
    except ValueError:
        return False
    return kind == "scrypt" and hmac.compare_digest(got, want)


_DUMMY_HASH = hash_password("not a password of anyone", b"\0" * 16)


class AccountError(Refusal):
    """A session request refused; `code` is a PROTOCOL.md error code."""


@dataclass(frozen=True)
class Identity:
    """Who a socket is: player id, name, bot or not, and an account's token generation."""

    player: str
    name: str
    bot: bool = False
    generation: int | None = None  # None: a guest
    renamed_from: str | None = None  # a guest's name an account took meanwhile (resume)

    @property
    def account(self) -> bool:
        """Whether this is an account (else a guest)."""
        return self.generation is not None


def _check_password(password: object) -> str:
    if not isinstance(password, str) or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(
            "bad_password", f"a password is {MIN_PASSWORD} to {MAX_PASSWORD} characters"
        )
    return password


class Accounts:
    """Guests, accounts and their tokens, for every instance alike."""

    def __init__(
        self, players: PlayerStore, tokens: Tokens, settings: Settings, logins: Meter
    ) -> None:
        self.players = players
        self.tokens = tokens
        self.settings = settings
        self.logins = logins  # failed logins, per client address and per account
        self._hashing = asyncio.Semaphore(HASHING_AT_ONCE)

    def token(self, who: Identity, now: float) -> str:
        """A fresh token for `who` (now in seconds)."""
        return self.tokens.issue(who.player, who.name, now, generation=who.generation, bot=who.bot)

    async def _hash(self, password: str) -> str:
        async with self._hashing:
            return await asyncio.to_thread(hash_password, password)

    async def _verify(self, password: str, stored: str) -> bool:
        async with self._hashing:
            return await asyncio.to_thread(verify_password, password, stored)

    async def guest(self, name: str, bot: bool) -> Identity:
        """A new guest with this name (checked already), unless an account holds it."""
        if await self.players.name_owner(name_key(name)) is not None:
            raise AccountError("name_taken", f"{name!r} is an account's name: log in with its "
                               "password, or pick another name")  # fmt: skip
        who = Identity(f"p_{secrets.token_hex(5)}", name, bot)
        if bot:
            await self.players.mark_bot(who.player, int(self.settings.guest_ttl * 1000))
        return who

    async def resume(self, token: str, now: float) -> Identity:
        """The identity of a token (one Redis read: the account's generation)."""
        info: TokenInfo = self.tokens.check(token, now)
        profile = (await self.players.profiles([info.player]))[0]
        generation = int(profile["gen"]) if "gen" in profile else None
        if generation != info.generation:
            if generation is None:
                raise TokenError("bad_token", "the session token is not signed by this service")
            raise TokenError("token_revoked", "this session was logged out; log in again")
        if generation is None:  # a guest is the name its token says, if still free
            return await self._guest_name(Identity(info.player, info.name, info.bot))
        bot = profile.get("bot") == "1"
        return Identity(info.player, profile.get("name", info.name), bot, generation)

    async def _guest_name(self, who: Identity) -> Identity:
        """The guest as they were, or under a fresh name if an account took theirs."""
        owner = await self.players.name_owner(name_key(who.name))
        if owner is None or owner == who.player:
            return who
        for name in renamings(who.name):
            if await self.players.name_owner(name_key(name)) is None:
                break
        return Identity(who.player, name, who.bot, renamed_from=who.name)

    async def login(self, name: str, password: str, address: str) -> Identity:
        """Log in to an account by name and password, within the failed-login limits."""
        key = name_key(name)
        async with self.logins.attempt(address, key):  # rate_limited before any hashing
            owner = await self.players.name_owner(key)
            profile = (await self.players.profiles([owner]))[0] if owner else {}
            if not await self._verify(password, profile.get("pw", _DUMMY_HASH)) or not owner:
                raise AccountError("bad_login", "no account has that name and password")
        return Identity(owner, profile["name"], profile.get("bot") == "1", int(profile["gen"]))

    async def register(self, who: Identity, password: object, now: int) -> Identity:
        """Claim a guest's name as an account with a password: the same player id."""
        if who.account:
            raise AccountError("already_registered", "this session is an account already")
        pw = await self._hash(_check_password(password))
        claim = AccountClaimCall(
            player=who.player,
            name_key=name_key(who.name),
            name=who.name,
            pw=pw,
            bot=who.bot,
            now=now,
        )
        got = await self.players.claim(claim)
        if got == "name_taken":
            raise AccountError("name_taken", f"an account holds a name like {who.name!r}")
        if got == "already_registered":
            raise AccountError("already_registered", "this player is an account already")
        return Identity(who.player, who.name, who.bot, int(got))

    async def change_password(
        self, who: Identity, old: object, new: object, address: str
    ) -> Identity:
        """A new password (the old one checked like a login); other sessions are logged out."""
        if not who.account:
            raise AccountError("not_registered", "a guest has no password; register first")
        if not isinstance(old, str):
            raise AccountError("bad_login", "the current password is wrong")
        await self.login(who.name, old, address)
        pw = await self._hash(_check_password(new))
        return Identity(
            who.player, who.name, who.bot, await self.players.set_password(who.player, pw)
        )

    async def logout_all(self, who: Identity) -> Identity:
        """Refuse every token issued so far, on every instance."""
        if not who.account:
            raise AccountError("not_registered", "a guest has no account to log out of")
        return Identity(
            who.player, who.name, who.bot, await self.players.next_generation(who.player)
        )
