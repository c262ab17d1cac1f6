"""What every socket of an instance shares: settings, storage, games, hub, lobby, metrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from moose_server.games import Games
from moose_server.hub import Hub
from moose_server.lobby import Lobby
from moose_server.matchmaking import Matchmaker
from moose_server.metrics import Metrics
from moose_server.settings import Settings
from moose_server.store import Store
from moose_server.tokens import Tokens

if TYPE_CHECKING:
    from moose_server.ws import Connection

__all__ = ["Services"]


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
    connections: set[Connection] = field(default_factory=set)
    draining: bool = False
