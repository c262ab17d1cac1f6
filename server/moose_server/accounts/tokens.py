"""Session tokens: player id, name, expiry and kind, signed with the service's shared secret.

A guest's token is ``b64(player).b64(name).expiry.signature`` (base64url without
padding, expiry in seconds since the epoch, signature an HMAC-SHA256 prefix in
hex), so a player who reconnects to any instance gets the same id and seats
back. A bot guest's and an account's token carry one more part before the
signature: ``b`` for a bot guest, ``a<generation>`` for an account. An
account's generation goes up when it logs out everywhere or changes its
password, and a hello with a token of an older generation is refused: that is
the one Redis read a token costs, at hello only.

Every token whose signature does not verify (malformed, forged, tampered) is
`bad_token` with one message, whatever is wrong with it: the answer tells a
guesser nothing. `token_expired` and `token_revoked` come only after the
signature verified. The secret itself must be worth keeping (`check_secret`):
32 bytes or more and none of the placeholders of this repository's deploy
files and docs, which anyone can read (a server that took one signed tokens
anyone could forge).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass

from moose_server.errors import Refusal

__all__ = ["PLACEHOLDERS", "TokenError", "TokenInfo", "Tokens", "check_secret"]

_SIG_HEX = 32
_BAD = "the session token is not valid here; say hello with a name, or log in"
MIN_SECRET = 32  # bytes
# The example secrets of this repository (deploy/, docs/, README.md): refused as
# they are, and any secret with one of the markers in it. tests/test_logins.py
# scans the repository for more.
PLACEHOLDERS = (
    "REPLACE-ME-with-32-random-bytes-base64",  # deploy/k8s/secret.yaml before issue 22
    "REPLACE-ME-moose-serve-refuses-this-placeholder-use-openssl-rand-base64-32",
    "change-me",  # docs/SERVER.md before issue 22
    "...",  # deploy/Dockerfile
)
_MARKERS = ("replace-me", "replace_me", "change-me", "changeme", "placeholder")


class TokenError(Refusal):
    """A token that cannot be used; `code` is bad_token, token_expired or token_revoked."""

    @classmethod
    def bad(cls) -> TokenError:
        """`bad_token`, the one answer to every token that is not valid here."""
        return cls("bad_token", _BAD)


@dataclass(frozen=True)
class TokenInfo:
    """What a valid token says: who, and for an account its generation."""

    player: str
    name: str
    generation: int | None = None  # None: a guest
    bot: bool = False  # a bot guest (an account's flag is in its profile)


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


def _unb64(part: str) -> str:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode()


def _kind(part: str) -> tuple[int | None, bool]:
    """(generation, bot) of a token's kind part, or TokenError."""
    if part == "b":
        return None, True
    if part.startswith("a") and part[1:].isdigit():
        return int(part[1:]), False
    raise TokenError.bad()


def check_secret(secret: str) -> None:
    """ValueError unless `secret` may sign tokens: 32 bytes or more, no placeholder."""
    advice = ("give every instance the same random secret, e.g. MOOSE_TOKEN_SECRET="
              "$(openssl rand -base64 32), or leave it unset to share a generated one "
              "through Redis")  # fmt: skip
    lowered = secret.lower()
    if secret in PLACEHOLDERS or any(marker in lowered for marker in _MARKERS):
        raise ValueError(f"the token secret is a placeholder from the docs: {advice}")
    if len(secret.encode()) < MIN_SECRET:
        raise ValueError(f"the token secret has fewer than {MIN_SECRET} bytes: {advice}")


class Tokens:
    """Issues and checks session tokens."""

    def __init__(self, secret: str, ttl: float) -> None:
        self._key = secret.encode()
        self.ttl = ttl

    def _sign(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()[:_SIG_HEX]

    def issue(
        self, player: str, name: str, now: float, *, generation: int | None = None,
        bot: bool = False,
    ) -> str:  # fmt: skip
        """A token for the player, valid for `ttl` seconds from `now` (seconds)."""
        body = f"{_b64(player)}.{_b64(name)}.{int(now + self.ttl)}"
        if generation is not None:
            body += f".a{generation}"
        elif bot:
            body += ".b"
        return f"{body}.{self._sign(body)}"

    def check(self, token: str, now: float) -> TokenInfo:
        """What a valid token says, or TokenError (its generation is the caller's to check)."""
        parts = token.split(".")
        if len(parts) not in (4, 5):
            raise TokenError.bad()
        body = ".".join(parts[:-1])
        # As bytes: compare_digest refuses str with other than ASCII in it (TypeError).
        if not hmac.compare_digest(self._sign(body).encode(), parts[-1].encode()):
            raise TokenError.bad()
        if int(parts[2]) <= now:
            raise TokenError("token_expired", "the session token has expired; say hello again")
        generation, bot = _kind(parts[3]) if len(parts) == 5 else (None, False)
        try:
            return TokenInfo(_unb64(parts[0]), _unb64(parts[1]), generation, bot)
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise TokenError.bad() from None
