"""Redis memory one abusive client address can take: follows, blocks, chat, arenas.

    python bench/bench_abuse_memory.py

Fills a private valkey-server through the server's own stores and scripts (the
ones `moose serve` runs) up to each cap, with the longest names and chat lines
allowed, and reads MEMORY USAGE (SAMPLES 0: every element counted) of every key
written. Printed: bytes per entry at the cap, and what one address can add
under its hourly budget (settings' defaults), which deploy/README.md states.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from moose_server.accounts.names import MAX_NAME
from moose_server.arenas.calls import ArenaMemberCall
from moose_server.arenas.requests import address_digest
from moose_server.arenas.runner import new_arena
from moose_server.arenas.store import ArenaStore
from moose_server.settings import Settings
from moose_server.social.blocks import Blocks
from moose_server.social.chat import MAX_TEXT
from moose_server.social.chat_store import ChatStore
from moose_server.social.follows import Follows
from moose_server.storage.codec import as_text
from moose_server.storage.connection import open_redis
from moose_server.storage.embedded import EmbeddedRedis
from moose_server.storage.gateway import Gateway
from moose_server.storage.keys import ArenaKeys, blocks_key, followers_key, follows_key

NAME = "W" * MAX_NAME
S = Settings()


def player(n: int) -> str:
    return f"p_{n:010x}"


async def usage(redis: Gateway, keys: list[str]) -> int:
    """MEMORY USAGE of the keys, every element counted (redis-py's client, past the
    gateway: no store reads memory)."""
    total = 0
    for key in keys:
        total += int(await redis.client.memory_usage(key, samples=0) or 0)
    return total


async def follows(redis: Gateway) -> tuple[int, int]:
    """Bytes per follow: the follower's entry and a new followers hash of the followed,
    with one follower filling its list to the cap and every followed player new."""
    store = Follows(redis, None, S, None)  # type: ignore[arg-type]
    me = player(1)
    targets = [player(1000 + n) for n in range(S.follows_max)]
    for whom in targets:
        await store.follow(me, NAME, whom, NAME)
    mine = await usage(redis, [follows_key(me)])
    theirs = await usage(redis, [followers_key(w) for w in targets])
    return mine // len(targets), theirs // len(targets)


async def blocks(redis: Gateway) -> int:
    """Bytes per block, one blocker's list filled to the cap."""
    store = Blocks(redis, S.blocks_max)
    me = player(2)
    for n in range(S.blocks_max):
        await store.block(me, player(5000 + n), NAME)
    return await usage(redis, [blocks_key(me)]) // S.blocks_max


async def chat(redis: Gateway) -> tuple[int, int]:
    """Bytes of one room filled to `chat_kept` lines of MAX_TEXT four-byte characters
    (and of one line alone)."""
    store = ChatStore(redis, S.buckets, S.chat_kept, S.game_ttl * 1000)
    text = "\U0001f98c" * MAX_TEXT
    line = {"player": player(3), "name": NAME, "seat": 5, "text": text, "time": 1764424800000}
    await store.say("T0T0T0T0", "table", line)
    one = await usage(redis, [as_text(k) for k in await redis.client.keys("*T0T0T0T0*")])
    for _ in range(S.chat_kept + 20):  # past the cap: the oldest go
        await store.say("T1T1T1T1", "table", line)
    return one, await usage(redis, [as_text(k) for k in await redis.client.keys("*T1T1T1T1*")])


async def arenas(redis: Gateway) -> int:
    """Bytes per arena member (standings, members, waiting line) of one address's hour."""
    store = ArenaStore(redis)
    await store.create(new_arena("Bench", "people", 60, (2, 6), arena_id="a_mem"))
    keys = ArenaKeys.of("a_mem")
    parts = [keys.members, keys.points, keys.waiting]
    before = await usage(redis, parts)
    count = S.arena_joins_per_hour
    for n in range(count):
        member = {"name": NAME, "min": 2, "max": 6, "bot": False, "r": 9999}
        member["ip"] = address_digest("198.51.100.7")
        call = ArenaMemberCall("a_mem", player(9000 + n), "join", json.dumps(member))
        await store.member(call)
    return (await usage(redis, parts) - before) // count


async def main() -> None:
    with (
        tempfile.TemporaryDirectory(prefix="mmem") as tmp,
        EmbeddedRedis(Path(tmp), appendonly=False) as server,
    ):
        redis = await open_redis(server.url, 4)
        try:
            mine, theirs = await follows(redis)
            blocked = await blocks(redis)
            line, room = await chat(redis)
            member = await arenas(redis)
        finally:
            await redis.aclose()
    adds = S.social_adds_per_hour
    chat_hour = S.chat_burst + 3600 / S.chat_interval
    print(f"follow: {mine} B in the follower's list + {theirs} B as a new followers list")
    print(f"block: {blocked} B an entry")
    print(
        f"follows and blocks: {adds} an address an hour, at most "
        f"{adds * (mine + theirs) / 1024:.1f} KiB an hour, kept 180 days"
    )
    print(
        f"chat: a room of one line {line} B; full ({S.chat_kept} lines of {MAX_TEXT} "
        f"four-byte characters) {room / 1024:.1f} KiB; one address says {chat_hour:.0f} "
        f"lines an hour at most, {chat_hour * room / S.chat_kept / 1024:.0f} KiB"
    )
    print(
        f"arena member: {member} B; {S.arena_joins_per_hour} new members an address an hour, "
        f"{S.arena_joins_per_hour * member / 1024:.1f} KiB"
    )


if __name__ == "__main__":
    asyncio.run(main())
