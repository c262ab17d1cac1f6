"""The hub of one instance: one pub/sub subscription fanning out to local sockets.

Events this instance commits itself go to its local sockets at once
(`committed`, called by the commit), without waiting for their wake-up; they are
also kept until that wake-up arrives, for a socket that could not take them
then (it was reading a gap), so the wake-up needs no stream read.

Another instance's wake-up ("<game id> <seq>") makes the hub read the game's
stream once from the lowest seq its local sockets have seen, then give each
socket the events it has not had, each with that socket's own view. Pub/sub may
lose a wake-up while it reconnects: the hub then re-reads every game it serves,
and a socket that sees a gap reads the stream itself, so the stream is the
record.

Player messages (`match`, `table`) travel on one channel as [player, message].

Redis may come back without its last writes (a host crash with `appendfsync
everysec`, a failover to an asynchronous replica): a socket may then have seen
events that the stream no longer holds, or holds other events at those seqs.
Each socket's `Sub` keeps the Redis time of the last event it was sent; the
hub checks it wherever it reads the stream, checks every socket when pub/sub
reconnects, and treats a commit of ours at a seq a socket has seen as proof.
Such a socket gets the game as it is now (a `state` event, which a client
takes whatever its seq), or `gone` when the game no longer exists.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from redis.exceptions import RedisError

from moose_server.codec import unpack
from moose_server.connections import PubSubSource
from moose_server.frames import Prepared, state_message
from moose_server.games import Game
from moose_server.store import GAMES_CHANNEL, PLAYERS_CHANNEL, Entry, Store
from moose_server.stream import read_events
from moose_server.tasks import cancel_and_wait, cancelling

__all__ = ["Hub", "Peer", "Sub"]

log = logging.getLogger(__name__)

RECENT_GAMES = 1024  # games whose committed events wait for their wake-up, at most
RECENT_EVENTS = 16  # events kept per game, at most
CHECK_ATTEMPTS, CHECK_DELAY = 40, 0.25  # a socket's check after Redis came back: 10 s


@dataclass
class Sub:
    """A socket's place in one game: its seat (None: spectator) and last seq sent."""

    seat: int | None
    seen: int
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    time: int = 0  # Redis time of the event at `seen` (0: not known)


class Peer(Protocol):
    """What the hub needs of a socket."""

    player: str | None
    subs: dict[str, Sub]
    binary: bool  # msgpack frames (else JSON text)

    def send(self, message: dict[str, Any]) -> None:
        """Queue a message for the socket."""

    def send_frame(self, payload: bytes) -> None:
        """Queue a message already packed (binary sockets)."""

    def note_away(self, game: str) -> None:
        """The socket's own seat in `game` has just been marked away."""

    async def on_player_message(self, message: dict[str, Any]) -> None:
        """A message for the socket's player arrived on the player channel."""


class Hub:
    """Fans game events and player messages out to this instance's sockets."""

    def __init__(self, store: Store, pubsub_redis: PubSubSource) -> None:
        self.store = store
        self.pubsub_redis = pubsub_redis
        # Told when a wake-up (game, seq) has been handled: the events are on their way.
        self.on_fanout: Callable[[str, int], None] | None = None
        self.games: dict[str, set[Peer]] = {}
        self.players: dict[str, set[Peer]] = {}
        self.ready = asyncio.Event()
        self._recent: dict[str, list[Entry]] = {}  # game -> events committed here, in order
        # game dealt here -> (its events so far, their prepared views): see `fresh`
        self._fresh: dict[str, tuple[list[Entry], dict[int, Prepared]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()  # deliveries that read Redis
        self.on_wakeup: Callable[[str, int], None] | None = None  # told of every wake-up
        # Run when pub/sub is back after a lost connection: Redis may have restarted.
        self.on_resubscribe: Callable[[], Coroutine[Any, Any, None]] | None = None
        self.on_player: Callable[[str, dict[str, Any]], None] | None = None  # every message

    # -- local registrations ----------------------------------------------------

    def add_player(self, peer: Peer) -> None:
        """Deliver the player's channel messages to this socket."""
        assert peer.player is not None
        self.players.setdefault(peer.player, set()).add(peer)

    def join(self, peer: Peer, game: str, seat: int | None, seen: int) -> Sub:
        """Follow a game from seq `seen` on (kept if the socket follows it already)."""
        sub = peer.subs.get(game)
        if sub is None or sub.seat != seat:
            sub = peer.subs[game] = Sub(seat, seen)
        self.games.setdefault(game, set()).add(peer)
        return sub

    def leave(self, peer: Peer, game: str) -> None:
        """Stop following a game."""
        peer.subs.pop(game, None)
        peers = self.games.get(game)
        if peers is not None:
            peers.discard(peer)
            if not peers:
                del self.games[game]

    def drop(self, peer: Peer) -> None:
        """Forget a closed socket."""
        for game in list(peer.subs):
            self.leave(peer, game)
        if peer.player is not None:
            peers = self.players.get(peer.player)
            if peers is not None:
                peers.discard(peer)
                if not peers:
                    del self.players[peer.player]

    def player_peers(self, player: str) -> set[Peer]:
        """This instance's sockets of a player."""
        return self.players.get(player, set())

    # -- delivery ---------------------------------------------------------------

    async def deliver(
        self, peer: Peer, game: str, entries: list[Entry] | None = None,
        prepared: dict[int, Prepared] | None = None,
    ) -> None:  # fmt: skip
        """Send the socket every event it has not seen, in order, reading any gap.

        `prepared` (seq -> entry made ready) is shared by the sockets of one wake-up.
        Without `entries` it reads the stream from the event it saw last, and
        checks that the stream still holds that event (see the module docstring).
        """
        sub = peer.subs.get(game)
        if sub is None:
            return
        async with sub.lock:
            if entries is not None and _rewritten(sub, entries, whole=False):
                await self._resync(peer, game, sub)
                return
            todo = [e for e in entries or () if e.seq > sub.seen]
            if entries is not None and not todo:
                return  # it has them all
            if not todo or todo[0].seq != sub.seen + 1:
                todo = await read_events(self.store, game, max(0, sub.seen - 1))
                prepared = None  # other entry objects: not the ones prepared
                if _rewritten(sub, todo, whole=True):
                    await self._resync(peer, game, sub)
                    return
            self._send(peer, game, sub, todo, prepared)

    async def send_state(self, peer: Peer, game: str) -> None:
        """Send the socket the game as it is now: a `state` event, or `gone`."""
        sub = peer.subs.get(game)
        if sub is not None:
            async with sub.lock:
                await self._state(peer, game, sub)

    async def _state(self, peer: Peer, game_id: str, sub: Sub) -> None:
        """The `state` event (the lock is held); what the socket saw before is past."""
        loaded = await self.store.load(game_id)
        if loaded.data is None:
            self.leave(peer, game_id)
            peer.send({"type": "gone", "game": game_id})
            return
        game = Game.from_data(game_id, loaded.version, loaded.deadline, loaded.data)
        now = await self.store.now_ms()
        # From the state's own event on: a wake-up that came meanwhile was taken as
        # seen (our seq was higher then). Every read is done before anything is sent.
        entries = await read_events(self.store, game_id, max(0, game.version - 1))
        peer.send(state_message(game, sub.seat, now))
        at = entries[0] if entries and entries[0].seq == game.version else None
        sub.seen, sub.time = game.version, at.time if at is not None else 0
        if sub.seat is not None and game.away[sub.seat]:
            peer.note_away(game_id)
        self._send(peer, game_id, sub, entries)

    async def _resync(self, peer: Peer, game: str, sub: Sub) -> None:
        log.warning(
            "game %s went back: %s saw seq %d, which Redis no longer holds as it was sent; "
            "resyncing", game, peer.player, sub.seen,
            extra={"event": "rewound", "game": game, "player": peer.player, "seq": sub.seen},
        )  # fmt: skip
        await self._state(peer, game, sub)

    async def _resync_locked(self, peer: Peer, game: str) -> None:
        sub = peer.subs.get(game)
        if sub is not None:
            async with sub.lock:
                await self._resync(peer, game, sub)

    @staticmethod
    async def _until_done(work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run `work` again while Redis fails (it may be coming back from a restart).

        `work` must be safe to run twice: a check reads, a queue ticket is taken once.
        """
        for attempt in range(1, CHECK_ATTEMPTS + 1):
            try:
                await work()
                return
            except (RedisError, OSError) as exc:
                if attempt == CHECK_ATTEMPTS:
                    raise
                log.info("cannot check a socket's game yet (%s); trying again", exc)
                await asyncio.sleep(CHECK_DELAY)

    async def resend(self, peer: Peer, game: str, since: int) -> int:
        """`sync`: send the events after `since` again; return the last seq sent."""
        sub = peer.subs[game]
        async with sub.lock:
            entries = await read_events(self.store, game, since)
            if since < sub.seen:
                sub.seen, sub.time = since, 0
            self._send(peer, game, sub, entries)
            return sub.seen

    def _send(
        self, peer: Peer, game: str, sub: Sub, entries: Iterable[Entry],
        prepared: dict[int, Prepared] | None = None,
    ) -> None:  # fmt: skip
        if prepared is None:
            prepared = {}
        for entry in entries:
            if entry.seq != sub.seen + 1:
                continue
            ready = prepared.get(entry.seq)
            if ready is None or ready.entry is not entry:
                ready = prepared[entry.seq] = Prepared(game, entry)
            if peer.binary:
                peer.send_frame(ready.frame(sub.seat))
            else:
                peer.send(ready.message(sub.seat))
            sub.seen, sub.time = entry.seq, entry.time
            if entry.event["kind"] == "away" and entry.event["seat"] == sub.seat:
                peer.note_away(game)

    def committed(self, game: str, entries: list[Entry]) -> None:
        """Events this instance has just committed: send them to the local sockets now.

        A socket that is reading a gap (its lock is held) or is behind gets them
        from the wake-up, which finds them here (`_recalled`) instead of in Redis.
        """
        if not entries:
            return
        self._keep_fresh(game, entries)
        peers = self.games.get(game)
        if not peers:
            return
        prepared: dict[int, Prepared] = {}
        late = []
        for peer in list(peers):
            sub = peer.subs.get(game)
            if sub is not None and sub.seen >= entries[0].seq:
                # We have just written that seq: what the socket saw there is gone.
                self._spawn(self._until_done(functools.partial(self._resync_locked, peer, game)))
            elif not self._offer(peer, game, entries, prepared):
                late.append(peer)
        if late:
            self._remember(game, entries)

    # A game this instance deals is followed by its players only once their `match`
    # has come back through pub/sub. Its first events are kept (`_fresh`) until then,
    # so that a player's first delivery needs no stream read. They are only offered
    # while they hold every event this hub knows of: each commit of ours extends
    # them, and a wake-up beyond them (another instance moved) drops them; any event
    # after a player joined reaches it like every other event.

    def _keep_fresh(self, game: str, entries: list[Entry]) -> None:
        fresh = self._fresh.get(game)
        if fresh is None:
            if entries[0].seq == 1:  # a game dealt here
                self._fresh[game] = (list(entries), {})
                if len(self._fresh) > RECENT_GAMES:
                    del self._fresh[next(iter(self._fresh))]
        elif fresh[0][-1].seq + 1 == entries[0].seq and len(fresh[0]) < RECENT_EVENTS:
            fresh[0].extend(entries)
        else:
            del self._fresh[game]

    def fresh(self, game: str) -> tuple[list[Entry] | None, dict[int, Prepared] | None]:
        """A game dealt here: its events so far (None: read them) and their prepared views."""
        fresh = self._fresh.get(game)
        return fresh if fresh is not None else (None, None)

    def _offer(
        self, peer: Peer, game: str, entries: list[Entry], prepared: dict[int, Prepared]
    ) -> bool:
        """Send the entries the socket lacks, if that needs no wait; False: `deliver` it.

        It needs a wait when the socket is reading a gap (its lock is held) or
        lacks events before the first of `entries`.
        """
        sub = peer.subs.get(game)
        if sub is None or entries[-1].seq <= sub.seen:
            return True
        if sub.lock.locked() or entries[0].seq > sub.seen + 1:
            return False
        self._send(peer, game, sub, entries, prepared)
        return True

    def _remember(self, game: str, entries: list[Entry]) -> None:
        recent = self._recent.pop(game, [])
        if recent and recent[-1].seq + 1 != entries[0].seq:
            recent = []
        self._recent[game] = (recent + entries)[-RECENT_EVENTS:]
        if len(self._recent) > RECENT_GAMES:
            del self._recent[next(iter(self._recent))]  # the oldest: it reads the stream

    def _recalled(self, game: str, after: int, upto: int | None) -> list[Entry] | None:
        """The remembered events after seq `after` up to `upto`, if every one is here."""
        recent = self._recent.get(game)
        if not recent or upto is None or recent[0].seq > after + 1 or recent[-1].seq < upto:
            return None
        return [e for e in recent if e.seq > after]

    def _forget(self, game: str, upto: int | None) -> None:
        recent = self._recent.get(game)
        if recent is not None:
            kept = [e for e in recent if upto is not None and e.seq > upto]
            if kept:
                self._recent[game] = kept
            else:
                del self._recent[game]

    def _on_game(self, game: str, seq: int | None) -> None:
        """A wake-up: serve the local sockets at once from memory; read Redis in a task."""
        fresh = self._fresh.get(game)
        if fresh is not None and (seq is None or seq > fresh[0][-1].seq):
            del self._fresh[game]  # events we do not hold
        peers = list(self.games.get(game, ()))
        behind = [p.subs[game].seen for p in peers if game in p.subs]
        if not behind or (seq is not None and min(behind) >= seq):
            self._forget(game, seq)
            self._fanned_out(game, seq)
            return
        entries = self._recalled(game, min(behind), seq)
        self._forget(game, seq)
        if entries is None:
            self._spawn(self._deliver_all(game, seq, peers, None, None))
            return
        prepared: dict[int, Prepared] = {}
        late = [p for p in peers if not self._offer(p, game, entries, prepared)]
        if late:
            self._spawn(self._deliver_all(game, seq, late, entries, prepared))
        else:
            self._fanned_out(game, seq)

    async def _deliver_all(
        self, game: str, seq: int | None, peers: list[Peer], entries: list[Entry] | None,
        prepared: dict[int, Prepared] | None,
    ) -> None:  # fmt: skip
        """The slow part of a wake-up: one stream read for all, then each socket in turn."""
        try:
            if entries is None:
                lowest = min((p.subs[game].seen for p in peers if game in p.subs), default=None)
                if lowest is None:
                    return
                if seq is not None and lowest >= seq:
                    # Our own commit's wake-up came before its reply, which has
                    # delivered the events meanwhile (`committed`): nothing to read.
                    self._fanned_out(game, seq)
                    return
                # From the event before: each socket's last event is checked.
                entries = await read_events(self.store, game, max(0, lowest - 1))
            for peer in peers:
                await self.deliver(peer, game, entries, prepared)
        except (RedisError, OSError) as exc:
            # The next wake-up of the game reads from where each socket is, and a
            # client that sees a gap can `sync`: nothing is lost but time.
            log.warning("cannot read the events of %s: %s", game, exc)
            return
        self._fanned_out(game, seq)

    def _fanned_out(self, game: str, seq: int | None) -> None:
        if self.on_fanout is not None and seq is not None:
            self.on_fanout(game, seq)

    def _on_player(self, player: str, message: dict[str, Any]) -> None:
        if self.on_player is not None:
            self.on_player(player, message)
        for peer in list(self.players.get(player, ())):
            self._spawn(peer.on_player_message(message))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run hub work that waits (Redis reads) beside the subscription, not in its way."""
        task = asyncio.get_running_loop().create_task(self._logged(work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _logged(work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except (RedisError, OSError) as exc:
            log.warning("cannot deliver: %s", exc)
        except Exception:
            if cancelling():
                raise asyncio.CancelledError from None
            log.exception("cannot deliver")

    # -- the subscription -------------------------------------------------------

    async def run(self) -> None:
        """Listen until cancelled; after a lost connection, re-read every local game."""
        try:
            while True:
                try:
                    async with self.pubsub_redis.pubsub() as pubsub:
                        await pubsub.subscribe(GAMES_CHANNEL, PLAYERS_CHANNEL)
                        self._fresh.clear()  # wake-ups may have been missed meanwhile
                        self._recent.clear()  # and Redis may have lost the history
                        if self.ready.is_set():
                            self._check_all()
                        self.ready.set()
                        async for message in pubsub.listen():
                            self._dispatch(message)
                except (RedisError, OSError) as exc:
                    if cancelling():
                        raise asyncio.CancelledError from exc
                    log.warning("pub/sub connection lost (%s); resubscribing", exc)
                    await asyncio.sleep(0.2)
        finally:
            await cancel_and_wait(self._tasks)

    def _check_all(self) -> None:
        """After a lost subscription: each socket reads what it missed, and is checked."""
        for game, peers in list(self.games.items()):
            for peer in list(peers):
                self._spawn(self._until_done(functools.partial(self.deliver, peer, game)))
        if self.on_resubscribe is not None:
            self._spawn(self._until_done(self.on_resubscribe))

    def _dispatch(self, message: dict[str, Any]) -> None:
        """One pub/sub message; never waits, so the subscription never falls behind."""
        if message.get("type") != "message":
            return
        try:
            if message["channel"] == GAMES_CHANNEL:
                game, seq = message["data"].decode().split(" ")
                if self.on_wakeup is not None:
                    self.on_wakeup(game, int(seq))
                self._on_game(game, int(seq))
            elif message["channel"] == PLAYERS_CHANNEL:
                player, payload = unpack(message["data"])
                self._on_player(player, payload)
        except Exception:
            log.exception("cannot deliver %r", message)


def _rewritten(sub: Sub, entries: list[Entry], *, whole: bool) -> bool:
    """Whether the stream no longer holds the event the socket saw last, as it was sent.

    `whole`: `entries` were read, under the socket's lock, from at most its
    last seq to the stream's end, so a missing event means a shorter stream.
    """
    if sub.seen < 1:
        return False
    at = next((e for e in entries if e.seq == sub.seen), None)
    if at is None:
        return whole
    return bool(sub.time) and at.time != sub.time
