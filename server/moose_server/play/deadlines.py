"""A deadline moved without an event: the `deadline` message to every socket of the game.

A turn spared (timers.py: its player's instance died) moves the game's deadline
but writes no event, so the game's seq, `sync` and resuming stay as they were;
so does an outage (Redis unreachable or restarted: the deadline claim that finds
the gap moves every deadline due meanwhile, storage/lua/claim.lua).
The instance that moved it publishes one `deadline` message on the player
channel (keys.PLAYERS_CHANNEL, which every instance hears), addressed to the
game (`address`); each instance's hub sends it to every local socket of the
game, seat or spectator, whose last event is at the message's `seq`
(hub.Hub.heard_player). A socket that comes later learns the deadline from
`synced` or a `state`, as it always did.

The message holds what every seat may know: the game, its seq, the seat to act,
its new deadline, the server's clock and why; no view, hand or legal move.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ADDRESS", "REASONS", "address", "deadline_message"]

ADDRESS = "game:"  # the player channel's address of every socket of a game: "game:<id>"
# spared: the seat's player was on an instance that died; outage: Redis was unreachable
# (or came back without its last writes) and every deadline due meanwhile moved.
REASONS = frozenset({"spared", "outage"})


def address(game: str) -> str:
    """The address on the player channel of every socket of `game` (the hub knows it)."""
    return f"{ADDRESS}{game}"


def deadline_message(
    game: str, seq: int, to_act: int, deadline: int, server_time: int, reason: str
) -> dict[str, Any]:
    """The `deadline` message (PROTOCOL.md): the turn at `seq` of seat `to_act` now
    ends at `deadline` (ms, Redis' clock, as `server_time`)."""
    assert reason in REASONS, reason
    return {
        "type": "deadline",
        "game": game,
        "seq": seq,
        "to_act": to_act,
        "deadline": deadline,
        "server_time": server_time,
        "reason": reason,
    }
