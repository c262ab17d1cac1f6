"""The errors of the client library, one tree::

    MooseError
     ├── ConnectError      the first connection failed: nothing answers at that URL
     ├── ConnectionLost    the socket dropped for good, or the client was closed
     └── ServerError       the server refused a request: `code`, `message`

Import them from `moose.client` (or `moose`), which re-exports them.
"""

from __future__ import annotations

__all__ = ["ConnectError", "ConnectionLost", "MooseError", "ServerError"]


class MooseError(Exception):
    """Base of every error this library raises."""


class ConnectError(MooseError):
    """The first connection failed: no Moose House server answers at that URL."""


class ConnectionLost(MooseError):
    """The socket dropped and could not be restored, or the client was closed."""


class ServerError(MooseError):
    """The server answered a request with an error (`code` is stable, see PROTOCOL.md)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
