"""Who a socket is: guests, accounts with a password, bots; tokens and logging in.

A guest says hello with a name and gets a player id and a token, as always. A
guest may claim their name as an account with a password (`register`): the
same player id, so their rating and history stay theirs. An account logs in
from anywhere with its name and password (a `hello` with `password`), may
change its password and may log out everywhere: both raise its token
generation, so tokens issued before are refused at hello on every instance.

Account names are unique by `name_key` (names.skeleton): case and look-alike
letters do not make a new name, and a guest may not take a name an account
holds. Passwords follow passwords.py's rules and are kept only as scrypt
hashes, made in `Hashing`'s threads (a share kept for logins); a login with a
hash of older parameters stores a new one. The limiter's `register` counts
new accounts per client address, and limits.py's `Lockout` refuses failed logins per
(account, address) and per address and only slows an account's from
everywhere, so that no one can lock its owner out.

Errors: `AccountError(code, message)` with a PROTOCOL.md code.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from moose_server.accounts.calls import AccountClaimCall
from moose_server.accounts.names import renamings, skeleton
from moose_server.accounts.passwords import (
    DUMMY_HASH,
    Hashing,
    hash_password,
    outdated,
    verify_password,
    weakness,
)
from moose_server.accounts.store import PlayerStore
from moose_server.accounts.tokens import TokenError, TokenInfo, Tokens
from moose_server.errors import Refusal
from moose_server.limits.limiter import Limiter
from moose_server.limits.limits import Lockout
from moose_server.settings import Settings

__all__ = ["AccountError", "Accounts", "Identity", "hash_password", "name_key", "verify_password"]


def name_key(name: str) -> str:
    """What an account name looks like whatever its case or look-alike letters
    (names.skeleton: "B0B" and "bob" with a Cyrillic o are "bob")."""
    return skeleton(name)


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
    if not isinstance(password, str):
        raise AccountError("bad_password", "a password is a string")
    if (why := weakness(password)) is not None:
        raise AccountError("bad_password", why)
    return password


class Accounts:
    """Guests, accounts and their tokens, for every instance alike."""

    def __init__(
        self,
        players: PlayerStore,
        tokens: Tokens,
        settings: Settings,
        *,
        lockout: Lockout,
        limiter: Limiter,
        hashing: Hashing,
    ) -> None:
        self.players = players
        self.tokens = tokens
        self.settings = settings
        self.lockout = lockout  # failed logins: refused per (account, address), slowed per account
        self.limiter = limiter  # new accounts per client address (rates `register`)
        self.hashing = hashing

    def token(self, who: Identity, now: float) -> str:
        """A fresh token for `who` (now in seconds)."""
        return self.tokens.issue(who.player, who.name, now, generation=who.generation, bot=who.bot)

    async def guest(self, name: str, bot: bool) -> Identity:
        """A new guest with this name (checked already), unless an account holds it."""
        if await self.players.name_owner(name_key(name)) is not None:
            raise AccountError(
                "name_taken",
                f"{name!r} is an account's name: log in with its password, or pick another name",
            )
        who = Identity(f"p_{secrets.token_hex(5)}", name, bot)
        if bot:
            await self.players.mark_bot(who.player, int(self.settings.guest_ttl * 1000))
        return who

    def signed(self, token: str, now: float) -> str:
        """The player a valid token names (no Redis read: its generation is unchecked)."""
        return self.tokens.check(token, now).player

    async def resume(self, token: str, now: float) -> Identity:
        """The identity of a token (one Redis read: the account's generation)."""
        info: TokenInfo = self.tokens.check(token, now)
        profile = (await self.players.profiles([info.player]))[0]
        generation = int(profile["gen"]) if "gen" in profile else None
        if generation != info.generation:
            if generation is None:  # signed here, for an account this Redis does not hold
                raise TokenError.bad()
            raise TokenError("token_revoked", "this session was logged out; log in again")
        if generation is None and profile.get("revoked"):  # a guest banned since
            raise TokenError("token_revoked", "this session was ended; say hello again")
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
        async with self.lockout.attempt(address, key):  # rate_limited before any hashing
            owner = await self.players.name_owner(key)
            profile = (await self.players.profiles([owner]))[0] if owner else {}
            stored = profile.get("pw", DUMMY_HASH)
            if not await self.hashing.for_login(verify_password, password, stored) or not owner:
                raise AccountError("bad_login", "no account has that name and password")
        if outdated(stored):
            await self._upgrade(owner, password, stored)
        return Identity(owner, profile["name"], profile.get("bot") == "1", int(profile["gen"]))

    async def _upgrade(self, player: str, password: str, stored: str) -> None:
        """Store a hash of today's parameters for a password just verified; the old hash
        stays if the password changed meanwhile (tokens stay valid either way)."""
        fresh = await self.hashing.for_login(hash_password, password)
        await self.players.upgrade_password(player, stored, fresh)

    async def register(self, who: Identity, password: object, now: int, address: str) -> Identity:
        """Claim a guest's name as an account with a password: the same player id."""
        if who.account:
            raise AccountError("already_registered", "this session is an account already")
        checked = _check_password(password)
        await self.limiter.take("register", address=address)  # before any hashing
        pw = await self.hashing.for_registration(hash_password, checked)
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
        pw = await self.hashing.for_login(hash_password, _check_password(new))
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
