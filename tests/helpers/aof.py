"""A copy of an embedded server's AOF, put back after a kill to lose the writes since.

Valkey (and Redis 7+) keeps the AOF as several files in ``appendonlydir/`` (a
manifest, a base and increments); redis-server 6.2 kept one ``appendonly.aof``.
A copy holds every file, so either comes back to the moment of the copy.
"""

from __future__ import annotations

from pathlib import Path

from moose_server.storage.embedded import EmbeddedRedis


def _files(server: EmbeddedRedis) -> list[Path]:
    folder = server.data_dir / "appendonlydir"
    if folder.is_dir():
        return sorted(p for p in folder.iterdir() if p.is_file())
    return [server.data_dir / "appendonly.aof"]


def aof_copy(server: EmbeddedRedis) -> dict[Path, bytes]:
    """Every file of the server's AOF as it is now."""
    return {path: path.read_bytes() for path in _files(server)}


def aof_restore(server: EmbeddedRedis, copy: dict[Path, bytes]) -> None:
    """Put the copy back (the server stopped): files made since it are removed."""
    for path in _files(server):
        if path not in copy:
            path.unlink()
    for path, data in copy.items():
        path.write_bytes(data)
