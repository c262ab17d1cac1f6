"""Told of every game version this instance writes: queues the notices it makes.

A "time running out" notice is kept until its time (store.schedule), and sent
then only if the game is still at that version (nobody moved since).
A notice is queued only for a player with no socket that follows the game (the
page, where the move shows anyway), on this instance or any other (`looking`:
the games each instance's sockets follow, in Redis; at a game's deal, a
player with a socket anywhere counts as looking, the `match` being on its way);
the stream then carries it to whichever instance sends it (sender.py). A challenge to a
correspondence game is told to its player when they are not connected
(`challenged`, from tables/invites.py); its notice names the challenge.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from moose_server.notify.rules import Notice, reminder, turn_notices
from moose_server.notify.store import NotifyStore
from moose_server.play import Game
from moose_server.storage.failures import UNAVAILABLE

__all__ = ["Looking", "Notifier"]

# looking(player, game, anywhere): social/presence.py's `looking`.
Looking = Callable[[str, str, bool], Awaitable[bool]]

log = logging.getLogger(__name__)


class Notifier:
    """Queues the notices of the games this instance writes (play's `TurnListener`)."""

    def __init__(
        self,
        store: NotifyStore,
        watching: Callable[[str, str], bool],
        queued: Callable[[], None],
        *,
        before: float,
        here: Callable[[str], bool] = lambda player: False,
        looking: Looking | None = None,
    ) -> None:
        self.store = store
        self.before_ms = int(before * 1000)
        self.watching = watching  # (player, game) -> a socket of the player here follows it
        # (player) -> the player has a socket here: at a game's deal their sockets follow
        # it only once its `match` reaches them, so one here is taken as looking.
        self.here = here
        # (player, game, anywhere) -> on any instance: a socket of the player follows the
        # game (anywhere: the player has a socket at all). Read only when here says no.
        self.looking = looking
        self.queued = queued  # the local sender: look at the stream now

    async def turned(self, game: Game) -> None:
        """A new version of `game` was written: queue its notices."""
        notices = [n for n in turn_notices(game) if not self._looking(n.player, game)]
        if notices and self.looking is not None:
            notices = [n for n in notices if not await self._elsewhere(n.player, game)]
        if notices:
            await self.queue(notices)
        later = reminder(game, self.before_ms)
        if later is not None:
            try:
                await self.store.schedule(*later)
            except UNAVAILABLE as exc:
                log.warning("a reminder not scheduled: %s", exc)

    async def challenged(self, player: str, challenge: str, text: str) -> None:
        """A player who is not connected was challenged to a correspondence game."""
        await self.queue([Notice(player, "challenge_received", challenge, text)])

    async def _elsewhere(self, player: str, game: Game) -> bool:
        """Whether the player has the game open on another instance (at its deal: a
        socket anywhere). Redis out of reach: not known, so not looking."""
        assert self.looking is not None
        try:
            return await self.looking(player, game.id, not game.moves)
        except UNAVAILABLE as exc:
            log.warning("where %s looks is not known: %s", player, exc)
            return False

    def _looking(self, player: str, game: Game) -> bool:
        """Whether the player has the game open here (or, at its deal, a socket here)."""
        return self.watching(player, game.id) or (not game.moves and self.here(player))

    async def queue(self, notices: list[Notice]) -> None:
        """Queue notices; Redis out of reach loses them (logged), never the move."""
        try:
            await self.store.queue(notices)
        except UNAVAILABLE as exc:
            log.warning("%d notices not queued: %s", len(notices), exc)
            return
        self.queued()
