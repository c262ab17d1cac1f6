"""Session tokens: player id, name and expiry, signed with the service's shared secret.

A token is ``b64(player).b64(name).expiry.signature`` (base64url without padding,
expiry in seconds since the epoch, signature an HMAC-SHA256 prefix in hex), so a
player who reconnects to any instance gets the same id and seats back.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

from moose_server.errors import Refusal

__all__ = ["TokenError", "Tokens"]

_SIG_HEX = 32


class TokenError(Refusal):
    """A token that cannot be used; `code` is bad_token or token_expired."""


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


def _unb64(part: str) -> str:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode()


class Tokens:
    """Issues and checks session tokens."""

    def __init__(self, secret: str, ttl: float) -> None:
        self._key = secret.encode()
        self.ttl = ttl

    def _sign(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()[:_SIG_HEX]

    def issue(self, player: str, name: str, now: float) -> str:
        """A token for the player, valid for `ttl` seconds from `now` (seconds)."""
        body = f"{_b64(player)}.{_b64(name)}.{int(now + self.ttl)}"
        return f"{body}.{self._sign(body)}"

    def check(self, token: str, now: float) -> tuple[str, str]:
        """The (player, name) of a valid token, or TokenError."""
        parts = token.split(".")
        if len(parts) != 4 or not parts[2].isdigit():
            raise TokenError("bad_token", "the session token is malformed")
        body = ".".join(parts[:3])
        if not hmac.compare_digest(self._sign(body), parts[3]):
            raise TokenError("bad_token", "the session token is not signed by this service")
        if int(parts[2]) <= now:
            raise TokenError("token_expired", "the session token has expired; say hello again")
        try:
            return _unb64(parts[0]), _unb64(parts[1])
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise TokenError("bad_token", "the session token is malformed") from None
