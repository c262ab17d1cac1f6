"""What every socket of an instance shares: settings, storage, games, hub, lobby, handlers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from moose_server.boards import Boards
from moose_server.games import Games
from moose_server.handlers import Handlers
from moose_server.hub import Hub
from moose_server.limits import Sockets
from moose_server.live import LiveGames
from moose_server.lobby import Lobby
from moose_server.matchmaking import Matchmaker
from moose_server.metrics import Metrics
from moose_server.results import Results
from moose_server.settings import Settings
from moose_server.store import Store
from moose_server.tokens import Tokens

__all__ = ["Services", "Socket"]


class Socket(Protocol):
    """What the instance needs of an open socket: a way to ask it to close, its heartbeat."""

    def close(self, code: int, message: str = "") -> None:
        """Close after what was sent before has been written."""

    def beat(self, now: float, heartbeat: float) -> None:
        """Ping the socket if it has been silent `heartbeat` s; cut it if a ping went unanswered."""


@dataclass
class Services:
    """The parts of one running instance, built by `app.create_app`."""

    settings: Settings
    store: Store
    games: Games
    hub: Hub
    tokens: Tokens
    matchmaker: Matchmaker
    lobby: Lobby
    metrics: Metrics
    handlers: Handlers
    sockets: Sockets
    results: Results
    boards: Boards
    live: LiveGames
    connections: set[Socket] = field(default_factory=set)
    draining: bool = False
