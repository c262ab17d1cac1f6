"""Message class -> handler, and what runs as a socket comes back, is told or closes.

Each feature registers its handlers (`add`, keyed by the client message's
Struct in moose.messages) and its hooks while app.py builds it; a socket
(net/ws.py) knows the router only. A handler takes the socket's session and the
typed message and returns the answer (without `id`; the socket adds it), or
raises a `Refusal` with a PROTOCOL.md code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from moose.messages import ClientMessage, Reply, Request
from moose_server.net.session import Message, Session
from moose_server.storage.failures import UNAVAILABLE

__all__ = ["Handler", "Hook", "Router", "Told"]

# A handler declares the Struct it takes (`msg: Move`); the router pairs them by class.
Handler = Callable[[Any, Any], Awaitable[Message | Reply | None]]
Hook = Callable[[Session], Awaitable[None]]
Told = Callable[[Session, Message], Awaitable[None]]


class Router:
    """The handlers of every message type, and the hooks of a socket's life."""

    def __init__(self) -> None:
        self.handlers: dict[type[Request], Handler] = {}
        self._back: list[Hook] = []
        self._told: list[Told] = []
        self._dropped: list[Callable[[Session], None]] = []
        self._closed: list[Hook] = []

    def add(self, handlers: Mapping[type[Request], Handler]) -> None:
        """Handle these message classes; a class has one handler only."""
        taken = handlers.keys() & self.handlers.keys()
        if taken:
            raise ValueError(f"messages handled twice: {sorted(c.__name__ for c in taken)}")
        self.handlers.update(handlers)

    def on_back(self, hook: Hook) -> None:
        """Run `hook` before a message of a socket whose seat somewhere is away."""
        self._back.append(hook)

    def on_told(self, hook: Told) -> None:
        """Run `hook` after a player message was sent to one of its sockets."""
        self._told.append(hook)

    def on_dropped(self, hook: Callable[[Session], None]) -> None:
        """Run `hook` (it never waits) as a socket closes, before anything else."""
        self._dropped.append(hook)

    def on_closed(self, hook: Hook) -> None:
        """Run `hook` once a socket has closed; storage trouble in one stops no other."""
        self._closed.append(hook)

    async def handle(self, conn: Session, msg: ClientMessage) -> Message | Reply | None:
        """Run the handler of a typed message."""
        return await self.handlers[type(msg)](conn, msg)

    async def back(self, conn: Session) -> None:
        """The socket sent something while a seat of its was away."""
        for hook in self._back:
            await hook(conn)

    async def told(self, conn: Session, message: Message) -> None:
        """A player message went to the socket."""
        for hook in self._told:
            await hook(conn, message)

    def dropped(self, conn: Session) -> None:
        """The socket is closing: it follows nothing more."""
        for hook in self._dropped:
            hook(conn)

    async def closed(self, conn: Session) -> None:
        """The socket closed: what it held is given back."""
        for hook in self._closed:
            with contextlib.suppress(*UNAVAILABLE):
                await hook(conn)
