"""redis-py's asyncio connections, with the command packer of its sync ones (hiredis).

redis-py's sync `Connection` packs commands with `hiredis.pack_command` when
hiredis is installed; its asyncio `Connection` always packs them in pure Python
(`AbstractConnection.pack_command`, a loop over the arguments). On this server
that loop was 5-6 % of all CPU at full speed (py-spy, bench/profile.sh): a
move's commit script alone has ~20 arguments. `python bench/bench_redis_pack.py`
times the two packers on the server's own commands.

`packing(cls)` is `cls` (a redis-py asyncio connection class: TCP, TLS or unix
socket) with `pack_command` and `pack_commands` done by hiredis: the same bytes
(the bench checks it), as the sync client sends them. Commands whose arguments
hiredis cannot pack (none of the server's) fall back to redis-py's own packer.

It is the one piece of the server that reaches into redis-py's internals (a
method of its asyncio connection): the 5-6 % it saves earns it, and
pyproject.toml pins redis to the major version it was written for (8).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import hiredis
from redis.asyncio.connection import AbstractConnection

__all__ = ["packing"]


class _HiredisPacking(AbstractConnection):
    """Pack with hiredis (mixed in before a redis-py asyncio connection class)."""

    def pack_command(self, *args: Any) -> list[bytes]:
        """The command as RESP bytes, in one piece."""
        first = args[0]
        if isinstance(first, str) and " " in first:  # "CLIENT SETNAME" and the like
            args = (*first.encode().split(), *args[1:])
        elif isinstance(first, bytes) and b" " in first:
            args = (*first.split(), *args[1:])
        try:
            return [hiredis.pack_command(args)]
        except TypeError:  # an argument hiredis does not know (redis-py raises its error)
            return super().pack_command(*args)

    def pack_commands(self, commands: Iterable[Iterable[Any]]) -> list[bytes]:
        """A pipeline's commands as RESP bytes, in one piece."""
        return [b"".join([part for cmd in commands for part in self.pack_command(*cmd)])]


@functools.cache
def packing(cls: type[AbstractConnection]) -> type[AbstractConnection]:
    """`cls` packing its commands with hiredis (one class per base, made once)."""
    return type(f"Hiredis{cls.__name__}", (_HiredisPacking, cls), {})
