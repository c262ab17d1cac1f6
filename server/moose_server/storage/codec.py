"""msgpack in and out, for Redis values and socket frames alike.

Kept apart from the Redis calls (store.py) and the sockets (ws.py), as arq keeps
its serialise/deserialise: both use these functions and nothing else packs.

msgspec packs and unpacks: the same bytes as msgpack's own Packer (checked at
import), in a third of the time for a game's data, a state or a seat's frame,
and unpacks in 0.4-0.9 of it (``python bench/bench_codec.py``).
msgpack, the reference, gives the map and array headers.

The helpers below let the hot path pack a big value once and reuse its bytes.
They rest on msgpack's format alone (a map or an array is its header, then its
items packed one after the other, each the same bytes wherever it stands), take
their headers from msgpack's own Packer, and are checked against `pack` at
import:

- `pack_map(d, packed)`: `pack(d)` with some values given already packed;
- `extend_map(pack(m), len(m), extra)`: `pack({**m, **extra})`;
- `pack_array_header(n)`: what precedes n packed items to make a packed array;
- `array_items(pack(items))`: `len(items)` and the bytes after that header;
- `Template(value, holes)`: `pack(value)` with `holes` values left open
  (`HOLES[i]` stand in for them), filled in by `fill(...)` as often as needed.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from typing import Any

import msgpack
import msgspec

__all__ = [
    "HOLES",
    "Template",
    "array_items",
    "as_bytes",
    "as_int",
    "as_list",
    "as_text",
    "as_text_or_none",
    "extend_map",
    "pack",
    "pack_array_header",
    "pack_compressed",
    "pack_map",
    "unpack",
    "unpack_stored",
]

# One encoder and one decoder for the process (msgspec's own advice); msgpack's
# Packer for headers only. The server packs on its one event-loop thread.
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder()
_PACKER = msgpack.Packer(use_bin_type=True)

# Stand-ins for the open values of a Template: ext types, which no message holds,
# and whose bytes no packed string can contain (0xc7 0x0a is not UTF-8).
HOLES = tuple(msgspec.msgpack.Ext(i, b"moose:hole") for i in range(4))


def as_text(raw: Any) -> str:
    """A Redis reply as text: bytes decoded (the clients do not decode), else str()."""
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def as_text_or_none(raw: Any) -> str | None:
    """A Redis reply as text, None (a missing field or key) kept."""
    return raw.decode() if isinstance(raw, bytes) else raw


def as_int(raw: object) -> int:
    """A Redis reply as an integer: an integer reply, or a number's bytes (ValueError else)."""
    if isinstance(raw, int):
        return raw
    if isinstance(raw, bytes | str):
        return int(raw)
    raise ValueError(f"not a number: {raw!r}")


def as_bytes(raw: object) -> bytes:
    """A Redis reply that is a string (a script's JSON): its bytes (ValueError else)."""
    if isinstance(raw, bytes):
        return raw
    raise ValueError(f"not a string: {raw!r}")


def as_list(raw: object) -> list[Any]:
    """A Redis reply that is an array (a script's table): its items (ValueError else)."""
    if isinstance(raw, list):
        return raw
    raise ValueError(f"not an array: {raw!r}")


def pack(value: Any) -> bytes:
    """msgpack bytes of plain data (the same bytes as `msgpack.packb`)."""
    return _ENCODER.encode(value)


def unpack(blob: bytes) -> Any:
    """The inverse of `pack` (msgspec.DecodeError, a ValueError, for bytes that are not)."""
    return _DECODER.decode(blob)


def pack_compressed(value: Any) -> bytes:
    """`pack(value)`, zlib-compressed: for what is kept long and read seldom (finished games)."""
    return zlib.compress(pack(value), 6)


def unpack_stored(blob: bytes, decoder: msgspec.msgpack.Decoder[Any] = _DECODER) -> Any:
    """The inverse of `pack` and of `pack_compressed` alike (`decoder`: a typed one).

    zlib's first byte is 0x78, and no value the server stores packs to a first
    byte of 0x78 (that would be the bare integer 120): a blob tells which it is.
    """
    return decoder.decode(zlib.decompress(blob) if blob[:1] == b"\x78" else blob)


_HOLE_BYTES = [pack(hole) for hole in HOLES]
_HOLE_MARKS = re.compile(b"(" + b"|".join(map(re.escape, _HOLE_BYTES)) + b")")  # caught


def pack_array_header(n: int) -> bytes:
    """The header of a packed array of `n` items: the items' bytes follow it."""
    head: bytes = _PACKER.pack_array_header(n)
    return head


def array_items(packed: bytes | memoryview) -> tuple[int, bytes]:
    """A packed array's number of items and their bytes, its header cut off (the
    inverse of `pack_array_header(n) + items`); ValueError if it is no array."""
    first = packed[0] if packed else 0
    if 0x90 <= first <= 0x9F:  # fixarray: up to 15 items, the count in the byte
        return first & 0x0F, bytes(packed[1:])
    if first in (0xDC, 0xDD):  # array 16 and array 32: a 2- or 4-byte count follows
        size = 3 if first == 0xDC else 5
        return int.from_bytes(packed[1:size], "big"), bytes(packed[size:])
    raise ValueError(f"not a packed array: {bytes(packed[:1])!r}")


def pack_map(d: Mapping[str, Any], packed: Mapping[str, bytes]) -> bytes:
    """`pack(d)`, taking the value of each key of `d` in `packed` as bytes packed already.

    One encode of a copy of `d` whose packed values are `msgspec.Raw` (written as
    they are): half the time of packing key by key in Python (~0.9 us against
    ~1.8 us for a game's data, 30 moves in).
    """
    out = dict(d)
    for key, value in packed.items():
        if key in out:
            out[key] = msgspec.Raw(value)
    return _ENCODER.encode(out)


def extend_map(packed: bytes, size: int, extra: Mapping[str, Any]) -> bytes:
    """`pack({**m, **extra})` from `packed = pack(m)`: m has `size` keys, none of `extra`'s."""
    head = _PACKER.pack_map_header
    more = _ENCODER.encode(extra)  # extra's header, then its keys and values
    return b"".join(
        (head(size + len(extra)), packed[len(head(size)) :], more[len(head(len(extra))) :])
    )


class Template:
    """`pack(value)` with the values `HOLES[:holes]` stand for left open, in that order.

    `fill(a, b, ...)` gives the bytes of packing `value` with each hole replaced
    by a value whose packed bytes are `a`, `b`, ... ValueError if a hole is not
    in `value` exactly once, or the holes come in another order.
    """

    __slots__ = ("_parts",)

    def __init__(self, value: Any, holes: int) -> None:
        # One split at every hole (a regular expression, in C): the value is cut
        # ~3x faster than by a partition and a count per hole in Python (a seat's
        # frame template, 4 holes).
        cut = _HOLE_MARKS.split(pack(value))
        if cut[1::2] != _HOLE_BYTES[:holes]:
            raise ValueError(f"hole {holes - 1} is not in the value exactly once, in order")
        self._parts = cut[::2]

    def fill(self, *packed: bytes) -> bytes:
        """The value's bytes with the holes filled by `packed`, in order."""
        parts = self._parts
        chunks = [parts[0]] * (2 * len(parts) - 1)
        chunks[::2] = parts
        chunks[1::2] = packed
        return b"".join(chunks)


def _check() -> None:
    """`pack` gives msgpack's bytes; the helpers give `pack`'s, small maps and big ones
    alike (run at import)."""
    ints = [0, -1, -33, 127, 128, 2**31, -(2**40), 2**64 - 1]
    sample = {
        "s": "é" * 40,
        "b": b"\x00" * 300,
        "i": ints,
        "f": 0.5,
        "n": None,
        "t": True,
        "m": {"k": [[], {}]},
        "l": "x" * 70000,
    }
    if pack(sample) != msgpack.packb(sample, use_bin_type=True) or unpack(pack(sample)) != sample:
        raise AssertionError("codec: pack disagrees with msgpack")
    for size in (3, 14, 20):  # 14 + 2 keys: the extended map takes the longer header
        d = {f"k{i}": [i, "x" * i, None, {"n": i}] for i in range(size)}
        pre = {k: pack(v) for k, v in list(d.items())[1:8:2]}
        holes = dict(d, k1=HOLES[0], k2={"in": HOLES[1]})
        filled = Template(holes, 2).fill(pack(d["k1"]), pack(7))
        extended = extend_map(pack(d), size, {"auto": True, "z": [1]})
        if extended != pack({**d, "auto": True, "z": [1]}):
            raise AssertionError("codec: extend_map disagrees with msgpack")
        if pack_map(d, pre) != pack(d) or filled != pack(dict(d, k2={"in": 7})):
            raise AssertionError("codec: the packing helpers disagree with msgpack")
        items = list(d.values())
        if pack_array_header(size) + b"".join(map(pack, items)) != pack(items):
            raise AssertionError("codec: an array is not its header and its items")
    for size in (0, 15, 16, 2**16):
        if array_items(pack([None] * size)) != (size, b"\xc0" * size):
            raise AssertionError("codec: array_items does not cut an array's header")


_check()
