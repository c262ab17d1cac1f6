"""Moderators' notices, applied to this instance's sockets and games.

`moose admin` writes each action to Redis (moderation/store.py) and then
publishes a notice on `MODERATION_CHANNEL`; every instance's subscription
(net/subscription.py) hears it and hands it to `Notices.heard`, which never
waits:

- `ban`: the ban joins this instance's copy (moderation/bans.py), and every
  socket it holds here gets the error `banned` and is closed with `4003`; the
  banned account's unfinished games end at once, and so do those of every
  player with a socket here from a banned address (games.forfeit_all: a rated
  game is lost by forfeit, any other seat goes to the server's bot;
  version-checked commits, so the first instance to try applies each and the
  others find it done);
- `unban`: the ban leaves the copy;
- `end_session`: every socket of the player here is closed with `4004` (the
  player may come back, unless banned);
- `takeover`: the player's seat is handed to the server's bot (games.take_over:
  a version-checked commit, so the first instance to try applies it and the
  others find it done).

Pub/sub loses what is published while it reconnects: `run` reads the bans
again every `ban_refresh` seconds and enforces any it did not hold, so a ban
holds within that time even then. Each instance logs what it applies.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Iterable
from typing import Any, Protocol

from moose_server.moderation.bans import CLOSE_BANNED, Ban, Bans
from moose_server.play import GameError, Games
from moose_server.storage.codec import unpack
from moose_server.storage.failures import StorageError
from moose_server.tasks import cancel_and_wait

__all__ = ["CLOSE_BANNED", "CLOSE_ENDED", "Member", "Notices"]

log = logging.getLogger(__name__)

CLOSE_ENDED = 4004  # a moderator ended the session: the player may connect again


class Member(Protocol):
    """What a notice needs of an open socket: who it is, and a way to refuse it."""

    player: str | None
    address: str

    def send_error(
        self,
        code: str,
        message: str,
        msg_id: Any = None,
        game: str | None = None,
        fields: dict[str, Any] | None = None,
    ) -> None:
        """Send an error with a stable code."""

    def close(self, code: int, message: str = "") -> None:
        """Close after what was sent before has been written."""


class Notices:
    """Applies moderators' notices here; reads the bans again now and then (module docstring)."""

    def __init__(self, bans: Bans, games: Games, sockets: Iterable[Member], refresh: float) -> None:
        self.bans = bans
        self.games = games  # this instance's games
        self.sockets = sockets  # this instance's open sockets (the live set, Doors.open)
        self.refresh = refresh
        self._tasks: set[asyncio.Task[None]] = set()

    def heard(self, data: bytes) -> None:
        """One notice (msgpack) from the subscription (net/subscription.py); never waits."""
        notice: dict[str, Any] = unpack(data)
        action = notice.get("action")
        by = notice.get("by", "?")
        if action == "ban":
            ban = Ban.of(notice["ban"])
            self.bans.add(ban)
            closed = self.enforce(ban)
            log.info(
                "moderation: ban %s by %s (%s): %d sockets closed here",
                ban.field,
                by,
                ban.reason,
                closed,
                extra={"event": "ban", "player": _player(ban)},
            )
        elif action == "unban":
            self.bans.remove(notice["field"])
            log.info("moderation: unban %s by %s", notice["field"], by, extra={"event": "unban"})
        elif action == "end_session":
            closed = self._end(notice["player"], notice.get("reason", ""))
            log.info(
                "moderation: end session of %s by %s: %d sockets closed here",
                notice["player"],
                by,
                closed,
                extra={"event": "end_session", "player": notice["player"]},
            )
        elif action == "takeover":
            self._spawn(self._take_over(notice["game"], notice["player"], by))
        else:
            log.warning("moderation: unknown notice %r", notice)

    def enforce(self, ban: Ban) -> int:
        """Refuse and close every socket here that `ban` holds; how many."""
        now = self.bans.now()
        if not ban.active(now):
            return 0
        refusal = ban.refusal(now)
        closed = 0
        players = {ban.subject} if ban.kind == "account" else set()  # whose games end
        for sock in list(self.sockets):
            held = (
                sock.player == ban.subject
                if ban.kind == "account"
                else (self.bans.of_address(sock.address) is ban)
            )
            if held:
                sock.send_error(refusal.code, refusal.message, fields=refusal.fields)
                sock.close(CLOSE_BANNED, refusal.message)
                closed += 1
                if sock.player is not None:
                    players.add(sock.player)
        for player in sorted(players):
            self._spawn(self._forfeit(player))
        return closed

    async def _forfeit(self, player: str) -> None:
        ended = await self.games.forfeit_all(player)
        if ended:
            log.info(
                "moderation: %d unfinished games of banned %s ended here",
                ended,
                player,
                extra={"event": "forfeit", "player": player},
            )

    def _end(self, player: str, reason: str) -> int:
        ended = [s for s in self.sockets if s.player == player]
        for sock in ended:
            sock.close(CLOSE_ENDED, reason or "session ended by a moderator")
        return len(ended)

    async def _take_over(self, game: str, player: str, by: str) -> None:
        try:
            done = await self.games.take_over(game, player)
        except GameError as exc:
            done, why = False, exc.message
        else:
            why = "applied here" if done else "nothing to take (already away, or over)"
        log.info(
            "moderation: takeover of %s in %s by %s: %s",
            player,
            game,
            by,
            why,
            extra={"event": "takeover", "player": player, "game": game},
        )

    async def run(self) -> None:
        """Read the bans again every `refresh` s; enforce those this copy missed."""
        try:
            while True:
                await asyncio.sleep(self.refresh)
                try:
                    for ban in await self.bans.load():
                        closed = self.enforce(ban)
                        if closed:
                            log.info(
                                "moderation: ban %s found in Redis: %d sockets closed here",
                                ban.field,
                                closed,
                                extra={"event": "ban"},
                            )
                except (StorageError, OSError) as exc:
                    log.warning("moderation: cannot read the bans: %s", exc)
        finally:
            await cancel_and_wait(list(self._tasks))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(self._logged(work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _logged(work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except (StorageError, OSError) as exc:
            log.warning("moderation: cannot apply a notice: %s", exc)


def _player(ban: Ban) -> str | None:
    return ban.subject if ban.kind == "account" else None
