"""The Redis calls of games, timers, sessions, limits and live games.

Key names are in keys.py (with the Cluster hash-tag rules), the scripts' typed
calls in scripts.py. A finished game keeps its hash for `game_ttl`; its stream
and move ids expire after `game_grace` (see lua/commit.lua): then the game holds
its data only. Pub/sub (keys.GAMES_CHANNEL, keys.PLAYERS_CHANNEL) is only a
wake-up; the streams are the record.

Every call goes through the instance's `Gateway` (gateway.py): the commands of
one event-loop turn in one round trip (batch.py), on one node, a cluster or TLS
alike: a move's game read (HMGET) and commit script, event reads (XRANGE), the
players' game sets (SADD/SREM) and player messages (PUBLISH), deadline claims,
heartbeats and sessions. A command (or a batch) goes once more when its
connection was lost (Redis restarted), so every command may run twice: the
commit script checks the version and the move id (a commit that did run answers
"dup" or "stale" the second time), reads and set changes are the same done
twice, and a PUBLISH to a player carries an id with which the hubs drop the
second copy.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.connection import Connection, parse_url
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

from moose_server.storage import formats
from moose_server.storage.codec import as_int, as_list, as_text, pack, unpack, unpack_stored
from moose_server.storage.failures import UNAVAILABLE
from moose_server.storage.gateway import Gateway, Reply, StreamEntry
from moose_server.storage.keys import (
    LIVE_GAMES_KEY,
    LIVE_INFO_KEY,
    PLAYERS_CHANNEL,
    SECRET_KEY,
    GameKeys,
    bucket,
    correspondence_games_key,
    deadlines_key,
    instance_key,
    player_games_key,
    unrated_key,
)
from moose_server.storage.packing import packing
from moose_server.storage.scripts import (
    ClaimCall,
    CommitCall,
    DeferCall,
    FollowCall,
    LimitCall,
    LiveAddCall,
    LiveRemoveCall,
    OnlineCall,
    SpareCall,
)

__all__ = ["SEATS", "Commit", "Entry", "Loaded", "Store", "Stored", "connect"]

CLAIM_LIMIT = 100
LIVE_KEPT = 1000  # public games the index holds at most (the newest)
OUTAGE_MS = 1000  # no claim of a bucket for longer: the service was down
CLAIM_WAIT = 0.25  # seconds a poll waits for a bucket's claim once others answered
GRACE_MS = 5000  # then every deadline is at least this far after it is back
KEYS_HELD = 4096  # games whose GameKeys the store keeps made (~300 B each)
# A bucket's Redis time, as a deadline claim read it, is told on by our own clock
# this long at most (s); a claim whose round trip took longer tells none (the time
# told is off by half a round trip at most: 10 ms, so two instances' commits of one
# game stay in their order but for moves under 20 ms apart).
CLOCK_KEPT, CLOCK_TRIP = 10.0, 0.02
# The player channel's address of one message for several players ("seats:<game>"):
# {"type": "seats", "to": [[player, message], ...]}, each message for its player
# (Store.publish_seats). An instance of a version before drops it: unknown address.
SEATS = "seats:"

log = logging.getLogger(__name__)


def connect(
    url: str, max_connections: int, *, blocking: bool = False, timeout: float | None = 10
) -> aioredis.Redis:
    """A client on `url`: a BlockingConnectionPool for commands, or one for pub/sub.

    `timeout` bounds each reply (seconds); None leaves that to the caller, as a
    `Batcher` bounds each batch as a whole (batch.py)."""
    if blocking:
        # Pub/sub and blocking reads wait as long as they like: no socket timeout.
        return aioredis.Redis.from_url(url, socket_timeout=None, health_check_interval=10)
    # A pooled connection to a Redis that restarted fails its next command
    # ("Connection closed by server"): that command is sent once more on a new
    # connection. Every command is safe to send twice (see the module docstring).
    once = Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,))
    options: dict[str, Any] = {**parse_url(url)}  # what from_url does, but our packer
    options["connection_class"] = packing(options.get("connection_class", Connection))
    pool = aioredis.BlockingConnectionPool(
        max_connections=max_connections, timeout=10, socket_timeout=timeout, retry=once, **options
    )
    return aioredis.Redis(connection_pool=pool)


@dataclass(frozen=True)
class Loaded:
    """A game as read: version, data blob (None if missing), deadline, earlier answer."""

    version: int
    data: dict[str, Any] | None
    deadline: int
    dup: int | None


@dataclass  # not frozen, as Entry
class Commit:
    """What the commit script answered."""

    status: str  # "ok", "dup" or "stale"
    seq: int  # ok/dup: seq of the first event written; stale: the current version
    now: int
    deadline: int


@dataclass  # not frozen: made for every event, and a frozen one's __init__ costs ~2x
class Entry:
    """One event of a game's stream (not to be changed once made)."""

    seq: int
    event: dict[str, Any]
    # rules.State.to_dict(), plus "auto": the server plays next. A commit's (and a
    # heard step's) holds the rules state's own tuples and lists: the same bytes packed.
    state: dict[str, Any]
    deadline: int
    time: int
    # The state as a rules.State when the caller has it already (a commit of this
    # instance): the hub then need not rebuild it from `state`. Not compared.
    parsed: Any = field(default=None, compare=False, repr=False)
    # rules.legal_moves(parsed), when the caller has them already. Not compared.
    legal: list[dict[str, Any]] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Stored:
    """One entry of a game's stream as stored: the state only where a snapshot was kept."""

    seq: int
    event: dict[str, Any]
    state: dict[str, Any] | None  # rules.State.to_dict() after the event, if kept here
    auto: bool  # the server plays the seat to act after this event
    deadline: int
    time: int


class Store:
    """Key names, scripts and the few Redis calls of games, timers and sessions."""

    def __init__(self, redis: Gateway, buckets: int) -> None:
        self.redis = redis
        self.buckets = buckets
        # Whether the last deadline claim failed in some buckets (a cluster node
        # down): their next claim must judge the gap (timers.py).
        self.claim_failed = False
        # The Redis time of this store's last claim of each bucket: a poll stamp
        # older than it shows that Redis lost its last writes (lua/claim.lua).
        self._claimed: dict[int, int] = {}
        self._claims: dict[int, _Claim] = {}  # bucket -> its claim under way
        # The deadlines the last claim moved for an outage: (game id, its deadline now),
        # for the deadline loop to tell the games' sockets (play/timers.py).
        self._moved: list[tuple[str, int]] = []
        # Each bucket's Redis time (ms) at its last claim, and our monotonic clock then.
        self._clocks: dict[int, tuple[int, float, float]] = {}
        # Player message ids: from a random start, so that two instances' differ.
        self._message_ids = itertools.count(secrets.randbits(62))
        self._keys: dict[str, GameKeys] = {}  # the keys of the games last named, oldest first

    # -- key names ------------------------------------------------------------

    def bucket(self, game: str) -> int:
        """The bucket of a game id (keys.bucket, with this store's bucket count)."""
        return bucket(game, self.buckets)

    def keys_of(self, game: str) -> GameKeys:
        """The keys of a game (keys.py), made once for the games in play (a commit's
        bucket hash and key names were ~2 % of the server's CPU at full speed)."""
        found = self._keys.get(game)
        if found is None:
            found = self._keys[game] = GameKeys.of(game, self.buckets)
            if len(self._keys) > KEYS_HELD:
                del self._keys[next(iter(self._keys))]
        return found

    # -- games ------------------------------------------------------------------

    async def load(self, game: str, move_field: str | None = None) -> Loaded:
        """Read a game's version, data and deadline (and a move id's answer) at once.

        Data of a format this release does not read raises formats.UnknownFormat.

        A move id's answer is in the game hash while the game goes on, in the
        ledger of its move ids for the grace after its end (lua/commit.lua)."""
        keys = self.keys_of(game)
        if move_field:  # both in one round trip
            read = self.redis.hmget(keys.game, "v", "data", "dl", move_field)
            ledger = self.redis.hget(keys.moves, move_field)
            got = await read
            answer = got[3] if got[3] is not None else await ledger
        else:
            got, answer = await self.redis.hmget(keys.game, "v", "data", "dl"), None
        dup = int(answer) if answer is not None else None
        data = formats.read(unpack_stored(got[1]), f"game {game}") if got[1] is not None else None
        return Loaded(int(got[0] or 0), data, int(got[2] or 0), dup)

    async def commit(self, call: CommitCall) -> Commit:
        """Run the commit script (see `CommitCall`): version, move id, state, events, deadline.
        Its time is Redis' as `redis_now` tells it (no TIME in the script), if it can."""
        keys, argv = call.build(self.keys_of(call.game), self.redis_now(call.game))
        status, seq, now, deadline = as_list(await self.redis.run(call, keys, argv))
        return Commit(as_text(status), as_int(seq), as_int(now), as_int(deadline))

    def redis_now(self, game: str) -> int:
        """Redis' clock (ms) on the node of the game's bucket, as a recent deadline
        claim of the bucket read it and our monotonic clock has moved on since (within
        half that claim's round trip); 0 when no claim of it told it within CLOCK_KEPT."""
        found = self._clocks.get(self.bucket(game))
        if found is None:
            return 0
        ms, at, _ = found
        since = time.monotonic() - at
        return ms + int(since * 1000) if 0 <= since <= CLOCK_KEPT else 0

    def _clock(self, b: int, ms: int, sent: float, done: float) -> None:
        """A claim of bucket `b` ran (about halfway through its round trip) at Redis
        time `ms`. Kept if its round trip was the shortest for half of CLOCK_KEPT (the
        closest reading), or the clock kept disagrees with it by more than that round
        trip allows (another node's clock: a failover)."""
        trip = done - sent
        if trip > CLOCK_TRIP:
            return
        mid = (sent + done) / 2
        kept = self._clocks.get(b)
        if kept is not None:
            kept_ms, kept_at, kept_trip = kept
            told = kept_ms + (mid - kept_at) * 1000
            agrees = abs(told - ms) <= (trip + kept_trip) * 500 + 2
            if trip > kept_trip and mid - kept_at < CLOCK_KEPT / 2 and agrees:
                return
        self._clocks[b] = (ms, mid, trip)

    async def follow(self, games: Sequence[str], channel: bytes) -> list[int]:
        """This instance follows the games: their wake-ups come to `channel` from now
        on (all in one batch). Each game's version now, -1 if there is no such game.
        See lua/follow.lua."""
        call = FollowCall(channel)
        runs = [self.redis.run(call, *call.build(self.keys_of(game))) for game in games]
        return [as_int(reply) for reply in await self.redis.all(runs)]

    async def defer(self, games: list[str], grace_ms: int) -> list[int]:
        """Defer each game's deadlines `grace_ms` from now at least (all in one batch);
        each one's deadline now (0: no game, or over). See lua/defer.lua."""
        calls = [DeferCall(game, grace_ms) for game in games]
        runs = [self.redis.run(call, *call.build(self.keys_of(call.game))) for call in calls]
        return [as_int(reply) for reply in await self.redis.all(runs)]

    def take_moved(self) -> list[tuple[str, int]]:
        """The deadlines the last claim moved for an outage, (game id, its deadline
        now), once: the deadline loop tells their games' sockets (play/timers.py)."""
        moved, self._moved = self._moved, []
        return moved

    async def held(self, games: list[str]) -> list[int]:
        """Each game's deadline floor the last `defer` set (its hash's 'held'), 0 if none
        (all in one batch)."""
        got = await self.redis.all([self.redis.hget(self.keys_of(g).game, "held") for g in games])
        return [int(h or 0) for h in got]

    async def spare(self, game: str, version: int, due_ms: int, grace_ms: int) -> int:
        """Move the game's deadline `due_ms`, due now, `grace_ms` from now, once a turn
        (of `version`): the new deadline, or 0 when it did not move (the game moved on,
        or this turn was spared already). See lua/spare.lua."""
        call = SpareCall(game, version, due_ms, grace_ms)
        return as_int(await self.redis.run(call, *call.build(self.keys_of(game))))

    async def kept_record(self, game: str) -> dict[str, Any] | None:
        """The kept record of a rated game, or None (never rated, or expired)."""
        raw = await self.redis.get(self.keys_of(game).record)
        return unpack_stored(raw) if raw is not None else None

    async def unrated(self, before_ms: int, limit: int) -> list[str]:
        """Rated games that ended before `before_ms` and are still waiting for their update."""
        found: list[str] = []
        for b in range(self.buckets):  # one bucket at a time: each may be on its own node
            rows = await self.redis.zrangebyscore(
                unrated_key(b), "-inf", before_ms, offset=0, count=limit
            )
            found += [r.decode() for r in rows]
        return found

    async def rated(self, games: list[str]) -> None:
        """These games' rating updates are done: they wait no more."""
        by_bucket: dict[int, list[str]] = {}
        for game in games:
            by_bucket.setdefault(self.bucket(game), []).append(game)
        await self.redis.all([self.redis.zrem(unrated_key(b), *gs) for b, gs in by_bucket.items()])

    async def drop_deadline(self, game: str) -> None:
        """Forget the deadline of a finished or expired game."""
        await self.redis.zrem(self.keys_of(game).deadlines, game)

    async def running_games(self) -> int:
        """Unfinished games of the whole service: every one has a deadline until it ends."""
        total = 0
        for b in range(self.buckets):  # one bucket at a time: each may be on its own node
            total += int(await self.redis.zcard(deadlines_key(b)))
        return total

    async def events(self, game: str, since: int = 0, until: int | None = None) -> list[Stored]:
        """The stream's entries after seq `since` (up to seq `until`), in order, as stored."""
        last = "+" if until is None else f"{until}-0"
        rows = await self.redis.xrange(self.keys_of(game).events, f"{since + 1}-0", last)
        return self._entries(rows)

    async def event_times(self, marks: list[tuple[str, int]]) -> list[int | None]:
        """The Redis time of each (game, seq)'s event, None where the stream has none:
        one batch for them all."""
        rows = await self.redis.all(
            [
                self.redis.xrange(self.keys_of(game).events, f"{seq}-0", f"{seq}-0")
                for game, seq in marks
            ]
        )
        return [int(found[0][1][b"t"]) if found else None for found in rows]

    async def event(self, game: str, seq: int) -> Stored | None:
        """The stream's entry of `seq` as stored (its state only if a snapshot is kept there)."""
        entries = await self.events(game, seq - 1, seq)
        return entries[0] if entries else None

    @staticmethod
    def _entries(rows: list[StreamEntry]) -> list[Stored]:
        entries = []
        for entry_id, f in rows:
            seq = int(entry_id.split(b"-")[0])
            snapshot = f.get(b"s")
            state = unpack_stored(snapshot) if snapshot else None  # compressed or not
            auto = f[b"a"] == b"1" if b"a" in f else bool(state and state.get("auto"))
            event = unpack(f[b"e"])
            entries.append(Stored(seq, event, state, auto, int(f[b"d"]), int(f[b"t"])))
        return entries

    async def claim(
        self,
        lease_ms: int,
        outage_ms: int = OUTAGE_MS,
        grace_ms: int = GRACE_MS,
        wait: float = CLAIM_WAIT,
    ) -> list[tuple[str, int]]:
        """Claim the due deadlines of every bucket: (game id, its bucket's Redis time).

        A bucket that nobody claimed for over `outage_ms` (the service was down),
        or whose last claim Redis lost (it came back without its last writes),
        claims nothing this time: its deadlines before now + `grace_ms` move there.

        On a cluster a bucket's claim may stall with its node (a primary that died,
        until its replica takes over): a poll waits `wait` seconds for the buckets
        that have not answered once others have, then returns what it has; a claim
        under way is collected by a later poll, not sent again. One that came back
        over OUTAGE_MS late while others answered stalled with its node: what it
        claimed moves to `grace_ms` from now, as after an outage, for the players
        whose moves stalled with it. The healthy nodes' buckets are claimed on time.
        The deadlines so moved are kept for `take_moved` until the next claim.
        """
        self._moved = []
        for b in range(self.buckets):
            if b not in self._claims:
                call = ClaimCall(
                    b, lease_ms, CLAIM_LIMIT, outage_ms, grace_ms, self._claimed.get(b, 0)
                )
                self._claims[b] = _Claim(asyncio.ensure_future(self._claim_one(call)))
        under_way = dict(self._claims)
        futures = [c.future for c in under_way.values()]
        _, pending = await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
        if pending:
            await asyncio.wait(pending, timeout=wait)
        if not all(c.future.done() for c in under_way.values()):
            for claim in under_way.values():
                claim.waited = claim.waited or not claim.future.done()
        answered = {}  # taken by this poll (not by another one of the same store)
        for b, claim in under_way.items():
            if claim.future.done() and self._claims.get(b) is claim:
                answered[b] = self._claims.pop(b)
        claimed, failed = [], []
        for b, claim in answered.items():
            error = claim.future.exception()
            if error is not None:
                failed.append(error)
                continue
            reply = as_list(claim.future.result())
            self._claimed[b] = as_int(reply[0])
            self._clock(b, as_int(reply[0]), claim.sent, claim.done_at)
            if claim.waited and not as_int(reply[1]) and claim.late() and len(reply) > 2:
                # Its node stalled: what it claimed moves a grace on (claim.lua's outage).
                await self._tell_moved([as_text(gid) for gid in reply[2:]], grace_ms)
                reply = [reply[0], max(1, claim.late_ms()), *reply[2:]]
            claimed.append((b, reply))
        if failed and not claimed:
            raise failed[0]
        # A claim failed, or is still under way (its node stalled): judge the gap next.
        self.claim_failed = bool(failed) or bool(self._claims)
        if failed:
            log.warning(
                "deadline claims failed in %d of %d buckets: %s",
                len(failed),
                self.buckets,
                failed[0],
            )
        replies = [r for _, r in claimed]
        outages = [r for r in replies if as_int(r[1])]
        if outages:
            log.warning(
                "no deadline poll for %.1f s (the service was down, or Redis lost its last "
                "writes): %d deadlines moved to %.1f s from now (buckets %s)",
                max(as_int(r[1]) for r in outages) / 1000,
                sum(len(r) - 2 for r in outages),
                grace_ms / 1000,
                " ".join(str(b) for b, r in claimed if as_int(r[1])),
                extra={"event": "outage"},
            )
            await self._tell_moved([as_text(gid) for r in outages for gid in r[2:]], grace_ms)
        return [(as_text(gid), as_int(r[0])) for r in replies if not as_int(r[1]) for gid in r[2:]]

    async def _tell_moved(self, games: list[str], grace_ms: int) -> None:
        """Write deadlines an outage moved into the games' hashes; each game with a
        deadline goes into `moved`, with its deadline now.

        claim.lua moved them in the deadline sets only, and `synced` and `state` tell
        the hash's. A failure is logged, not raised: the claim itself went through.
        """
        try:
            deadlines = await self.defer(games, grace_ms)
        except UNAVAILABLE as exc:
            log.warning("deadlines moved by an outage not written to their games: %s", exc)
            return
        self._moved += [(g, d) for g, d in zip(games, deadlines, strict=True) if d]

    async def _claim_one(self, call: ClaimCall) -> Reply:
        """One bucket's claim, on the node of its slot (on a cluster, another clock)."""
        return await self.redis.run(call, *call.build())

    # -- players, sessions, time ------------------------------------------------

    async def add_player_game(
        self, players: list[str], game: str, correspondence: bool = False
    ) -> None:
        """Remember the game among each player's unfinished games (and, played days per
        move, among their correspondence games: a cap of their own counts those)."""
        sets = _game_sets(correspondence)
        await self.redis.all([self.redis.sadd(key(p), game) for p in players for key in sets])

    async def remove_player_game(
        self, players: list[str], game: str, correspondence: bool = False
    ) -> None:
        """Forget a finished game for each player (and among their correspondence games)."""
        sets = _game_sets(correspondence)
        await self.redis.all([self.redis.srem(key(p), game) for p in players for key in sets])

    async def correspondence_games(self, player: str) -> list[str]:
        """The player's unfinished correspondence games (maybe a few finished ones)."""
        members = await self.redis.smembers(correspondence_games_key(player))
        return sorted(m.decode() for m in members)

    async def player_games(self, player: str) -> list[str]:
        """The player's unfinished games (maybe a few finished ones not yet forgotten)."""
        members = await self.redis.smembers(player_games_key(player))
        return sorted(m.decode() for m in members)

    async def shared_secret(self, candidate: str) -> str:
        """The secret all instances share: `candidate` if nobody set one before."""
        await self.redis.set(SECRET_KEY, candidate, nx=True)
        value = await self.redis.get(SECRET_KEY)
        return value.decode() if value else candidate

    async def heartbeat(self, instance: str, ttl_ms: int) -> bytes | None:
        """Renew the instance's heartbeat; what it held: b"1", b"dead", or None (lapsed)."""
        return await self.redis.set(instance_key(instance), b"1", px=ttl_ms, get=True)

    async def mark_dead(self, instance: str, ttl_ms: int) -> None:
        """Tell the instance, should it come back, that it was taken for dead."""
        await self.redis.set(instance_key(instance), b"dead", px=ttl_ms)

    async def alive(self, instances: list[str]) -> list[bool]:
        """Which of the instances have a heartbeat (or a "dead" mark) now."""
        return await self.redis.all([self.redis.exists(instance_key(i)) for i in instances])

    # -- per-client limits, shared by every instance ----------------------------

    async def limit(self, call: LimitCall) -> int:
        """Take a token from a rate limit (or give one back): 0, or the ms until one is free."""
        return as_int(await self.redis.run(call, *call.build()))

    async def ping(self) -> None:
        """Whether Redis answers: an error (failures.UNAVAILABLE) raises."""
        await self.redis.ping()

    async def now_ms(self) -> int:
        """Redis' clock, in ms since the epoch."""
        sec, usec = await self.redis.time()
        return int(sec) * 1000 + int(usec) // 1000

    async def publish_player(self, player: str, message: dict[str, Any]) -> None:
        """Send a message to a player's sockets on every instance (once, though resent)."""
        await self.redis.publish(PLAYERS_CHANNEL, self._player_message(player, message))

    async def publish_players(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        """Send each (player, message) like `publish_player`, all at once."""
        publish, blob = self.redis.publish, self._player_message
        await self.redis.all([publish(PLAYERS_CHANNEL, blob(p, m)) for p, m in messages])

    async def publish_seats(self, game: str, messages: list[tuple[str, dict[str, Any]]]) -> None:
        """Send each (player, message) like `publish_players`, in one PUBLISH: for
        players whose sockets are on instances that read it (hub.Hub.heard_player)."""
        together = {"type": "seats", "to": [[p, m] for p, m in messages]}
        await self.redis.publish(PLAYERS_CHANNEL, self._player_message(SEATS + game, together))

    def _player_message(self, player: str, message: dict[str, Any]) -> bytes:
        """[player, message, id]: a resent PUBLISH repeats the id, and the hubs drop it."""
        return pack([player, message, next(self._message_ids)])

    # -- live public games, players online -----------------------------------------

    async def live_add(self, game: str, summary: dict[str, Any], started: int = 0) -> int:
        """List a public game among the live ones; return its start time (Redis ms):
        `started` (its first commit's time), or 0 for Redis' clock now."""
        call = LiveAddCall(game, pack(summary), LIVE_KEPT, started)
        return as_int(await self.redis.run(call, *call.build()))

    async def live_remove(self, games: list[str]) -> None:
        """Forget games that ended (or expired) in the index of live games."""
        if games:
            call = LiveRemoveCall(tuple(games))
            await self.redis.run(call, *call.build())

    async def live_games(self, limit: int) -> list[dict[str, Any]]:
        """The newest `limit` live public games, newest first: their summaries.

        A game in the index whose deadline is gone has ended (every unfinished
        game has one): should the instance that ended it have died before taking
        it out, it is taken out here.
        """
        rows = await self.redis.zrange_scored(LIVE_GAMES_KEY, 0, limit - 1, reverse=True)
        if not rows:
            return []
        ids = [gid.decode() for gid, _ in rows]
        blobs = await self.redis.hmget(LIVE_INFO_KEY, *ids)
        deadlines = await self.redis.all(
            [self.redis.zscore(self.keys_of(gid).deadlines, gid) for gid in ids]
        )
        out, gone = [], []
        for (gid, started), blob, deadline in zip(rows, blobs, deadlines, strict=True):
            if blob is None or deadline is None:
                gone.append(gid.decode())
                continue
            out.append({"game": gid.decode(), **unpack(blob), "started": int(started)})
        await self.live_remove(gone)
        return out

    async def online(self, instance: str, players: int, ttl_ms: int) -> int:
        """Write this instance's count of players; the count of the whole service."""
        call = OnlineCall(instance, players, ttl_ms)
        return as_int(await self.redis.run(call, *call.build()))


def _game_sets(correspondence: bool) -> list[Callable[[str], str]]:
    """The key builders of the sets a player's game is in: its game set, and the
    correspondence games' too for such a game."""
    return [player_games_key, correspondence_games_key] if correspondence else [player_games_key]


class _Claim:
    """A bucket's deadline claim under way (Store.claim)."""

    def __init__(self, future: asyncio.Future[Reply]) -> None:
        self.future = future
        self.sent = time.monotonic()
        self.done_at = 0.0
        self.waited = False  # a poll returned without it, others answered
        future.add_done_callback(self._done)

    def _done(self, future: asyncio.Future[Reply]) -> None:
        self.done_at = time.monotonic()
        if not future.cancelled():
            future.exception()  # retrieved: a later poll reads it, or none does

    def late_ms(self) -> int:
        """How long it took to come back, in ms."""
        return int(((self.done_at or time.monotonic()) - self.sent) * 1000)

    def late(self) -> bool:
        """Whether it came back later than an outage (OUTAGE_MS)."""
        return self.late_ms() > OUTAGE_MS
