"""The one door to Redis: every command, several commands in one round trip, every script.

A feature's store is given a `Gateway` (app.py opens one per instance with
connection.open_redis) and talks to Redis through it only; nothing outside
storage/ imports redis-py. What the gateway does for every call alike:

- **one round trip per loop turn**: each call is queued on its `Batcher`
  (batch.py) the moment it is made, and the calls of one event-loop turn go in
  one round trip (on a cluster, one per primary: shards.py). A call returns a
  `Pending`, awaited when its reply is wanted:
  ``a, b = gw.hget(k, f), gw.zscore(z, m)`` then ``await a``, ``await b`` costs
  one round trip; `all` awaits a list of them;
- **one timeout and retry rule**: a batch's round trip is bounded as a whole
  (`timeout`, 10 s), and a command whose connection was lost is sent once more
  (batch.py says how on one node and on a cluster), so every command the server
  sends is one that is safe to send twice (store.py's docstring);
- **one place that knows the topology**: the client it is given talks to one
  node (``redis://``, ``rediss://`` for TLS, ``unix://``) or a cluster;
  connection.py picks it, and nothing else needs to know;
- **scripts registered once**: `run(call, keys, argv)` sends EVALSHA of the
  script of the call's type (its ``SCRIPT``, the source storage/scripts.py
  finds), its SHA1 worked out once per type, and EVAL where the node lacks it.

The replies are Redis' own (RESP3, redis-py's protocol, as hiredis parses it:
bytes, int, float, None, a list or a map of them; RESP2 where a URL asks for
it): redis-py's reply callbacks are turned off for the commands sent here, on
one node and a cluster alike, and each typed method below decodes its reply
itself, whichever of the two protocols gave it (storage/codec.py's `as_text`,
`as_int` and `as_list` decode a script's).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import RedisCluster

from moose_server.storage.batch import Arg, Batcher, Reply
from moose_server.storage.scripts import source
from moose_server.storage.shards import Shards

__all__ = ["Arg", "Gateway", "Pending", "PubSubSource", "Reply", "Scripted", "StreamEntry"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
StreamEntry = tuple[bytes, dict[bytes, bytes]]  # an entry's id and fields
Decode = Callable[[Any], Any]  # a reply as Redis gave it -> what a typed method returns

# Every command the gateway sends: redis-py parses none of their replies.
RAW_REPLIES = frozenset(
    {"DEL", "EVAL", "EVALSHA", "EXISTS", "EXPIRE", "GET", "HDEL", "HEXISTS", "HGET", "HGETALL"}
    | {"HINCRBY", "HLEN", "HMGET", "HSCAN", "HSET", "LRANGE", "PEXPIRE", "PING", "PUBLISH"}
    | {"SADD", "SET", "SMEMBERS", "SREM", "TIME", "XADD", "XRANGE", "XREVRANGE", "ZADD"}
    | {"ZCARD", "ZINCRBY", "ZRANGE", "ZRANGEBYSCORE", "ZREM", "ZREMRANGEBYRANK", "ZREVRANGE"}
    | {"ZREVRANK", "ZSCORE", "XACK", "XAUTOCLAIM", "XGROUP", "XREADGROUP"}
)


class Scripted(Protocol):
    """A typed script call (a feature's calls.py): the name of its lua/<SCRIPT>.lua."""

    SCRIPT: ClassVar[str]


class PubSubSource(Protocol):
    """What the hub subscribes through: a new redis-py `PubSub` per (re)connection."""

    def pubsub(self) -> PubSub:
        """A PubSub on a connection of its own."""
        ...

    async def aclose(self) -> None:
        """Close every connection."""
        ...


class Pending(Generic[T_co]):
    """A call already queued for this turn's round trip: await it for its decoded reply."""

    __slots__ = ("_decode", "_future")

    def __init__(self, future: asyncio.Future[Any], decode: Decode | None) -> None:
        self._future = future
        self._decode = decode

    def __await__(self) -> Generator[Any, None, T_co]:
        reply = yield from self._future.__await__()
        return cast(T_co, reply if self._decode is None else self._decode(reply))


class Gateway:
    """Commands, round trips and scripts of one instance (see the module docstring)."""

    def __init__(
        self,
        client: aioredis.Redis | RedisCluster,
        pubsub: PubSubSource,
        *,
        cluster: bool,
        timeout: float = 10.0,
        connections: int = 8,
    ) -> None:
        for command in RAW_REPLIES:
            client.set_response_callback(command, _raw)
        self.client = client  # redis-py's: for tests that look past the gateway
        self.pubsub = pubsub
        self.cluster = cluster
        # On a cluster, one batch per primary (shards.py): a dead one stalls its slots only.
        self.batch: Batcher | Shards = (
            Shards(client, timeout, connections)
            if isinstance(client, RedisCluster)
            else Batcher(client, timeout, connections)
        )
        self._shas: dict[type[Scripted], tuple[str, str]] = {}

    # -- the raw path ---------------------------------------------------------

    def call(self, *args: Arg) -> Pending[Reply]:
        """One command, queued for this turn's round trip: its reply as Redis gave it."""
        return Pending(self.batch.send(args), None)

    def run(self, call: Scripted, keys: Sequence[str], argv: Sequence[Arg]) -> Pending[Reply]:
        """The script of `call`'s type on these KEYS and ARGV (EVALSHA, EVAL on NOSCRIPT)."""
        kind = type(call)
        found = self._shas.get(kind)
        if found is None:
            text = source(call.SCRIPT)
            found = self._shas[kind] = (hashlib.sha1(text.encode()).hexdigest(), text)
        return Pending(self.batch.script(*found, keys, argv), None)

    @staticmethod
    async def all(pending: Iterable[Pending[T]]) -> list[T]:
        """Each reply, in order: the first error raises once every reply is in."""
        calls = list(pending)
        replies: list[T] = []
        error: BaseException | None = None
        for call in calls:
            try:
                replies.append(await call)
            except Exception as exc:  # the others' replies are still awaited
                error = error or exc
        if error is not None:
            raise error
        return replies

    @property
    def batches(self) -> int:
        """Round trips so far (one batch each; one per node on a cluster)."""
        return self.batch.batches

    async def aclose(self) -> None:
        """Wait for the calls under way; close every connection."""
        await self.batch.aclose()
        await self.pubsub.aclose()
        await self.client.aclose()

    # -- strings, keys, server ------------------------------------------------

    def get(self, key: str) -> Pending[bytes | None]:
        """GET: the value, or None."""
        return self._send(("GET", key), None)

    def set(
        self, key: str, value: Arg, *, px: int | None = None, nx: bool = False, get: bool = False
    ) -> Pending[bytes | None]:
        """SET [PX ms] [NX] [GET]: b"OK" or the old value (GET); None if NX kept the old."""
        args: tuple[Arg, ...] = ("SET", key, value)
        if px is not None:
            args += ("PX", px)
        if nx:
            args += ("NX",)
        if get:
            args += ("GET",)
        return self._send(args, None)

    def delete(self, *keys: str) -> Pending[int]:
        """DEL: how many of the keys were there."""
        return self._send(("DEL", *keys), None)

    def exists(self, key: str) -> Pending[bool]:
        """EXISTS of one key."""
        return self._send(("EXISTS", key), bool)

    def expire(self, key: str, seconds: int) -> Pending[bool]:
        """EXPIRE: whether the key was there."""
        return self._send(("EXPIRE", key, seconds), bool)

    def pexpire(self, key: str, ms: int) -> Pending[bool]:
        """PEXPIRE: whether the key was there."""
        return self._send(("PEXPIRE", key, ms), bool)

    def pttl(self, key: str) -> Pending[int]:
        """PTTL: ms left; -1 for a key with no expiry, -2 for no key."""
        return self._send(("PTTL", key), None)

    def publish(self, channel: str | bytes, message: bytes) -> Pending[int]:
        """PUBLISH: how many subscribers heard it (on this node)."""
        return self._send(("PUBLISH", channel, message), None)

    def time(self) -> Pending[tuple[int, int]]:
        """TIME: Redis' clock, (seconds, microseconds)."""
        return self._send(("TIME",), _pair_of_ints)

    def ping(self) -> Pending[Reply]:
        """PING (an error raises)."""
        return self._send(("PING",), None)

    # -- hashes -------------------------------------------------------------------

    def hget(self, key: str, field: Arg) -> Pending[bytes | None]:
        """HGET: the field's value, or None."""
        return self._send(("HGET", key, field), None)

    def hmget(self, key: str, *fields: Arg) -> Pending[list[bytes | None]]:
        """HMGET: each field's value, or None."""
        return self._send(("HMGET", key, *fields), None)

    def hgetall(self, key: str) -> Pending[dict[bytes, bytes]]:
        """HGETALL: field -> value."""
        return self._send(("HGETALL", key), _pairs)

    def hset(self, key: str, mapping: Mapping[str, Arg]) -> Pending[int]:
        """HSET: the fields that are new."""
        return self._send(("HSET", key, *(x for item in mapping.items() for x in item)), None)

    def hdel(self, key: str, *fields: Arg) -> Pending[int]:
        """HDEL: how many of the fields were there."""
        return self._send(("HDEL", key, *fields), None)

    def hexists(self, key: str, field: Arg) -> Pending[bool]:
        """HEXISTS."""
        return self._send(("HEXISTS", key, field), bool)

    def hlen(self, key: str) -> Pending[int]:
        """HLEN."""
        return self._send(("HLEN", key), None)

    def hincrby(self, key: str, field: Arg, by: int) -> Pending[int]:
        """HINCRBY: the new value."""
        return self._send(("HINCRBY", key, field, by), None)

    def hscan(self, key: str, cursor: int, count: int) -> Pending[tuple[int, dict[bytes, bytes]]]:
        """HSCAN ... COUNT: the next cursor (0: done) and the fields of this step."""
        return self._send(("HSCAN", key, cursor, "COUNT", count), _scan)

    # -- sets and sorted sets -----------------------------------------------------

    def smembers(self, key: str) -> Pending[list[bytes]]:
        """SMEMBERS."""
        return self._send(("SMEMBERS", key), _members)

    def sdiff(self, key: str, *others: str) -> Pending[list[bytes]]:
        """SDIFF: the members of `key` in none of `others` (keys of one slot)."""
        return self._send(("SDIFF", key, *others), _members)

    def sadd(self, key: str, *members: Arg) -> Pending[int]:
        """SADD: the members that are new."""
        return self._send(("SADD", key, *members), None)

    def srem(self, key: str, *members: Arg) -> Pending[int]:
        """SREM: the members that were there."""
        return self._send(("SREM", key, *members), None)

    def zadd(self, key: str, mapping: Mapping[str, float]) -> Pending[int]:
        """ZADD score member ...: the members that are new."""
        return self._send(("ZADD", key, *(x for m, s in mapping.items() for x in (s, m))), None)

    def zrem(self, key: str, *members: Arg) -> Pending[int]:
        """ZREM: the members that were there."""
        return self._send(("ZREM", key, *members), None)

    def zincrby(self, key: str, by: float, member: Arg) -> Pending[float]:
        """ZINCRBY: the member's new score."""
        return self._send(("ZINCRBY", key, by, member), float)

    def zremrangebyrank(self, key: str, start: int, stop: int) -> Pending[int]:
        """ZREMRANGEBYRANK: how many went."""
        return self._send(("ZREMRANGEBYRANK", key, start, stop), None)

    def zcard(self, key: str) -> Pending[int]:
        """ZCARD."""
        return self._send(("ZCARD", key), None)

    def zscore(self, key: str, member: Arg) -> Pending[float | None]:
        """ZSCORE: the member's score, or None."""
        return self._send(("ZSCORE", key, member), _float_or_none)

    def zrevrank(self, key: str, member: Arg) -> Pending[int | None]:
        """ZREVRANK: the member's rank from the top, or None."""
        return self._send(("ZREVRANK", key, member), None)

    def zrevrange(self, key: str, start: int, stop: int) -> Pending[list[bytes]]:
        """ZREVRANGE: the members, highest score first."""
        return self._send(("ZREVRANGE", key, start, stop), None)

    def zrange_scored(
        self, key: str, start: int, stop: int, *, reverse: bool = False
    ) -> Pending[list[tuple[bytes, float]]]:
        """ZRANGE (ZREVRANGE if `reverse`) ... WITHSCORES: (member, score) pairs."""
        name = "ZREVRANGE" if reverse else "ZRANGE"
        return self._send((name, key, start, stop, "WITHSCORES"), _scored)

    def zrangebyscore(
        self, key: str, low: Arg, high: Arg, *, offset: int, count: int
    ) -> Pending[list[bytes]]:
        """ZRANGEBYSCORE ... LIMIT offset count."""
        return self._send(("ZRANGEBYSCORE", key, low, high, "LIMIT", offset, count), None)

    # -- lists and streams --------------------------------------------------------

    def lrange(self, key: str, start: int, stop: int) -> Pending[list[bytes]]:
        """LRANGE."""
        return self._send(("LRANGE", key, start, stop), None)

    def xrange(
        self, key: str, low: Arg, high: Arg, count: int | None = None
    ) -> Pending[list[StreamEntry]]:
        """XRANGE [COUNT n]: the entries, oldest first."""
        more: tuple[Arg, ...] = () if count is None else ("COUNT", count)
        return self._send(("XRANGE", key, low, high, *more), _entries)

    def xrevrange(self, key: str, count: int) -> Pending[list[StreamEntry]]:
        """XREVRANGE + - COUNT n: the newest entries, newest first."""
        return self._send(("XREVRANGE", key, "+", "-", "COUNT", count), _entries)

    def xadd(self, key: str, fields: Mapping[str, Arg], *, maxlen: int) -> Pending[bytes]:
        """XADD key MAXLEN ~ n * ...: the new entry's id."""
        flat = (x for item in fields.items() for x in item)
        return self._send(("XADD", key, "MAXLEN", "~", maxlen, "*", *flat), None)

    def xgroup_create(self, key: str, group: str) -> Pending[bool]:
        """XGROUP CREATE key group 0 MKSTREAM: False when the group is there already."""
        return self._send(("XGROUP", "CREATE", key, group, "0", "MKSTREAM"), None)

    def xreadgroup(
        self, key: str, group: str, consumer: str, count: int
    ) -> Pending[list[StreamEntry]]:
        """XREADGROUP GROUP g c COUNT n STREAMS key > (never blocks): entries new to the group."""
        args = ("XREADGROUP", "GROUP", group, consumer, "COUNT", count, "STREAMS", key, ">")
        return self._send(args, _group_entries)

    def xautoclaim(
        self, key: str, group: str, consumer: str, idle_ms: int, count: int
    ) -> Pending[list[StreamEntry]]:
        """XAUTOCLAIM key g c idle 0 COUNT n: entries pending longer than `idle_ms`, now ours."""
        args = ("XAUTOCLAIM", key, group, consumer, idle_ms, "0", "COUNT", count)
        return self._send(args, _claimed)

    def xack(self, key: str, group: str, *ids: Arg) -> Pending[int]:
        """XACK: how many of the entries were pending."""
        return self._send(("XACK", key, group, *ids), None)

    def _send(self, args: tuple[Arg, ...], decode: Decode | None) -> Pending[Any]:
        return Pending(self.batch.send(args), decode)


def _raw(response: Any, **options: Any) -> Any:
    return response


def _pairs(reply: dict[bytes, bytes] | list[bytes]) -> dict[bytes, bytes]:
    """A map: RESP3 gives it as one, RESP2 as an array of fields and values."""
    if isinstance(reply, dict):
        return reply
    return dict(zip(reply[::2], reply[1::2], strict=True))


def _members(reply: set[bytes] | list[bytes]) -> list[bytes]:
    return list(reply)


def _pair_of_ints(reply: list[bytes]) -> tuple[int, int]:
    return int(reply[0]), int(reply[1])


def _float_or_none(reply: bytes | float | None) -> float | None:
    return None if reply is None else float(reply)


def _scored(reply: list[Any]) -> list[tuple[bytes, float]]:
    """(member, score) pairs: RESP3 gives them as pairs, RESP2 one after the other."""
    if reply and isinstance(reply[0], list):
        return [(member, float(score)) for member, score in reply]
    return [(member, float(score)) for member, score in zip(reply[::2], reply[1::2], strict=True)]


def _scan(reply: list[Any]) -> tuple[int, dict[bytes, bytes]]:
    return int(reply[0]), _pairs(reply[1])


def _entries(rows: list[list[Any]]) -> list[StreamEntry]:
    return [(entry_id, _pairs(fields)) for entry_id, fields in rows]


def _group_entries(reply: Any) -> list[StreamEntry]:
    """XREADGROUP's one stream: RESP3 gives a map, RESP2 a list of [key, entries]."""
    if not reply:
        return []
    rows = next(iter(reply.values())) if isinstance(reply, dict) else reply[0][1]
    # An entry deleted while pending comes back with no fields.
    return [(entry_id, _pairs(fields)) for entry_id, fields in rows if fields is not None]


def _claimed(reply: list[Any]) -> list[StreamEntry]:
    """XAUTOCLAIM: [next cursor, entries, deleted ids]: the entries still there."""
    return [(entry_id, _pairs(fields)) for entry_id, fields in reply[1] if fields is not None]
