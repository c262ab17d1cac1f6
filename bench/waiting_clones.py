"""Many waiting correspondence games, made fast: one real game's keys cloned.

bench/bench_waiting_scale.py plays one correspondence game through a real
`moose serve` and leaves it waiting for a move; `read_template` reads its keys,
and `clone` writes N copies in pipelines: each copy has its own game id (so its
own bucket), its own two players (their game sets and correspondence game sets),
its own deadline in its bucket's deadline set (hours to a day ahead: none falls
due while the bench runs) and the template's data with those players in it, as
stored (compressed or not). The stream is written as the server left it: a
stream built by XADD keeps room for up to 4 KB of entries to come in its newest
node (Valkey 9), one built by RESTORE does not. A server that compacts a waiting
game's stream (lua/commit.lua) leaves the latter: then the clones are restored
from the template's DUMP; else their entries are written with XADD, as the
commits wrote them. `drop` deletes them all again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from moose_server.storage.codec import pack, pack_compressed, unpack_stored
from moose_server.storage.keys import (
    GameKeys,
    bucket,
    correspondence_games_key,
    deadlines_key,
    player_games_key,
)

BATCH = 2000  # games a pipeline writes at a time
AHEAD_MS = 3_600_000  # the first clone's deadline is an hour ahead...
SPREAD_MS = 86_400_000  # ...the others spread over the next day


@dataclass(frozen=True)
class Template:
    """One waiting game's keys as read: the hash's fields, its data, its stream dumped."""

    fields: dict[bytes, bytes]  # the game hash but `data`, `dl` and `w` (followers)
    data: dict[str, Any]  # the data map, unpacked
    compressed: bool  # whether the data was stored compressed
    stream: list[tuple[bytes, dict[bytes, bytes]]]  # the events stream's entries
    dump: bytes | None  # its DUMP, if the server left it compact (no room kept)

    @property
    def players(self) -> list[str]:
        """The template's players, seat by seat."""
        return list(self.data["players"])


async def read_template(redis: Any, keys: GameKeys) -> Template:
    """The keys of the waiting game `keys` names."""
    got = await redis.hgetall(keys.game)
    blob = got.pop(b"data")
    for field in (b"dl", b"w"):
        got.pop(field, None)
    stream, dump = await redis.xrange(keys.events), await redis.dump(keys.events)
    scratch = keys.events[:-1] + "~"  # as long a name: MEMORY USAGE counts it
    await redis.restore(scratch, 0, dump)
    compact = await redis.memory_usage(scratch, samples=0)
    left = await redis.memory_usage(keys.events, samples=0)
    await redis.unlink(scratch)
    kept = dump if abs(left - compact) <= 64 else None  # an allocation's rounding
    return Template(got, unpack_stored(blob), blob[:1] == b"\x78", stream, kept)


def clone_id(n: int) -> str:
    """The id of clone `n` (as long as a server's game ids: "g_" and 10 characters)."""
    return f"g_w{n:09d}"


def clone_players(n: int, seats: int) -> list[str]:
    """The players of clone `n`, seat by seat."""
    return [f"p_w{n:09d}{k}" for k in range(seats)]


def _clone_fields(t: Template, players: list[str]) -> dict[bytes, bytes]:
    """The template's hash fields with its players' move ids made the clone's players'."""
    swap = {f"m:{p}:".encode(): f"m:{q}:".encode() for p, q in zip(t.players, players, strict=True)}
    out = {}
    for field, value in t.fields.items():
        for old, new in swap.items():
            if field.startswith(old):
                field = new + field[len(old) :]
                break
        out[field] = value
    return out


async def clone(
    redis: Any,
    t: Template,
    numbers: Sequence[int],
    buckets: int,
    now_ms: int,
    seated: dict[int, str] | None = None,
) -> None:
    """Write the clones `numbers` of `t` (see the module docstring).

    `seated`: clone number -> a player who takes seat 0 of that clone instead of
    its own (a real player with many waiting games)."""
    seated = seated or {}
    for start in range(0, len(numbers), BATCH):
        async with redis.pipeline(transaction=False) as pipe:
            for n in numbers[start : start + BATCH]:
                gid, players = clone_id(n), clone_players(n, len(t.players))
                if n in seated:
                    players[0] = seated[n]
                keys = GameKeys.of(gid, buckets)
                data = {**t.data, "players": players}
                blob = pack_compressed(data) if t.compressed else pack(data)
                deadline = now_ms + AHEAD_MS + (n * 7919 % 86_400) * (SPREAD_MS // 86_400)
                mapping = {**_clone_fields(t, players), b"data": blob, b"dl": deadline}
                pipe.hset(keys.game, mapping=mapping)
                if t.dump is not None:
                    pipe.restore(keys.events, 0, t.dump)
                else:
                    for entry_id, fields in t.stream:
                        pipe.xadd(keys.events, fields, id=entry_id)
                pipe.zadd(deadlines_key(bucket(gid, buckets)), {gid: deadline})
                for p in players:
                    pipe.sadd(player_games_key(p), gid)
                    pipe.sadd(correspondence_games_key(p), gid)
            await pipe.execute()


async def drop(
    redis: Any, seats: int, numbers: Sequence[int], buckets: int, seated: dict[int, str]
) -> None:
    """Delete the clones `numbers` again (and their players' sets; a seated real player
    only loses these games)."""
    for start in range(0, len(numbers), BATCH):
        async with redis.pipeline(transaction=False) as pipe:
            for n in numbers[start : start + BATCH]:
                gid = clone_id(n)
                keys = GameKeys.of(gid, buckets)
                pipe.unlink(keys.game, keys.events)
                pipe.zrem(deadlines_key(bucket(gid, buckets)), gid)
                for k, p in enumerate(clone_players(n, seats)):
                    if k == 0 and n in seated:
                        pipe.srem(player_games_key(seated[n]), gid)
                        pipe.srem(correspondence_games_key(seated[n]), gid)
                    else:
                        pipe.unlink(player_games_key(p), correspondence_games_key(p))
            await pipe.execute()


async def key_sizes(redis: Any, n: int, seats: int, buckets: int) -> dict[str, int]:
    """MEMORY USAGE of each kind of key of clone `n` (one player's sets)."""
    gid, player = clone_id(n), clone_players(n, seats)[1]
    keys = GameKeys.of(gid, buckets)
    names = {
        "game hash": keys.game,
        "events stream": keys.events,
        "player's game set": player_games_key(player),
        "player's corr. set": correspondence_games_key(player),
    }
    return {what: int(await redis.memory_usage(k, samples=0) or 0) for what, k in names.items()}
