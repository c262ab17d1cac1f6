"""The base of the errors a request is refused with: a PROTOCOL.md code and a message."""

from __future__ import annotations

from typing import Any

__all__ = ["Refusal"]


class Refusal(Exception):
    """A request refused; `code` is a PROTOCOL.md error code, `message` for people.

    `close`: the WebSocket close code the socket is closed with after the error
    (a ban's), or None: the socket stays open."""

    close: int | None = None

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.fields: dict[str, Any] = {}  # more fields of the error message (`retry_after`)
