"""The players queued through this instance, who must not lose their match to an outage.

A `match` published while this instance's pub/sub was down is lost, and Redis
may come back without the queue tickets of the players queued here. The hub
tells `Waiting` of every player message (a `match` ends a player's wait) and
of a subscription that came back: then each local player who has an
unfinished game (dealt, or whose fair deal waits for seeds) their sockets do
not follow gets its `match` again, and each
player queued here with no game and no ticket is queued again.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Collection, Mapping
from typing import Any

from moose_server.deals import DealError, SeedStore, waiting_match
from moose_server.matchmaking.matchmaker import MatchError, Matchmaker
from moose_server.net.session import Peer
from moose_server.play import Game, match_message
from moose_server.storage.store import Store

__all__ = ["Waiting"]

log = logging.getLogger(__name__)

Players = Mapping[str, Collection[Peer]]  # the hub's sockets by player


class Waiting:
    """Players queued through this instance with no `match` yet; what an outage lost."""

    def __init__(self, store: Store, matchmaker: Matchmaker, seeds: SeedStore) -> None:
        self.store = store
        self.matchmaker = matchmaker
        self.seeds = seeds  # a game whose fair deal waits for seeds is told too
        # player -> (name, min, max, skill, fair): queued through this instance, no
        # `match` yet. Should Redis come back without the ticket, `requeue` queues them
        # again, as they asked (a fair seat stays one).
        self.queued: dict[str, tuple[str, int, int, int, bool]] = {}

    def add(
        self, player: str, name: str, low: int, high: int, skill: int, fair: bool = False
    ) -> None:
        """The player has just queued through this instance (`fair`: asked for a fair deal)."""
        self.queued[player] = (name, low, high, skill, fair)

    def change(self, player: str, low: int, high: int) -> None:
        """The player queued here now waits for a table of low..high seats."""
        if player in self.queued:
            name, _, _, skill, fair = self.queued[player]
            self.queued[player] = (name, low, high, skill, fair)

    def discard(self, player: str) -> None:
        """The player left the queue."""
        self.queued.pop(player, None)

    def heard(self, player: str, message: dict[str, Any]) -> None:
        """A message on the player channel: a `match` ends their wait in the queue."""
        if message.get("type") == "match":
            self.queued.pop(player, None)

    async def resubscribed(self, players: Players) -> None:
        """Pub/sub is back (Redis may have restarted): matches it dropped, tickets it lost."""
        await self.rematch(players)
        await self.requeue(players)

    async def rematch(self, players: Players) -> None:
        """Send `match` again for each unfinished game a local socket of its player
        does not follow: a `match` published while our pub/sub was down is lost.

        Safe to run twice: a socket that follows the game is left alone.
        """
        for player in list(players):
            for game_id in await self.store.player_games(player):
                peers = [p for p in players.get(player, ()) if game_id not in p.subs]
                if not peers:
                    continue
                match = await self._match(game_id, player)
                if match is None:
                    continue
                self.queued.pop(player, None)
                log.warning(
                    "match %s sent again to %s: pub/sub may have lost it",
                    game_id,
                    player,
                    extra={"event": "rematch", "game": game_id, "player": player},
                )
                for peer in peers:
                    await peer.on_player_message(match)

    async def _match(self, game_id: str, player: str) -> dict[str, Any] | None:
        """The player's `match` for an unfinished game of theirs (dealt, or whose fair
        deal waits for seeds); None when there is none to tell."""
        loaded = await self.store.load(game_id)
        if loaded.data is None:  # waiting for seeds; or lost, and its table dealt again
            with contextlib.suppress(DealError):
                return await waiting_match(self.seeds, game_id, player)
            return None
        game = Game.from_data(game_id, loaded.version, loaded.deadline, loaded.data)
        seat = game.seat_of(player)
        return None if seat is None or game.finished else match_message(game, seat)

    async def requeue(self, players: Players) -> None:
        """Redis is back: queue again the players queued here whose ticket it lost.

        A player with an unfinished game was seated: `rematch` told them of it.
        """
        for player, (name, low, high, skill, fair) in list(self.queued.items()):
            if not players.get(player):
                self.queued.pop(player, None)  # gone: the socket's close left the queue
                continue
            if await self.store.player_games(player):
                continue
            try:
                await self.matchmaker.enqueue(player, name, low, high, skill, fair)
            except MatchError:
                continue  # already_queued: Redis kept the ticket
            log.warning(
                "queued %s again: Redis had lost their ticket",
                player,
                extra={"event": "requeue", "player": player},
            )
