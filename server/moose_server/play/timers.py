"""The deadline loop: every instance polls, claims due deadlines, plays the timeouts.

Claiming (lua/claim.lua) pushes an entry a lease into the future, so two
instances never work on it at once and one that dies after claiming only
delays it until the lease ends. The timeout itself is a commit checked against
the game's version: it fires once, whoever claims it.

A deadline that fell due while nobody could claim it (Redis unreachable or
restarted, no instance running) is not played at once when the service is
back: every deadline then moves to at least `outage_grace` seconds later, so
the player whose time ran out during the outage still gets a turn. Only an
instance that has just started or whose last claim failed judges a gap so: a
gap left by an instance whose claims went through, only late (its loop busy),
moved deadlines by mistake (gaps of 1-4.4 s in a lobby of 10,000 players).
Redis coming back without its last writes is an outage too, however short the
gap: the bucket's poll stamp is then older than the one this instance's last
claim wrote (claim.lua), and games may have gone back to turns whose players
are not told yet (the hub then defers each one it tells about).

The timeouts a poll claims are played side by side (at most `AT_ONCE` at a
time), in a task, and the next poll does not wait for them: played one after
another and waited for, a poll's timeouts on a busy instance could hold the
next poll past the outage threshold (gaps of up to 22 s were logged at 20,000
players; BENCHMARKS.md).

A timeout due for a person's seat (not a bot's, not an away seat) whose player
is connected only through instances that died (`Stranded`: their heartbeat is
gone or stale) is not played: the deadline moves `outage_grace` from now
instead, while the player reconnects to another instance. Once a turn: the game
keeps the version it spared (storage/lua/spare.lua), so the next deadline of
the same turn is played, whoever claims it. A player with no live word at all
(they closed the page) or one on a healthy instance times out as before. A turn
spared is told to every socket of the game, on every instance: a `deadline`
message with the new deadline (deadlines.py); no event is written. So is each
deadline an outage moved (reason "outage"), by the instance whose claim moved
it, a second after the claim (`_announce`, in a task beside the timeouts), once
every instance's pub/sub is back.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from moose import rules
from moose_server.play.deadlines import address, deadline_message
from moose_server.play.game import Game, GameError
from moose_server.play.games import Games
from moose_server.settings import Settings
from moose_server.storage.failures import StorageError
from moose_server.storage.formats import UnknownFormat
from moose_server.storage.keys import undealt_game
from moose_server.storage.store import Store
from moose_server.tasks import cancel_and_wait, cancelling

__all__ = ["Timers"]

log = logging.getLogger(__name__)

OUTAGE_AFTER = 1.0  # seconds without a deadline claim that make an outage...
OUTAGE_POLLS = 4  # ...or this many poll intervals, if that is longer
NEVER = 1e9  # seconds: an outage threshold no gap reaches
AT_ONCE = 32  # timeouts of one poll played at the same time, at most
TOLD_AT_ONCE = 256  # games an outage moved whose sockets are told in one batch, at most
# Seconds the games an outage moved wait to be told: every instance's pub/sub comes
# back within 0.2 s of Redis (net/subscription.py), and a message published before
# an instance subscribed again never reaches its sockets.
TELL_AFTER = 1.0


class Undealt(Protocol):
    """What the deadline loop needs of deals that wait for seeds (deals/deals.py)."""

    async def due(self, game_id: str) -> bool:
        """The deal's seed time is over: deal it (once, whoever calls)."""


class Stranded(Protocol):
    """What the deadline loop needs of presence (social/presence.py)."""

    async def stranded(self, player: str) -> bool:
        """The player is connected only through instances that died: reconnecting."""


class Timers:
    """Polls the deadline sets of every bucket and applies what is due."""

    def __init__(
        self,
        store: Store,
        games: Games,
        settings: Settings,
        undealt: Undealt | None = None,
        stranded: Stranded | None = None,
    ) -> None:
        self.store = store
        self.games = games
        self.settings = settings
        self.undealt = undealt  # fair deals waiting for seeds: their deadlines too
        self.stranded = stranded  # players whose instance died: their turn is spared once
        self.running = True
        self._at_once = asyncio.Semaphore(AT_ONCE)
        self._judge = True  # whether the next claim may take a gap for an outage

    async def tick(self) -> int:
        """Claim and apply every due deadline once; return how many were due."""
        due = await self._claim()
        await asyncio.gather(self._play(due), self._announce(self.store.take_moved(), wait=0))
        return len(due)

    async def _claim(self) -> list[tuple[str, int]]:
        s = self.settings
        # A gap of several polls of every instance: nobody could claim (see claim.lua).
        # Judged only by an instance just started or whose last claim failed: one
        # whose claims go through was not cut off, only late (its loop was busy),
        # and the players could not have moved any sooner.
        outage = max(OUTAGE_AFTER, OUTAGE_POLLS * s.poll_interval) if self._judge else NEVER
        self._judge = True  # unless this claim goes through
        due = await self.store.claim(
            int(s.lease * 1000), int(outage * 1000), int(s.outage_grace * 1000)
        )
        # In a cluster a claim can fail in some buckets only (store.py): judge next time.
        self._judge = self.store.claim_failed
        return due

    async def _play(self, due: list[tuple[str, int]]) -> None:
        """Play claimed timeouts side by side, at most AT_ONCE of this instance at a time."""

        async def bounded(game: str, now: int) -> None:
            async with self._at_once:
                await self._timeout(game, now)

        await asyncio.gather(*(bounded(game, now) for game, now in due))

    async def _timeout(self, game: str, now: int) -> None:
        """Play one claimed timeout; a failure is logged (the lease brings it back)."""
        try:
            waiting = undealt_game(game)  # "deal:<id>": a fair deal's seed time is over
            if waiting is None:
                await self.games.timeout(game, now, self._spare)
            elif self.undealt is not None:
                await self.undealt.due(waiting)
        except (GameError, StorageError, OSError) as exc:
            if cancelling():
                raise asyncio.CancelledError from exc
            # The claim's lease brings it back at a later poll.
            log.warning("timeout of %s failed: %s", game, exc)
        except Exception:
            log.exception("timeout of %s failed", game)

    async def _spare(self, game: Game) -> bool:
        """Move the deadline a grace on, once a turn, when the seat to act is a person
        connected only through instances that died; True: moved (nothing to play)."""
        if self.stranded is None or game.auto_kind() is not None:
            return False  # a bot's or an away seat, a forced pass, or nobody to act
        seat = rules.to_act(game.state)
        player = game.players[seat] if seat is not None else None
        if seat is None or player is None or not await self.stranded.stranded(player):
            return False
        grace_ms = int(self.settings.outage_grace * 1000)
        moved = await self.store.spare(game.id, game.version, game.deadline, grace_ms)
        if not moved:
            return False
        log.info(
            "deadline of %s moved %.1f s on: %s is connected only through instances that died",
            game.id,
            self.settings.outage_grace,
            player,
            extra={"event": "spared", "game": game.id, "player": player},
        )
        await self._tell(game, seat, moved, moved - grace_ms)
        return True

    async def _announce(self, moved: list[tuple[str, int]], wait: float = TELL_AFTER) -> None:
        """Every socket of each game whose deadline an outage moved, on every instance,
        is told its deadline (deadlines.py, reason "outage"), `wait` seconds later: the
        game as read then, in batches of TOLD_AT_ONCE, if its deadline is still one an
        outage set (the one moved, or one held later: its hash's 'held', lua/defer.lua).
        One a move set since is told by its event. A failure is logged only: `sync`
        and `state` tell the deadline too."""
        moved = [(game, d) for game, d in moved if undealt_game(game) is None]
        if moved and wait > 0:
            await asyncio.sleep(wait)
        for start in range(0, len(moved), TOLD_AT_ONCE):
            batch = moved[start : start + TOLD_AT_ONCE]
            try:
                now = await self.store.now_ms()
                loaded = await asyncio.gather(*(self.store.load(game) for game, _ in batch))
                held = await self.store.held([game for game, _ in batch])
                messages = []
                for (game_id, deadline), got, hold in zip(batch, loaded, held, strict=True):
                    if got.data is None or not got.deadline or got.deadline not in (deadline, hold):
                        continue  # gone, or a move (or the game's end) set its deadline
                    game = Game.from_data(game_id, got.version, got.deadline, got.data)
                    seat = rules.to_act(game.state)
                    if game.finished or seat is None:
                        continue
                    told = deadline_message(game_id, got.version, seat, got.deadline, now, "outage")
                    messages.append((address(game_id), told))
                if messages:
                    await self.store.publish_players(messages)
            except (StorageError, OSError, GameError, UnknownFormat) as exc:
                if cancelling():
                    raise asyncio.CancelledError from exc
                log.warning("cannot tell the sockets of games an outage moved: %s", exc)
            except Exception:
                log.exception("cannot tell the sockets of games an outage moved")

    async def _tell(self, game: Game, seat: int, deadline: int, now: int) -> None:
        """Every socket of the game, on every instance: its deadline moved (deadlines.py).
        A failure is logged only: the turn stays spared, and `sync` tells the deadline."""
        message = deadline_message(game.id, game.version, seat, deadline, now, "spared")
        try:
            await self.store.publish_player(address(game.id), message)
        except (StorageError, OSError) as exc:
            if cancelling():
                raise asyncio.CancelledError from exc
            log.warning("cannot tell the sockets of %s its deadline: %s", game.id, exc)

    def stop(self) -> None:
        """Claim no more deadlines (draining): `run` ends once what it claimed is played."""
        self.running = False

    async def run(self) -> None:
        """Poll until stopped or cancelled; the timeouts claimed are played in tasks.

        The next poll does not wait for them: a poll that waited for its
        timeouts came late on a busy instance, and a gap in the polls over
        OUTAGE_AFTER is taken for an outage (every deadline moved a grace later).
        """
        playing: set[asyncio.Task[None]] = set()
        try:
            while self.running:
                try:
                    due = await self._claim()
                except (StorageError, OSError) as exc:
                    if cancelling():
                        raise asyncio.CancelledError from exc
                    log.warning("deadline poll cannot reach Redis: %s", exc)
                else:
                    moved = self.store.take_moved()
                    work = [self._play(due)] if due else []
                    if moved:
                        work.append(self._announce(moved))
                    for job in work:
                        task = asyncio.create_task(job)
                        playing.add(task)
                        task.add_done_callback(playing.discard)
                await asyncio.sleep(self.settings.poll_interval)
            await asyncio.gather(*playing)
        finally:
            await cancel_and_wait(list(playing))
