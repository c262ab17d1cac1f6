"""The hiredis packer of the server's Redis connections (storage/packing.py).

It must send the very bytes redis-py's own packer does, for every kind of
argument the server sends, and work over TCP and unix sockets on a real Redis.
"""

from __future__ import annotations

from typing import Any

import pytest
from redis.asyncio.connection import Connection
from redis.exceptions import DataError

from moose_server.storage.codec import pack
from moose_server.storage.keys import GameKeys, move_field
from moose_server.storage.packing import packing
from moose_server.storage.scripts import CommitCall
from moose_server.storage.store import connect


def _commit_command() -> tuple[Any, ...]:
    call = CommitCall(
        game="g_1",
        expected=3,
        move_field=move_field("p_1", "m-7"),
        data=pack({"state": "x" * 2000}),
        events=[(pack({"kind": "move"}), b"s")],
        deadline_ms=30_000,
        channel="moose:wake",
    )
    keys, args = call.build(GameKeys("g_1", "b1"))
    return ("EVALSHA", "f" * 40, len(keys), *keys, *args)


COMMANDS = [
    _commit_command(),
    ("SET", "k", "é ☃", "EX", 10),
    ("ZADD", "k", 1.5, "m", 1e20, "n", 0.1, "o"),
    ("HSET", b"k", bytearray(b"f"), memoryview(b"v"), -3, 10**20),
    ("CLIENT SETNAME", "moose"),
    (b"CLIENT SETNAME", "moose"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: str(a[0]))
def test_hiredis_packs_the_same_bytes_as_redis_py(args: tuple[Any, ...]) -> None:
    ours, theirs = packing(Connection)(), Connection()
    assert b"".join(ours.pack_command(*args)) == b"".join(theirs.pack_command(*args))
    many = [args, ("GET", "k"), args]
    assert b"".join(ours.pack_commands(many)) == b"".join(theirs.pack_commands(many))


def test_what_hiredis_cannot_pack_gets_redis_pys_error() -> None:
    with pytest.raises(DataError):
        packing(Connection)().pack_command("HSET", "k", "f", True)


async def test_the_servers_client_packs_with_hiredis_over_tcp_and_unix(
    private_redis: Any,
) -> None:
    redis = connect(private_redis.url, 4)
    try:
        assert redis.connection_pool.connection_class.__name__.startswith("Hiredis")
        async with redis.pipeline(transaction=False) as pipe:
            pipe.set("k", "é ☃").hset("h", mapping={"a": 1.5, "b": b"\x00\xff"}).get("k")
            _, _, got = await pipe.execute()
        assert got == "é ☃".encode()
        assert await redis.hgetall("h") == {b"a": b"1.5", b"b": b"\x00\xff"}
    finally:
        await redis.aclose()
