"""Moose House: the rules engine, game records, bots and the client library."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moose.rules import IllegalMove, InvalidGame, State

if TYPE_CHECKING:
    from moose.client import (
        Client,
        ConnectError,
        ConnectionLost,
        GameResult,
        MooseError,
        ServerError,
        connect,
        play_bot,
    )

__all__ = [
    "Client",
    "ConnectError",
    "ConnectionLost",
    "GameResult",
    "IllegalMove",
    "InvalidGame",
    "MooseError",
    "ServerError",
    "State",
    "connect",
    "play_bot",
]
__version__ = "0.1.0"

# The client pulls in aiohttp, which `moose replay` and `moose simulate` do not
# need: its names are imported on first use. A name of `__all__` that lands here
# is one of them, as the others are bound above.


def __getattr__(name: str) -> Any:
    if name in __all__:
        from moose import client

        return getattr(client, name)
    raise AttributeError(f"module 'moose' has no attribute {name!r}")
