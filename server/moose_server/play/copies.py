"""The games this instance wrote last (`Copies`): a player's move on one is checked
against it and committed at once, without reading the game first (games.py).

A step another instance committed and published (lua/commit.lua) brings the game
data it wrote: that is kept too, packed, and unpacked only when a move here
needs it, as a read right after that commit would have found it; its moves not
even then (`Game.from_packed`): the move's commit adds its own to them."""

from __future__ import annotations

import asyncio

from moose import rules
from moose_server.play.game import Game, Move
from moose_server.settings import Settings
from moose_server.storage import formats

__all__ = ["COPIED_GAMES", "Copies"]

COPIED_GAMES = 2048  # games this instance keeps as it last wrote them, at least...
SOCKETS_PER_GAME = 2  # ...or one per this many sockets it may serve (settings.max_sockets)

Heard = tuple[int, int, bytes, rules.State | None, list[Move] | None]


class Copies:
    """The games this instance wrote last, as it wrote them (bounded, least recently
    written dropped first): `Games` plays on them, the hub's wake-ups age them."""

    def __init__(self, settings: Settings) -> None:
        self._games: dict[str, Game] = {}  # game id -> as last written here (LRU order)
        # game id -> (version, deadline, packed data, its state parsed, its legal moves)
        # as another instance last wrote it (the last two None where not made here)
        self._heard: dict[str, Heard] = {}
        self._committing: dict[str, int] = {}  # game -> commits of ours under way
        self._settled: dict[str, asyncio.Event] = {}  # set once none is, if awaited
        # Each game kept is ~12 KB (25 moves in); one that is not costs its next
        # move a read. 2,048 were too few for a lobby of 20,000 (5,000 games).
        self.size = max(COPIED_GAMES, settings.max_sockets // SOCKETS_PER_GAME)

    def get(self, game_id: str) -> Game | None:
        """Our copy of the game, if we keep one. A heard one of a format this release
        does not read is none: the move reads the game, which refuses it, saying why
        (storage/formats.py), and writes nothing over it."""
        found = self._games.get(game_id)
        if found is None and game_id in self._heard:
            version, deadline, data, parsed, legal = self._heard.pop(game_id)
            try:  # its moves stay packed: a move here adds its own (`Game.packed`)
                found = Game.from_packed(game_id, version, deadline, data, parsed, legal)
            except formats.UnknownFormat:
                return None
            if found.finished:
                return None
            self._games[game_id] = found
        return found

    def stepped(
        self,
        game: str,
        version: int,
        deadline: int,
        data: bytes,
        parsed: rules.State | None = None,
        legal: list[Move] | None = None,
    ) -> None:
        """Another instance committed the game to `version`, writing `data`: kept
        packed, as a read right after that commit would find it, until a move
        here needs it (then it saves that move its read). `parsed`: the state in
        `data` as the hub made it for the local sockets, `legal` its legal moves
        (the seat to act's frame had them): not made again."""
        known = self._games.get(game)
        if known is not None and known.version >= version:
            return
        self._games.pop(game, None)
        self._heard.pop(game, None)
        self._heard[game] = (version, deadline, data, parsed, legal)
        if len(self._heard) > self.size:
            del self._heard[next(iter(self._heard))]

    def keep(self, game: Game) -> None:
        """Keep the game as just written here (a finished game is dropped)."""
        self._heard.pop(game.id, None)
        known = self._games.pop(game.id, None)
        if game.finished:
            return
        if known is not None and known.version > game.version:
            game = known  # a later commit of ours got here first
        self._games[game.id] = game
        if len(self._games) > self.size:
            del self._games[next(iter(self._games))]

    def committing(self, game: str) -> _Committing:
        """While a commit of `game` by this instance is under way (until its listeners
        have been told): `settled` waits for it. A context manager."""
        return _Committing(self, game)

    def _begun(self, game: str) -> None:
        self._committing[game] = self._committing.get(game, 0) + 1

    def _ended(self, game: str) -> None:
        left = self._committing.pop(game) - 1
        if left:
            self._committing[game] = left
        elif (waiting := self._settled.pop(game, None)) is not None:
            waiting.set()

    async def settled(self, game: str) -> None:
        """Once no commit of `game` by this instance is under way.

        Our own commit's wake-up comes on the subscription while its reply is still
        on its way to the mover (the Redis batch's task hands it over, several loop
        turns later); the hub waits here, and the reply delivers the events.
        """
        if game in self._committing:
            await self._settled.setdefault(game, asyncio.Event()).wait()

    def woke(self, game: str, seq: int) -> None:
        """A wake-up: the game is at `seq` now; forget our copy if it is older."""
        known = self._games.get(game)
        if known is not None and known.version < seq:
            del self._games[game]
        heard = self._heard.get(game)
        if heard is not None and heard[0] < seq:
            del self._heard[game]


class _Committing:
    """`Copies.committing(game)`: a class rather than a generator made a context
    manager (contextlib): ~0.6 us a commit against ~1.2 us."""

    __slots__ = ("copies", "game")

    def __init__(self, copies: Copies, game: str) -> None:
        self.copies = copies
        self.game = game

    def __enter__(self) -> None:
        self.copies._begun(self.game)

    def __exit__(self, *exc: object) -> None:
        self.copies._ended(self.game)
