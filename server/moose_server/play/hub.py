"""The hub of one instance: what its pub/sub subscription hears, fanned out to local sockets.

The hub holds each game's last events, made ready for every seat (recent.py:
a bounded `GameLog` per game, of `frames.Prepared` entries). Events this instance
commits go into it and to the local sockets at once (`committed`); a socket
that could not take them then (it was reading a gap) gets them when their
wake-up arrives, from the log. A game dealt here keeps its first events there
until its players' sockets join (`deliver`), so that neither needs a stream read.

Wake-ups come to this instance's channel (keys.wake_channel) for the games
its sockets follow: the first local socket of a game has the hub follow it in
Redis (lua/follow.lua lists the channel in the game hash), and the game's
version then counts as a wake-up, for what was committed before the channel
was listed. A game dealt here for a player with a socket here is listed by its
first commit instead (`starting`; lua/commit.lua), with no call of its own.
No wake-up comes of our own commits: where a socket could not take one at
once, the hub makes its wake-up itself. Before, every commit woke every
instance, its own included.

Another instance's commit publishes the step itself to the followers
(`heard_step`: its events with the state after each, on the sharded channels
of `sharded_channels`, one per bucket; on a cluster each is heard on the
primary that holds its slot, net/subscription.py): they go into the log
and serve the sockets with no stream read and no rules replayed. A step whose
first seq does not follow what a socket has seen (a message lost) leaves a gap
in the log, which the wake-up below fills from the stream.

Another instance's wake-up ("<game id> <seq>") makes the hub read the game's
stream once from the lowest seq its local sockets have seen, unless the log
holds those events, then give each socket the events it has not had, in order,
each with its own view; a read that fails (Redis briefly unavailable, a Cluster
failing over) is tried again, further apart each time, for about 30 s. Pub/sub
may lose a wake-up while it reconnects: the hub then forgets every log and
re-reads every game it serves, and a socket that sees a gap reads the stream
itself, so the stream is the record.

Which correspondence games each player's sockets here follow is written to Redis too
(keys.looking_key, per instance, in a task off the socket's path): a notice of
a game is never sent to a player who has it open on any instance (notify/,
through social/presence.py's `looking`).

Player messages (`match`, `table`) travel on one channel as [player, message,
id]; a resent PUBLISH (store.py) brings a second copy, which the id drops. One
addressed to a game ("game:<id>", deadlines.py: a `deadline` moved without an
event) goes to every local socket of the game whose last event is at its seq.
One addressed to a table's seats ("seats:<game>", Store.publish_seats: a queue
table's `match` messages in one PUBLISH) is each seat's own message, in turn.

The hub is built with whom it tells what it hears: every wake-up (`woken`:
the games' copies, which it ages), how its fan-out went (`fanout`: the
metrics) and every player message and reconnected subscription (`players`:
the players waiting for a match, waiting.py). It hears its channels
(`channels()`) through the instance's one subscription (net/subscription.py),
which is built after it and tells it of each new subscription (`subscribed`).

Redis may come back without its last writes (a host crash with `appendfsync
everysec`, a failover to an asynchronous replica): a socket may then have seen
events that the stream no longer holds, or holds other events at those seqs.
Each socket's `Sub` keeps the Redis time of the last event it was sent; the
hub checks it wherever it reads the stream, checks every socket when pub/sub
reconnects, and treats a commit of ours at a seq a socket has seen as proof.
Such a socket gets the game as it is now (a `state` event, which a client
takes whatever its seq), or `gone` when the game no longer exists.

A socket told that its game went back may have a move to make again (one Redis
lost, which a client sends again with its move id): before its `state` is read,
the game's deadline is held `outage_grace` from now at least (Store.defer), so
that no timeout plays its turn before it could answer. After a lost
subscription every socket's game is followed again (Redis may have lost its
list of followers) and checked in one batch (`_recheck`), and
those that went back are told first, side by side.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
from collections.abc import (
    Awaitable,
    Callable,
    Collection,
    Coroutine,
    Iterable,
    Mapping,
    Sequence,
)
from typing import Any, Protocol

from moose import rules
from moose_server.net.session import Peer, Sub
from moose_server.play.deadlines import ADDRESS
from moose_server.play.frames import Prepared, state_message
from moose_server.play.game import Game, Move
from moose_server.play.recent import LOGGED_GAMES, GameLog, Recent
from moose_server.play.streams import heard_step, read_events
from moose_server.storage.codec import unpack
from moose_server.storage.failures import StorageError
from moose_server.storage.keys import GAMES_CHANNEL, PLAYERS_CHANNEL, looking_key, steps_channel
from moose_server.storage.store import SEATS, Entry, Store
from moose_server.tasks import cancel_and_wait, cancelling

__all__ = [
    "FanoutListener",
    "Hub",
    "Peer",
    "PlayerListener",
    "Sub",
    "WakeupListener",
]

log = logging.getLogger(__name__)

CHECK_ATTEMPTS, CHECK_DELAY = 40, 0.25  # a socket's check after Redis came back: 10 s
# Seconds between a wake-up's failed stream read and the next try (each with some
# jitter): about 30 s in all, a Cluster failover's `cluster-node-timeout` and more.
READ_DELAYS = (0.1, 0.2, 0.4, 0.8, 1.6) + (2.0,) * 13
SAID_IDS = 16384  # player message ids remembered, at most (a resend comes within ~10 s)
STARTED_KEPT = 4096  # games dealt here that a local socket has yet to join, at most


class WakeupListener(Protocol):
    """Told of every wake-up (games.Copies: a copy older than it is stale)."""

    def woke(self, game: str, seq: int) -> None:
        """An instance (this one or another) committed `game` up to `seq`."""

    async def settled(self, game: str) -> None:
        """Once no commit of `game` by this instance is under way (its reply delivers)."""

    def stepped(
        self,
        game: str,
        version: int,
        deadline: int,
        data: bytes,
        parsed: rules.State | None = None,
        legal: list[Move] | None = None,
    ) -> None:
        """Another instance committed `game` to `version`, writing `data` (packed);
        `parsed`: its state as the hub made it, `legal` the legal moves if made."""


class FanoutListener(Protocol):
    """Told how the fan-out goes (metrics.Metrics times it)."""

    def delivered(self, game: str, seq: int, started: float, waiting: bool) -> None:
        """Our commit of `game`, from `seq` on, went to the local sockets that follow it
        (`started`: perf_counter() as it came); `waiting`: some get it at its wake-up."""

    def fanned_out(self, game: str, seq: int) -> None:
        """The wake-up of `game` at `seq` is handled: its events are on their way."""


class PlayerListener(Protocol):
    """Told of every player message and of a subscription that came back (waiting.py)."""

    def heard(self, player: str, message: dict[str, Any]) -> None:
        """A message for `player` arrived, before it goes to their local sockets."""

    async def resubscribed(self, players: Mapping[str, Collection[Peer]]) -> None:
        """Pub/sub is back after a lost connection (Redis may have restarted);
        `players`: this instance's sockets by player. May run again should Redis fail."""


class Hub:
    """Fans game events and player messages out to this instance's sockets."""

    def __init__(
        self,
        store: Store,
        channel: bytes,
        recent_games: int = LOGGED_GAMES,
        *,
        woken: WakeupListener | None = None,
        fanout: FanoutListener | None = None,
        players: PlayerListener | None = None,
        outage_grace: float = 5.0,
        steps: bool = True,
        instance: str = "",
        look_ttl: float = 60.0,
    ) -> None:
        self.store = store
        # This instance's id (settings.instance_id): the games its players' sockets follow
        # are written under it (keys.looking_key), for the notices of every instance
        # (social/presence.py's `looking`); "" writes none. Each lives `look_ttl`
        # unless presence renews it.
        self.instance = instance
        self.look_ttl_ms = max(1000, round(look_ttl * 1000))
        self._looked: set[tuple[str, str]] = set()  # (player, game) written as followed
        # Whether other instances' commits publish their steps to us (sharded pub/sub:
        # `sharded_channels`), or wake-ups only (an instance of the version before).
        self.steps = steps
        # This instance's wake-up channel (keys.wake_channel): the games a local
        # socket follows are followed in Redis, and their wake-ups come there.
        self.channel = channel
        self._followed: set[str] = set()  # games a local socket follows, followed in Redis
        self._following: set[str] = set()  # games whose follow is under way
        # Games dealt here whose first commit listed our channel (`starting`), until
        # a local socket joins them (then followed with no follow.lua call); oldest first.
        self._started: dict[str, None] = {}
        # A game that went back keeps its deadline this far from its seats' `state`.
        self.defer_ms = int(outage_grace * 1000)
        self.woken = woken
        self.fanout = fanout
        self.player_listener = players
        self.games: dict[str, set[Peer]] = {}
        self.players: dict[str, set[Peer]] = {}
        self.recent = Recent(recent_games)  # games whose last events are held
        self._said: dict[Any, None] = {}  # the latest player message ids, oldest first
        self._tasks: set[asyncio.Task[None]] = set()  # deliveries that read Redis

    # -- local registrations ----------------------------------------------------

    def add_player(self, peer: Peer) -> None:
        """Deliver the player's channel messages to this socket."""
        assert peer.player is not None
        self.players.setdefault(peer.player, set()).add(peer)

    def join(
        self, peer: Peer, game: str, seat: int | None, seen: int, *, slow: bool = False
    ) -> Sub:
        """Follow a game from seq `seen` on (kept if the socket follows it already).
        `slow`: a correspondence game, whose seats' looks are written (`_look`)."""
        sub = old = peer.subs.get(game)
        if sub is None or sub.seat != seat:
            sub = peer.subs[game] = Sub(seat, seen)
        if slow and seat is not None and peer.player is not None:
            self._look(peer.player, game, True)  # a seat's: only seats are sent notices
        self.games.setdefault(game, set()).add(peer)
        if game in self._started:
            del self._started[game]
            self._followed.add(game)  # listed since its first commit (`starting`)
        if game not in self._followed:
            self._follow_later(game)
        elif sub is not old:
            # `seen` comes from a read made before: a commit of ours since went to
            # the sockets there were then, and no wake-up of it comes.
            held = self.recent.get(game)
            if held is not None and held.latest > seen:
                asyncio.get_running_loop().call_soon(self._on_game, game, held.latest)
        return sub

    def starting(self, players: Sequence[str]) -> bytes:
        """The channel a game dealt here lists as its follower from its first commit
        (lua/commit.lua), when a socket of one of its `players` is here (it is about
        to join the game); b"" when none is: this instance hears none of its steps."""
        return self.channel if any(self.players.get(p) for p in players) else b""

    def started(self, game: str) -> None:
        """The game's first commit listed our channel: its first local socket follows
        it with no follow.lua call (`join`)."""
        self._started[game] = None
        if len(self._started) > STARTED_KEPT:
            del self._started[next(iter(self._started))]

    def _follow_later(self, game: str) -> None:
        """Follow the game in Redis, in a task (unless one is under way)."""
        if game not in self._following:
            self._following.add(game)
            self._spawn(self._follow_until_done(game))

    async def _follow_until_done(self, game: str) -> None:
        try:
            await self._until_done(functools.partial(self._follow, game))
        finally:
            self._following.discard(game)  # failed for good: its next wake-up tries again

    async def _follow(self, game: str) -> None:
        """Follow the game in Redis: its wake-ups come to our channel from now on.

        Its commits until then woke only the instances that followed it: the
        game's version as we followed it is taken as a wake-up, so that the
        local sockets get what they lack (from the log, or one stream read).
        A game not dealt yet (a fair deal waiting for its seeds) is followed at
        its first wake-up, which every instance hears: nobody follows it yet.
        """
        [version] = await self.store.follow([game], self.channel)
        if version >= 0 and game in self.games:
            self._followed.add(game)
            self._woke(game, version)

    def leave(self, peer: Peer, game: str) -> None:
        """Stop following a game."""
        peer.subs.pop(game, None)
        peers = self.games.get(game)
        if peers is not None:
            peers.discard(peer)
            if peer.player is not None and not self.watches(peer.player, game):
                self._look(peer.player, game, False)
            if not peers:
                del self.games[game]
                self._followed.discard(game)  # in Redis it stays so: a wake-up or two more
                self.recent.drop(game)  # no local socket left to give its events to

    def _look(self, player: str, game: str, looking: bool) -> None:
        """Write (in a task) that a socket of the player here follows the game (once),
        or that none does any more (if it was written)."""
        if not self.instance or ((player, game) in self._looked) == looking:
            return
        redis, key, field = self.store.redis, looking_key(player), f"{game} {self.instance}"
        if looking:
            self._looked.add((player, game))
            work = redis.all([redis.hset(key, {field: 1}), redis.pexpire(key, self.look_ttl_ms)])
        else:
            self._looked.discard((player, game))
            work = redis.all([redis.hdel(key, field)])
        self._spawn(_done(work))

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

    def player_names(self) -> list[tuple[str, str]]:
        """(player, name) of every player with a socket here (social/presence.py)."""
        return [
            (p, getattr(next(iter(peers)), "name", ""))
            for p, peers in self.players.items()
            if peers
        ]

    def has_player(self, player: str) -> bool:
        """Whether the player has a socket here."""
        return bool(self.players.get(player))

    def watches(self, player: str, game: str) -> bool:
        """Whether a socket of the player here follows the game (has it open)."""
        return any(peer.player == player for peer in self.games.get(game, ()))

    def player_peers(self, player: str) -> set[Peer]:
        """This instance's sockets of a player."""
        return self.players.get(player, set())

    # -- delivery ---------------------------------------------------------------

    async def deliver(self, peer: Peer, game: str) -> None:
        """Send the socket every event it has not seen, in order: from the log, else the stream.

        Either way it checks that the event the socket saw last is still the
        one the stream holds at that seq (see the module docstring).
        """
        sub = peer.subs.get(game)
        if sub is None:
            return
        async with sub.lock:
            found = self.recent.get(game)
            if found is not None and sub.seen >= found.latest > 0 and not found.events:
                return  # nothing heard of past what it has (the log was trimmed): no read
            ready = found.since(sub.seen) if found is not None else None
            if found is not None and ready is not None:
                at = found.at(sub.seen)
                if at is not None and _rewritten(sub, [at.entry], whole=False):
                    await self._resync(peer, game, sub)
                    return
            if ready is None:
                entries = await read_events(self.store, game, max(0, sub.seen - 1))
                if _rewritten(sub, entries, whole=True):
                    await self._resync(peer, game, sub)
                    return
                ready = self.recent.log(game).add(game, entries)
            self._send(peer, game, sub, ready)

    async def catch_up(self, peer: Peer, game: str) -> None:
        """Send the socket every event it has not had, read from the stream.

        For a move refused as behind the game (`stale_seq`, `not_your_turn`):
        the socket may have missed an event whose wake-up never reached this
        instance, or whose read failed, so the log is not asked. One read per
        refusal; the events go out before the refusal's answer.
        """
        sub = peer.subs.get(game)
        if sub is None:
            return
        async with sub.lock:
            entries = await read_events(self.store, game, max(0, sub.seen - 1))
            if _rewritten(sub, entries, whole=True):
                await self._resync(peer, game, sub)
                return
            self._send(peer, game, sub, self.recent.log(game).add(game, entries))

    async def send_state(self, peer: Peer, game: str) -> None:
        """Send the socket the game as it is now: a `state` event, or `gone`."""
        sub = peer.subs.get(game)
        if sub is not None:
            async with sub.lock:
                await self._state(peer, game, sub)

    async def _state(self, peer: Peer, game_id: str, sub: Sub) -> None:
        """The `state` event (the lock is held); what the socket saw before is past."""
        sub.stating = True
        try:
            await self._read_state(peer, game_id, sub)
        finally:
            sub.stating = False

    async def _read_state(self, peer: Peer, game_id: str, sub: Sub) -> None:
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
        if game_id in peer.subs:
            self._send(peer, game_id, sub, self.recent.log(game_id).add(game_id, entries))

    async def _resync(self, peer: Peer, game: str, sub: Sub) -> None:
        log.warning(
            "game %s went back: %s saw seq %d, which Redis no longer holds as it was sent; "
            "resyncing",
            game,
            peer.player,
            sub.seen,
            extra={"event": "rewound", "game": game, "player": peer.player, "seq": sub.seen},
        )
        await self.store.defer([game], self.defer_ms)
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
            except (StorageError, OSError) as exc:
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
            self._send(peer, game, sub, self.recent.log(game).add(game, entries))
            return sub.seen

    def _send(self, peer: Peer, game: str, sub: Sub, ready: list[Prepared]) -> None:
        """The events that follow the socket's last seq, each as its seat sees it."""
        for event in ready:
            if event.seq != sub.seen + 1:
                continue
            if peer.binary:
                peer.send_frame(event.frame(sub.seat))
            else:
                peer.send(event.message(sub.seat))
            sub.seen, sub.time = event.seq, event.entry.time
            kind = event.entry.event
            if kind["kind"] == "away" and kind["seat"] == sub.seat:
                peer.note_away(game)

    def _offer(
        self, peer: Peer, game: str, ready: list[Prepared], held: GameLog | None = None
    ) -> bool:
        """Send the events the socket lacks, if that needs no wait; False: `deliver` it.

        It needs a wait when the socket is reading a gap (its lock is held),
        lacks events before the first of `ready`, or saw at its last seq another
        event than the one `held` (the game's log) has there: Redis lost what it
        saw, and `deliver` resyncs it.
        """
        sub = peer.subs.get(game)
        if sub is None or ready[-1].seq <= sub.seen:
            return True
        if sub.lock.locked() or ready[0].seq > sub.seen + 1:
            return False
        if held is not None and sub.time:
            at = held.at(sub.seen)
            if at is not None and at.entry.time != sub.time:
                return False
        self._send(peer, game, sub, ready)
        return True

    def _served(self, game: str, seq: int | None) -> None:
        """The local sockets have every event up to the wake-up's `seq`: trim, tell."""
        held = self.recent.get(game)
        if held is not None:
            self._trim(game, held)
        self._fanned_out(game, seq)

    def _trim(self, game: str, held: GameLog) -> None:
        """Drop the events every local socket of the game has (none yet: keep them)."""
        seen = [p.subs[game].seen for p in self.games.get(game, ()) if game in p.subs]
        if seen:
            held.forget(min(seen))

    def committed(self, game: str, entries: list[Entry]) -> None:
        """Events this instance has just committed: send them to the local sockets now.

        A socket that is reading a gap (its lock is held) or is behind gets them
        when their wake-up arrives, from the log. A socket that saw another
        event at a seq just written is resynced: Redis lost what it saw.
        """
        if not entries:
            return
        started = time.perf_counter()
        held = self.recent.log(game)
        ready = held.add(game, entries)
        late = False
        for peer in list(self.games.get(game, ())):
            sub = peer.subs.get(game)
            if sub is not None and sub.stating:
                late = True  # its wake-up delivers them after the `state` (see _on_game)
            elif sub is not None and sub.seen >= entries[0].seq and not _kept(sub, entries):
                self._spawn(self._until_done(functools.partial(self._resync_locked, peer, game)))
                late = True
            elif not self._offer(peer, game, ready):
                late = True
        if late:
            # No wake-up of our own commit comes (commit.lua): one is made here.
            asyncio.get_running_loop().call_soon(self._woke, game, entries[-1].seq)
        if not late and game in self.games:
            self._trim(game, held)
        if self.fanout is not None and game in self.games:
            self.fanout.delivered(game, entries[0].seq, started, self._awaited(game, entries))

    def _awaited(self, game: str, entries: list[Entry]) -> bool:
        """Whether a local socket still waits for these events (it was reading a gap)."""
        last = entries[-1].seq
        for peer in self.games.get(game, ()):
            sub = peer.subs.get(game)
            if sub is not None and sub.seen < last:
                return True
        return False

    def _woke(self, game: str, seq: int) -> None:
        """A wake-up: the game is at `seq` (its copy ages) and the sockets are served."""
        if self.woken is not None:
            self.woken.woke(game, seq)
        self._on_game(game, seq)

    def _on_game(self, game: str, seq: int | None) -> None:
        """A wake-up: serve the local sockets at once from the log; read Redis in a task."""
        peers = []
        for peer in list(self.games.get(game, ())):
            sub = peer.subs.get(game)
            if sub is not None and sub.stating:
                # Its `state` may come from a read made before this commit, and its
                # `seen` is not that state's yet: once sent, it reads what follows.
                self._spawn(self.deliver(peer, game))
            else:
                peers.append(peer)
        seen = [p.subs[game].seen for p in peers if game in p.subs]
        # A log for every game a local socket follows, if only to know its latest
        # seq: a delivery under way must not stop short of it.
        held = self.recent.log(game) if seen else self.recent.get(game)
        if held is not None and seq is not None:
            held.latest = max(held.latest, seq)
        if not seen:
            if held is not None and held.since(0) is None:
                self.recent.drop(game)  # a game dealt here moved on elsewhere: no use
            self._fanned_out(game, seq)
            return
        if seq is not None and min(seen) >= seq:
            self._served(game, seq)  # our own commit's: `committed` sent it
            return
        ready = held.range(min(seen), seq) if held is not None and seq is not None else None
        if ready is None:
            self._spawn(self._deliver_all(game, seq, peers))
            return
        late = [p for p in peers if not self._offer(p, game, ready, held)]
        if late:
            self._spawn(self._deliver_all(game, seq, late))
        else:
            self._served(game, seq)

    async def _deliver_all(self, game: str, seq: int | None, peers: list[Peer]) -> None:
        """The slow part of a wake-up: one stream read for all, then each socket in turn.

        Redis may be briefly unavailable (a restart, a Cluster primary failing
        over to its replica): the read is tried again, further apart each time
        (`READ_DELAYS`), so that the seats are told the event, a move of theirs
        to make among them, as soon as Redis answers again, not at the game's
        next wake-up, which may be its deadline's timeout.
        """
        for attempt, delay in enumerate([*READ_DELAYS, None], 1):
            try:
                await self._read_and_deliver(game, seq, peers)
                return
            except (StorageError, OSError) as exc:
                if delay is None:
                    # The next wake-up of the game reads from where each socket is, and a
                    # client that sees a gap can `sync`: nothing is lost but time.
                    log.warning("cannot read the events of %s: %s", game, exc)
                    return
                log.info("cannot read the events of %s yet (try %d: %s)", game, attempt, exc)
                await asyncio.sleep(delay * random.uniform(0.5, 1.0))

    async def _read_and_deliver(self, game: str, seq: int | None, peers: list[Peer]) -> None:
        # Our own commit's wake-up may come before its reply: once the commit
        # is settled, its `committed` has sent the events, and nothing is read.
        # (Reading here anyway cost a stream read per move, and 1.5x the CPU
        # per move: BENCHMARKS.md.)
        await asyncio.sleep(0)
        if self.woken is not None:
            await self.woken.settled(game)
        peers = [p for p in peers if game in p.subs]
        seen = [p.subs[game].seen for p in peers]
        if not seen:
            return
        lowest = min(seen)
        if seq is not None and lowest >= seq:
            self._served(game, seq)
            return
        found = self.recent.get(game)
        if found is None or found.since(lowest) is None:
            # From the event before: each socket's last event is checked.
            entries = await read_events(self.store, game, max(0, lowest - 1))
            self.recent.log(game).add(game, entries)
        for peer in peers:
            await self.deliver(peer, game)
        self._served(game, seq)

    def _fanned_out(self, game: str, seq: int | None) -> None:
        if self.fanout is not None and seq is not None:
            self.fanout.fanned_out(game, seq)

    def heard_wakeup(self, data: bytes) -> None:
        """A wake-up, "<game id> <seq>" (on GAMES_CHANNEL or this instance's channel)."""
        game, seq = data.decode().split(" ")
        self._heard(game, int(seq))

    def _heard(self, game: str, seq: int) -> None:
        if game in self.games and game not in self._followed:
            self._follow_later(game)
        self._woke(game, seq)

    def heard_step(self, data: bytes) -> None:
        """A step another instance committed, as its commit published it (commit.lua):
        its events go into the game's log, then it is a wake-up. A step that does not
        follow what the log holds leaves a gap there, which the wake-up reads from the
        stream, as it does for a wake-up alone."""
        step = heard_step(data)
        game, entries = step.game, step.entries
        if not entries:
            return
        ready = self.recent.log(game).add(game, entries) if game in self.games else None
        self._heard(game, entries[-1].seq)
        if self.woken is not None:
            # The state after the step, as made for the local sockets (and the legal
            # moves, if the seat to act is one of theirs): the next move here uses them.
            last = ready[-1] if ready else None
            parsed, legal = (last.state, last.legal) if last is not None else (None, None)
            self.woken.stepped(game, entries[-1].seq, step.deadline, step.data, parsed, legal)

    def heard_player(self, data: bytes) -> None:
        """A player message: to the player's local sockets, unless a copy came before."""
        player, message, *rest = unpack(data)
        if rest:  # an id (older instances send none)
            if rest[0] in self._said:
                return
            self._said[rest[0]] = None
            if len(self._said) > SAID_IDS:
                del self._said[next(iter(self._said))]
        if player.startswith(SEATS):  # one message for each of several players
            for each, its in message["to"]:
                self._to_player(each, its)
            return
        self._to_player(player, message)

    def _to_player(self, player: str, message: dict[str, Any]) -> None:
        """A player message heard once: to the listener, then where it is addressed."""
        if self.player_listener is not None:
            self.player_listener.heard(player, message)
        if player.startswith(ADDRESS):  # every socket of a game at its seq (deadlines.py)
            game = player.removeprefix(ADDRESS)
            for peer in list(self.games.get(game, ())):
                sub = peer.subs.get(game)
                if sub is not None and sub.seen == message.get("seq"):
                    peer.send(message)
            return
        if player.startswith("watchers:"):  # a game's spectators (tables/invites.py)
            game = player.removeprefix("watchers:")
            for peer in list(self.games.get(game, ())):
                sub = peer.subs.get(game)
                if sub is not None and sub.seat is None:
                    peer.send(message)
            return
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
        except (StorageError, OSError) as exc:
            log.warning("cannot deliver: %s", exc)
        except Exception:
            if cancelling():
                raise asyncio.CancelledError from None
            log.exception("cannot deliver")

    # -- the subscription -------------------------------------------------------

    def channels(self) -> dict[bytes, Callable[[bytes], None]]:
        """What the hub hears on the subscription (net/subscription.py), by channel."""
        return {
            GAMES_CHANNEL: self.heard_wakeup,
            PLAYERS_CHANNEL: self.heard_player,
            self.channel: self.heard_wakeup,
        }

    def sharded_channels(self) -> dict[bytes, Callable[[bytes], None]]:
        """The sharded channels the hub hears (SSUBSCRIBE): the steps of the games it
        follows, one channel per bucket (keys.steps_channel)."""
        if not self.steps:
            return {}
        return {steps_channel(b, self.channel): self.heard_step for b in range(self.store.buckets)}

    def subscribed(self, again: bool) -> None:
        """A subscription was made; `again`: after a lost one, which may have lost
        wake-ups (and Redis the history): every local game is read again."""
        self.recent.clear()
        if again:
            self._started.clear()  # Redis may have lost them: the joins follow
            self._check_all()

    async def close(self) -> None:
        """Cancel and await the deliveries under way (the instance stops)."""
        await cancel_and_wait(list(self._tasks))

    def _check_all(self) -> None:
        """After a lost subscription: each socket reads what it missed, and is checked."""
        self._spawn(self._until_done(self._recheck))
        if self.player_listener is not None:
            self._spawn(
                self._until_done(functools.partial(self.player_listener.resubscribed, self.players))
            )

    async def _recheck(self) -> None:
        """Check every socket's game in one batch (the event each saw last, as Redis
        holds it now); resync those that went back, all at once, and only then
        deliver the others what they missed."""
        subs = [
            (peer, game, peer.subs[game])
            for game, peers in list(self.games.items())
            for peer in list(peers)
            if game in peer.subs
        ]
        if not subs:
            return
        # Redis may have lost the games' lists of followers with its last writes.
        games = list(self.games)
        versions = await self.store.follow(games, self.channel)
        self._followed.update(g for g, v in zip(games, versions, strict=True) if v >= 0)
        # Each socket's last event as it was before the read: a delivery meanwhile
        # (a follow's wake-up) moves it on, and checks what it sends itself.
        marks = [(sub.seen, sub.time) for _, _, sub in subs]
        times = await self.store.event_times(
            [(game, seen) for (_, game, _), (seen, _) in zip(subs, marks, strict=True)]
        )
        back: list[tuple[Peer, str]] = []
        others: list[tuple[Peer, str]] = []
        for (peer, game, _), (seen, time_), at in zip(subs, marks, times, strict=True):
            went = seen >= 1 and (at is None or (bool(time_) and at != time_))
            (back if went else others).append((peer, game))
        await asyncio.gather(
            *(self._until_done(functools.partial(self._resync_locked, *pair)) for pair in back)
        )
        for peer, game in others:
            self._spawn(self._until_done(functools.partial(self.deliver, peer, game)))


def _rewritten(sub: Sub, entries: Iterable[Entry], *, whole: bool) -> bool:
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


def _kept(sub: Sub, entries: Iterable[Entry]) -> bool:
    """Whether `entries` hold the event the socket saw last, as it was sent."""
    return any(e.seq == sub.seen and e.time == sub.time for e in entries)


async def _done(work: Awaitable[Any]) -> None:
    """Wait for `work` (a write the hub does not need the answer of)."""
    await work
