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
signature verified. The secret itself must be worth keeping (`check_secret`
in settings.py, which refuses the others at start): 32 bytes or more and none
of the placeholders of this repository's deploy files and docs, which anyone
can read (a server that took one signed tokens anyone could forge).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass

from moose_server.errors import Refusal

__all__ = ["TokenError", "TokenInfo", "Tokens"]

_SIG_HEX = 32
_BAD = "the session token is not valid here; say hello with a name, or log in"


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


class Tokens:
    """Issues and checks session tokens."""

    def __init__(self, secret: str, ttl: float) -> None:
        self._key = secret.encode()
        self.ttl = ttl

    def _sign(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()[:_SIG_HEX]

    def issue(
        self,
        player: str,
        name: str,
        now: float,
        *,
        generation: int | None = None,
        bot: bool = False,
    ) -> str:
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
