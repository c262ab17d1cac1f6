"""What a socket is to the features: its place in each game it follows, and who it is.

`Peer` is what the hub (play/hub.py) needs of a socket to fan a game's events out
to it; `Session` adds who it is, for the message handlers. net/ws.py's
`Connection` is both; the features see it only through these.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from moose.messages import Reply

__all__ = ["Message", "Peer", "Session", "Sub", "player_of"]

Message = dict[str, Any]


@dataclass
class Sub:
    """A socket's place in one game: its seat (None: spectator) and last seq sent."""

    seat: int | None
    seen: int
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    time: int = 0  # Redis time of the event at `seen` (0: not known)
    # A `state` is being read for it: `seen` is about to change (go back, maybe), so a
    # wake-up meanwhile must not be taken as seen.
    stating: bool = False


class Peer(Protocol):
    """What the hub needs of a socket."""

    player: str | None
    subs: dict[str, Sub]
    binary: bool  # msgpack frames (else JSON text)

    def send(self, message: Message | Reply) -> None:
        """Send a message to the socket (a map, or a Struct of moose.messages); never waits."""

    def send_frame(self, payload: bytes) -> None:
        """Send a message already packed (binary sockets); never waits."""

    def note_away(self, game: str) -> None:
        """The socket's own seat in `game` has just been marked away."""

    async def on_player_message(self, message: Message) -> None:
        """A message for the socket's player arrived on the player channel."""


class Session(Peer, Protocol):
    """What a handler needs of a socket: the hub's view of it, plus who it is."""

    name: str
    address: str  # the client's address (addresses.py), for the limits kept per client
    bot: bool
    generation: int | None  # an account's token generation; None: a guest
    away: set[str]  # games where the socket's seat is away: back on its next message


def player_of(conn: Peer) -> str:
    """The player of a socket that has said hello."""
    assert conn.player is not None
    return conn.player
