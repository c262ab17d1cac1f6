"""The codec's packing helpers give msgpack's own bytes, and its import check catches it if not."""

from __future__ import annotations

import msgpack
import pytest

from moose_server.storage import codec
from moose_server.storage.codec import (
    HOLES,
    Template,
    extend_map,
    pack,
    pack_array_header,
    pack_map,
)


def packb(value: object) -> bytes:
    return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]


MAPS = [
    {"a": 1},
    {f"k{i}": [i, "x" * i, None, {"n": i}] for i in range(14)},  # 14 + 2: a longer header
    {f"k{i}": {"deep": [i] * i} for i in range(40)},
]


def test_pack_map_extend_map_and_arrays_equal_msgpack_packb_of_what_they_mirror() -> None:
    for d in MAPS:
        keys = list(d)
        packed = {k: packb(d[k]) for k in keys[::2]}
        assert pack(d) == packb(d)
        assert pack_map(d, packed) == packb(d)
        assert extend_map(packb(d), len(d), {"auto": True, "zz": [1, 2]}) == packb(
            {**d, "auto": True, "zz": [1, 2]}
        )
        items = list(d.values())
        assert pack_array_header(len(items)) + b"".join(map(packb, items)) == packb(items)


def test_a_template_filled_is_msgpack_packb_of_the_value_with_the_holes_filled() -> None:
    value = {"type": "event", "view": {"seat": HOLES[0], "hand": HOLES[1]}, "legal": HOLES[2]}
    template = Template(value, 3)
    for seat, hand, legal in ((0, ["door"], None), (5, [], [{"action": "pass"}] * 20)):
        want = {"type": "event", "view": {"seat": seat, "hand": hand}, "legal": legal}
        assert template.fill(packb(seat), packb(hand), packb(legal)) == packb(want)


def test_a_template_refuses_a_hole_missing_repeated_or_out_of_order() -> None:
    for value in ({"a": HOLES[0]}, {"a": HOLES[0], "b": HOLES[0]}, {"a": HOLES[1], "b": HOLES[0]}):
        with pytest.raises(ValueError, match="exactly once, in order"):
            Template(value, 2)


@pytest.mark.parametrize("helper", ["pack", "pack_map", "extend_map", "Template"])
def test_the_import_check_fails_when_a_helper_disagrees_with_msgpack(monkeypatch, helper) -> None:
    codec._check()  # as at import
    if helper == "Template":
        real = Template.fill
        monkeypatch.setattr(Template, "fill", lambda self, *p: real(self, *p) + b"\xc0")
    else:
        real_helper = getattr(codec, helper)
        monkeypatch.setattr(codec, helper, lambda *a: real_helper(*a)[:-1])
    with pytest.raises(AssertionError, match="disagree"):
        codec._check()
