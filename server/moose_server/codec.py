"""msgpack in and out, for Redis values and socket frames alike.

Kept apart from the Redis calls (store.py) and the sockets (ws.py), as arq keeps
its serialise/deserialise: both use these two functions and nothing else packs.
"""

from __future__ import annotations

from typing import Any

import msgpack

__all__ = ["pack", "unpack"]

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
