"""What is told to whom, away from the page: pure decisions, no I/O.

A notice goes to a player of a correspondence game (`is_correspondence`) when
it becomes their move (`your_move`), before their deadline (`time_running_out`),
when the game ends (`game_over`), or when they are challenged
(`challenge_received`). Each has an id made of what it is about, so that the
same event is one notice however often it is queued or taken.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from moose import rules
from moose_server.errors import Refusal
from moose_server.play import Game

__all__ = [
    "KINDS",
    "Notice",
    "SubscriptionError",
    "is_correspondence",
    "reminder",
    "subscription_id",
    "turn_notices",
    "valid_subscription",
]

KINDS = ("your_move", "time_running_out", "game_over", "challenge_received")
MAX_ENDPOINT = 1024  # characters of a push service's URL
P256_POINT = 65  # bytes of an uncompressed P-256 public key (RFC 8291)
LOOPBACK = ("127.0.0.1", "::1", "localhost")
AUTH_SECRET = 16  # bytes of a subscription's auth secret (RFC 8291)


class SubscriptionError(Refusal):
    """A `push_subscribe` whose subscription is not a Web Push one: bad_message."""

    def __init__(self, message: str) -> None:
        super().__init__("bad_message", message)


@dataclass(frozen=True)
class Notice:
    """One thing to tell one player: its id names the event it is about."""

    player: str
    kind: str
    game: str
    text: str
    seq: int = 0  # the game's version the event made (0: not about a move)

    @property
    def id(self) -> str:
        """The event's id: the same event is the same notice."""
        return f"{self.kind}:{self.game}:{self.seq}:{self.player}"

    @property
    def subject(self) -> str:
        """What the quiet interval is kept per: one kind of notice of one game."""
        return f"{self.kind}:{self.game}"

    def fields(self) -> dict[str, str]:
        """The notice as a stream entry's fields."""
        return {
            "p": self.player,
            "k": self.kind,
            "g": self.game,
            "t": self.text,
            "s": str(self.seq),
        }

    @classmethod
    def of(cls, fields: dict[bytes, bytes]) -> Notice:
        """A notice from a stream entry's fields."""
        got = {k.decode(): v.decode() for k, v in fields.items()}
        return cls(got["p"], got["k"], got["g"], got["t"], int(got["s"]))

    @property
    def challenge(self) -> bool:
        """Whether the notice is of a challenge (its `game` is the challenge's id)."""
        return self.kind == "challenge_received"

    def payload(self) -> dict[str, Any]:
        """What the page's service worker is handed: the kind, the game (a challenge's
        id as `challenge` instead: the page opens the lobby), a line of text."""
        if self.challenge:
            return {"kind": self.kind, "challenge": self.game, "text": self.text}
        return {"kind": self.kind, "game": self.game, "text": self.text}


def is_correspondence(game: Game) -> bool:
    """Whether the game is played days per move (its integer `days`)."""
    days = game.days
    return isinstance(days, int) and not isinstance(days, bool) and days > 0


def turn_notices(game: Game) -> list[Notice]:
    """The notices a correspondence game's new version makes: whose move it is, or its end."""
    if not is_correspondence(game):
        return []
    if game.finished:
        return [
            Notice(player, "game_over", game.id, "Your game is over.", game.version)
            for player in game.humans()
        ]
    seat = rules.to_act(game.state)
    if seat is None or game.bots[seat] is not None:
        return []
    player = game.players[seat]
    if player is None:
        return []
    return [Notice(player, "your_move", game.id, "It is your move.", game.version)]


def reminder(game: Game, before_ms: int) -> tuple[Notice, int] | None:
    """The "time running out" notice of the seat to act, and when it is due (ms)."""
    told = [n for n in turn_notices(game) if n.kind == "your_move"]
    if not told or game.deadline <= 0:
        return None
    note = Notice(
        told[0].player, "time_running_out", game.id, "Your time is running out.", game.version
    )
    return note, game.deadline - before_ms


def subscription_id(endpoint: str) -> str:
    """A subscription's id: its endpoint's hash (short, and the URL is not shown back)."""
    return hashlib.sha256(endpoint.encode()).hexdigest()[:16]


def _key_bytes(value: object, name: str) -> bytes:
    """A base64url key of a subscription, decoded."""
    if not isinstance(value, str) or len(value) > 200:
        raise SubscriptionError(f"keys.{name} must be a base64url string")
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        raise SubscriptionError(f"keys.{name} is not base64url") from None


def valid_subscription(sub: object) -> dict[str, Any]:
    """The browser's PushSubscription as JSON, checked: https endpoint, P-256 key, auth."""
    if not isinstance(sub, dict):
        raise SubscriptionError("subscription must be a map: endpoint and keys")
    endpoint, keys = sub.get("endpoint"), sub.get("keys")
    if not isinstance(endpoint, str) or len(endpoint) > MAX_ENDPOINT:
        raise SubscriptionError(f"endpoint must be a URL of at most {MAX_ENDPOINT} characters")
    url = urlsplit(endpoint)
    # Plain http only on loopback: a push service on this machine (the tests').
    if not url.hostname or not (url.scheme == "https" or url.hostname in LOOPBACK):
        raise SubscriptionError("endpoint must be an https URL")
    if not isinstance(keys, dict):
        raise SubscriptionError("keys must be a map: p256dh and auth")
    if len(_key_bytes(keys.get("p256dh"), "p256dh")) != P256_POINT:
        raise SubscriptionError("keys.p256dh must be an uncompressed P-256 public key")
    if len(_key_bytes(keys.get("auth"), "auth")) != AUTH_SECRET:
        raise SubscriptionError("keys.auth must be 16 bytes")
    return {"endpoint": endpoint, "keys": {"p256dh": keys["p256dh"], "auth": keys["auth"]}}
