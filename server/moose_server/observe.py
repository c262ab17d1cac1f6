"""How an instance watches itself: its parts report commits, fired deadlines and
fan-outs here, and this module turns them into metrics (metrics.py).

`observe(services)` wires it once the parts are built; the parts only know a
callback each (`Games.on_commit`, `Games.on_timeout`, `Hub.on_fanout`).
"""

from __future__ import annotations

from collections.abc import Sequence

from moose_server.hub import Hub
from moose_server.services import Services
from moose_server.store import Entry

__all__ = ["observe"]


def observe(services: Services) -> None:
    """Report the instance's commits, deadlines and fan-outs to its metrics."""
    games, hub, metrics = services.games, services.hub, services.metrics
    remember = games.on_commit

    def on_commit(game: str, entries: list[Entry]) -> None:
        metrics.committed(game, entries, _awaited(hub, game, entries))
        if remember is not None:
            remember(game, entries)

    games.on_commit = on_commit
    games.on_timeout = metrics.fired
    hub.on_fanout = metrics.fanned_out
    metrics.bind(services)


def _awaited(hub: Hub, game: str, entries: Sequence[Entry]) -> bool:
    """Whether a local socket still waits for these events (the hub may have been first)."""
    if not entries:
        return False
    last = entries[-1].seq
    for peer in hub.games.get(game, ()):
        sub = peer.subs.get(game)
        if sub is not None and sub.seen < last:
            return True
    return False
