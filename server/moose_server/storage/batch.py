"""The commands of one event-loop turn (or of a short window), sent in one round trip.

A move's hot calls (the game read and commit script, event reads, the players'
game sets and messages, the matchmaking and rating scripts) come from many
coroutines at once. redis-py spends several times more CPU on a command sent
alone than on the same command in a batch (``python
bench/bench_redis_clients.py``). A `Batcher` queues what its callers send
during one event-loop turn and sends it in one round trip: one batch in flight
at a time, and what is queued meanwhile goes in the next. On a busy server (a
batch answered within the last `BUSY`, 10 ms), a batch that starts while none
is in flight first waits `WINDOW` (2 ms) for the commands of later turns: below
full speed a turn holds about one command, and a batch of one costs nearly what
one of several does, in the server and in Redis (at 1,000 moves/s: 0.78x the
server's CPU a move, 0.61x Redis', BENCHMARKS.md), for 2 ms more on that round
trip. An idle server's command leaves at once (a person's move or ping on a
quiet server waits for nothing), and so does a batch started by a task that had
a command in the last one (a chain of round trips, each needing the one before).

On one node (``redis://``, ``rediss://``, ``unix://``) the batcher writes each
batch on a redis-py connection of its own, made by the client's pool
(`make_connection`: its options, TLS, protocol and the hiredis packer of
packing.py), outside the pool: the commands packed in one piece
(`pack_commands`), sent (`send_packed_command`) and each reply read
(`read_response`), as Redis gives it (no redis-py reply callbacks: the gateway
decodes each reply itself). redis-py's `Pipeline` did the same with a pool
checkout and release, a retry wrapper, an options dict and a callback lookup a
command: ``python bench/bench_redis_clients.py --batch`` (interleaved, load
0.9-1.3) measured 121.5, 129.1, 182.9 us of CPU a batch of 1, 2, 8 commands
through the pipeline under an `asyncio.timeout`, 59.3, 68.5, 98.7 on this
connection under one, 47.2, 55.8, 87.4 under the watchdog below (0.39x, 0.43x,
0.48x). A `RedisCluster` client's batch goes as its pipeline, which sends each
command to the node of its key's slot; on a cluster the gateway keeps one
batcher per primary (shards.py), so that a dead primary's batch holds up no
other's, each sending its batch on a connection of its own to its primary and
what that node does not answer (a redirect, a lost node) through the cluster
client. The gateway (gateway.py) is its one user. Either way:

- an error reply reaches its caller only (redis-py raises each one as it reads
  it: kept as that command's reply; the connection goes on);
- a batch whose connection failed fails every caller in it with that error,
  after one more try: one node's batch is sent once more on a new connection
  (`resends`, as the pool's retry in store.connect would); a cluster primary's
  lane sends the batch once more through the cluster pipeline (shards.py), and
  the commands a cluster pipeline hands back with a lost node's error are sent
  once more one by one through the cluster client, with its retry;
- a batch that fails before its replies for any other reason (a command that
  cannot be encoded or routed to a node) is sent again one command at a time,
  through the client's pool, so that the error reaches its caller only;
- a script's EVALSHA that finds no script on its node (NOSCRIPT) goes again as
  an EVAL of its source in the next batch, to the node of its keys, as the
  EVALSHA did: redis-py's own fallback loads a script on every primary of a
  cluster, so one node down would fail it everywhere, and a failed-over node
  may never have seen it;
- at most `connections` commands sent one by one are in flight at once (a
  cluster's nodes refuse more than their pool holds; one node's pool waits);
- a batch's round trip is bounded as a whole (`timeout`): a batch that has no
  reply in time fails every caller in it with redis-py's TimeoutError, and its
  connection is closed (its late replies are nobody's: the next batch goes on a
  new one). One watchdog timer bounds batch after batch (`_expire`): set when a
  batch leaves with none set, due at that batch's bound, it then cancels that
  batch if still in flight, or is set again at the bound of the one in flight
  (an `asyncio.timeout` a batch cost 11-13 us more, above). The single-node client
  connection.py gives the batcher has no socket timeout of its own, so redis-py
  does not arm one asyncio timeout per reply either.

Every command may thus run twice: the server sends only commands that are safe
to send twice (store.py's docstring).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, TypeAlias

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import (
    ClusterDownError,
    ConnectionError,
    NoScriptError,
    ResponseError,
    SlotNotCoveredError,
)
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["Arg", "Batcher", "Reply"]

Arg: TypeAlias = "str | bytes | int | float"  # an argument of a command
# A reply as Redis gives it (RESP3 as hiredis parses it): the gateway turns
# redis-py's reply callbacks off for the commands it sends.
Reply: TypeAlias = "bytes | int | float | list[Reply] | dict[bytes, Reply] | None"

# A cluster pipeline's per-command errors that the cluster client retries when
# it sends a command alone (a node lost or failing over): redis-py's own list
# (RedisCluster.ERRORS_ALLOW_RETRY), named here from its public exceptions.
RESENT = (ConnectionError, RedisTimeoutError, ClusterDownError, SlotNotCoveredError)

# Seconds a batch that starts while none is in flight waits for more commands,
# when the last batch was answered less than BUSY seconds ago (module docstring).
WINDOW = 0.002
BUSY = 0.010

# A command, the future of its reply, and for an EVALSHA the script's source.
Queued = tuple[tuple[Arg, ...], "asyncio.Future[Any]", str | None]


class Batcher:
    """Commands of one loop turn in one round trip (see the module docstring)."""

    def __init__(
        self,
        redis: aioredis.Redis | RedisCluster,
        timeout: float = 10.0,
        connections: int = 8,
        window: float = WINDOW,
        busy: float = BUSY,
    ) -> None:
        self.redis = redis
        self.timeout = timeout  # seconds a batch's round trip may take
        self.window = window  # seconds a batch started while busy gathers commands
        self.busy = busy  # seconds after a batch's answer that the batcher counts as busy
        self._answered_at = float("-inf")  # loop time of the last batch's replies
        self._senders: set[asyncio.Task[Any] | None] = set()  # of the queued commands
        self._answered: set[asyncio.Task[Any] | None] = set()  # senders of the last batch
        self.batches = 0  # batches sent: one round trip each (per node on a cluster)
        self._queue: list[Queued] = []
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._gate = asyncio.Semaphore(connections)  # commands sent alone at once
        # One node: the batches' own connection, made as the client's pool makes one
        # (its options, packer, protocol), outside the pool. A cluster: its pipeline.
        self._conn: AbstractConnection | None = None
        if not isinstance(redis, RedisCluster):
            self._conn = redis.connection_pool.make_connection()  # type: ignore[no-untyped-call]
        self._flying = 0  # batches sent so far, the one in flight last
        self._began: float | None = None  # loop time the batch in flight was sent
        self._flier: asyncio.Task[Any] | None = None  # the task awaiting its replies
        self._watch: asyncio.TimerHandle | None = None  # the watchdog (`_expire`)
        self._expired = False  # the watchdog cancelled the batch in flight

    def send(self, args: tuple[Arg, ...], source: str | None = None) -> asyncio.Future[Any]:
        """Queue one command for this turn's batch; the future gets its reply.

        `source`: the command is an EVALSHA of this script, sent as EVAL on NOSCRIPT.
        """
        if self._closed:
            raise ConnectionError("the Redis batcher is closed")
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._queue.append((args, future, source))
        sender = asyncio.current_task(loop)
        self._senders.add(sender)
        if self._task is None:
            # The task's first step runs on the next turn: this turn's commands join.
            chained = sender in self._answered
            busy = loop.time() - self._answered_at < self.busy
            self._task = loop.create_task(self._run(busy and not chained), name="redis batch")
        return future

    def script(
        self, sha: str, source: str, keys: Sequence[Arg], args: Sequence[Arg]
    ) -> asyncio.Future[Any]:
        """EVALSHA a script (`sha` of `source`); EVAL it where the node lacks it (NOSCRIPT)."""
        return self.send(("EVALSHA", sha, len(keys), *keys, *args), source)

    async def aclose(self) -> None:
        """Refuse new commands; wait until those already queued have their replies."""
        self._closed = True
        if self._task is not None:
            await asyncio.wait([self._task])  # a cancelled closer leaves the batch be
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        if self._conn is not None:
            await self._conn.disconnect()

    async def _run(self, gather: bool) -> None:
        """Send the queued commands, batch after batch; `gather`: within the window first."""
        batch: list[Queued] = []
        try:
            if gather and self.window > 0:
                await asyncio.sleep(self.window)
            while self._queue:
                batch, self._queue = self._queue, []
                self._answered, self._senders = self._senders, set()
                self.batches += 1
                replies = await self._replies([args for args, _, _ in batch])
                self._answered_at = asyncio.get_running_loop().time()
                for (args, future, source), reply in zip(batch, replies, strict=True):
                    if future.done():  # its caller was cancelled
                        continue
                    if source is not None and isinstance(reply, NoScriptError):
                        self._queue.append((("EVAL", source, *args[2:]), future, None))
                    elif isinstance(reply, Exception):
                        future.set_exception(reply)
                        future.exception()  # raised where awaited; silent where not
                    else:
                        future.set_result(reply)
        finally:
            self._task = None
            # Only when this task ended early (cancelled, or a bug): nobody waits forever.
            for _, future, _ in [*batch, *self._queue]:
                if not future.done():
                    future.set_exception(ConnectionError("the Redis batch ended early"))
            self._queue = []

    # The replies whose commands are sent again, by `_again`.
    retried: tuple[type[Exception], ...] = RESENT
    # How many times a batch whose connection was lost is sent again on a new one, on
    # the batcher's own connection (a cluster lane sends it through the cluster instead).
    resends = 1

    async def _replies(self, commands: list[tuple[Arg, ...]]) -> list[Any]:
        """Every command's reply or error, in order: the batch in one round trip
        (`_bounded`) within `timeout`; a lost connection's answer from `_lost`, a batch
        that cannot be sent from `_unsendable`, and the replies of `retried` kinds from
        `_again` (a cluster lane overrides them, shards.py)."""
        try:
            replies = await self._bounded(commands)
        except TimeoutError:  # the watchdog's: the connection read from is closed
            return [RedisTimeoutError(f"no reply from Redis in {self.timeout:g} s")] * len(commands)
        except (ConnectionError, RedisTimeoutError) as exc:
            return await self._lost(commands, exc)
        except Exception:
            return await self._unsendable(commands)
        again = [i for i, reply in enumerate(replies) if isinstance(reply, self.retried)]
        if again:
            for i, reply in zip(
                again, await self._again([commands[i] for i in again]), strict=True
            ):
                replies[i] = reply
        return replies

    async def _bounded(self, commands: list[tuple[Arg, ...]]) -> list[Any]:
        """The batch's round trip, cancelled by the watchdog (`_expire`) once it has
        taken `timeout`: then TimeoutError. One watchdog timer serves batch after batch
        (an `asyncio.timeout` each cost 11-13 us more: module docstring)."""
        loop = asyncio.get_running_loop()
        self._began, self._flier = loop.time(), asyncio.current_task(loop)
        self._flying += 1
        if self._watch is None:
            self._watch = loop.call_at(self._began + self.timeout, self._expire, self._flying)
        try:
            if self._conn is None:
                return await self._piped(commands)
            return await self._direct(self._conn, commands)
        except asyncio.CancelledError:
            if self._expired:
                self._expired = False
                task = asyncio.current_task()
                if task is not None and task.uncancel() == 0:
                    raise TimeoutError from None
            raise
        finally:
            self._began, self._flier, self._expired = None, None, False

    def _expire(self, batch: int) -> None:
        """The watchdog: time out batch number `batch` if it is still in flight, else
        watch the batch now in flight until its own bound."""
        self._watch = None
        if self._began is None or self._flier is None:
            return  # none in flight: the next one sets the watchdog again
        if self._flying == batch:
            self._expired = True
            self._flier.cancel()
            return
        loop = asyncio.get_running_loop()
        self._watch = loop.call_at(self._began + self.timeout, self._expire, self._flying)

    async def _direct(self, conn: AbstractConnection, commands: list[tuple[Arg, ...]]) -> list[Any]:
        """The batch on the batcher's own connection, through redis-py's connection
        methods: packed in one piece (packing.py), sent, each reply read (an error reply
        as a value); on a lost connection, sent `resends` times more on a new one."""
        packed = conn.pack_commands(commands)  # raises before sending: `_unsendable`
        tries = self.resends
        while True:
            try:
                await conn.send_packed_command(packed, check_health=False)
                replies: list[Any] = []
                for _ in commands:
                    try:
                        replies.append(await conn.read_response())
                    except ResponseError as exc:  # an error reply: the connection is fine
                        replies.append(exc)
                return replies
            except ConnectionError:
                await conn.disconnect(nowait=True)
                if tries <= 0:
                    raise
                tries -= 1
            except BaseException:
                # redis-py has closed it already (a timeout, a cancellation, a reply it
                # could not parse); closed it must be: later replies are nobody's.
                await conn.disconnect(nowait=True)
                raise

    async def _piped(self, commands: list[tuple[Arg, ...]]) -> list[Any]:
        """The batch as one redis-py pipeline (a cluster client's, routing each command
        to its node), with the client's own retry."""
        pipe = self.redis.pipeline(transaction=False)
        for args in commands:
            pipe.execute_command(*args)
        return list(await pipe.execute(raise_on_error=False))

    async def _lost(self, commands: list[tuple[Arg, ...]], exc: Exception) -> list[Any]:
        """The replies of a batch whose connection was lost: its error, each."""
        return [exc] * len(commands)

    async def _unsendable(self, commands: list[tuple[Arg, ...]]) -> list[Any]:
        """The replies of a batch that could not be sent (a command redis-py cannot
        encode): each command alone, so that only that one fails."""
        return await self._alone(commands)

    async def _again(self, commands: list[tuple[Arg, ...]]) -> list[Any]:
        """The replies of commands whose first reply was of a `retried` kind (a cluster
        pipeline's lost node): each alone, with the client's retries."""
        return await self._alone(commands)

    async def _alone(self, commands: list[tuple[Arg, ...]]) -> list[Any]:
        """Each command sent by itself through the client: its reply or its error."""
        try:
            async with asyncio.timeout(self.timeout):
                got = await asyncio.gather(
                    *(self._one(args) for args in commands), return_exceptions=True
                )
        except TimeoutError:
            return [RedisTimeoutError(f"no reply from Redis in {self.timeout:g} s")] * len(commands)
        for reply in got:
            if isinstance(reply, BaseException) and not isinstance(reply, Exception):
                raise reply  # a cancellation
        return got

    async def _one(self, args: tuple[Arg, ...]) -> Any:
        async with self._gate:
            return await self.redis.execute_command(*args)
