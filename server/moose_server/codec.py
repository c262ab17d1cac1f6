"""msgpack in and out, for Redis values and socket frames alike.

Kept apart from the Redis calls (store.py) and the sockets (ws.py), as arq keeps
its serialise/deserialise: both use these two functions and nothing else packs.
"""

from __future__ import annotations

import zlib
from typing import Any

import msgpack

__all__ = ["pack", "pack_compressed", "unpack", "unpack_stored"]

# One Packer for the process: msgpack.packb builds a new one per call, which costs
# more than packing a small value. The server packs on its one event-loop thread
# only, and a Packer starts afresh after a failed pack.
_PACKER = msgpack.Packer(use_bin_type=True)


def pack(value: Any) -> bytes:
    """msgpack bytes of plain data (the same bytes as `msgpack.packb`)."""
    blob: bytes = _PACKER.pack(value)
    return blob


def unpack(blob: bytes) -> Any:
    """The inverse of `pack`."""
    return msgpack.unpackb(blob, raw=False)


def pack_compressed(value: Any) -> bytes:
    """`pack(value)`, zlib-compressed: for what is kept long and read seldom (finished games)."""
    return zlib.compress(pack(value), 6)


def unpack_stored(blob: bytes) -> Any:
    """The inverse of `pack` and of `pack_compressed` alike.

    zlib's first byte is 0x78, and no value the server stores packs to a first
    byte of 0x78 (that would be the bare integer 120): a blob tells which it is.
    """
    return unpack(zlib.decompress(blob) if blob[:1] == b"\x78" else blob)
