"""What every socket of an instance shares: settings, storage, games, hub, lobby, handlers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from moose_server.accounts.leaderboards import Boards
from moose_server.accounts.limits import Sockets
from moose_server.accounts.tokens import Tokens
from moose_server.lobby.dealer import Lobby
from moose_server.lobby.live_games import LiveGames
from moose_server.lobby.matchmaking import Matchmaker
from moose_server.net.handlers import Handlers
from moose_server.net.hub import Hub
from moose_server.ops.metrics import Metrics
from moose_server.play.games import Games
from moose_server.play.results import Results
from moose_server.settings import Settings
from moose_server.storage.store import Store

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
