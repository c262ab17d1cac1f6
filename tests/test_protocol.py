"""The wire format: encode/decode, message checks, and PROTOCOL.md's examples."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgpack
import pytest

from moose import protocol
from moose.protocol import ProtocolError

DOC = Path(__file__).resolve().parent.parent / "PROTOCOL.md"


def doc_examples() -> list[dict]:
    """Every ```json block of PROTOCOL.md, parsed."""
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(), flags=re.S)
    return [json.loads(b) for b in blocks]


def test_every_doc_example_is_json_with_a_type():
    examples = doc_examples()
    assert len(examples) >= 25
    for ex in examples:
        assert isinstance(ex.get("type"), str), ex


def test_doc_examples_of_client_messages_pass_the_check():
    kinds = set()
    for ex in doc_examples():
        if ex["type"] in protocol.CLIENT_MESSAGES:
            assert protocol.check(ex) == ex["type"]
            kinds.add(ex["type"])
        else:
            assert ex["type"] in protocol.SERVER_MESSAGES, ex["type"]
    assert kinds == set(protocol.CLIENT_MESSAGES)


def test_doc_lists_every_error_code():
    text = DOC.read_text()
    for code in protocol.ERROR_CODES:
        assert f"`{code}`" in text, code


@pytest.mark.parametrize("binary", [True, False])
def test_encode_decode_round_trip(binary):
    msg = {"type": "move", "id": 3, "game": "g_1", "move": {"action": "pass"}}
    assert protocol.decode(protocol.encode(msg, binary=binary)) == msg


@pytest.mark.parametrize(
    "frame",
    [b"\xc1", b"\x92\x01", "{not json", "", b""],
)
def test_malformed_frames_are_bad_frame(frame):
    with pytest.raises(ProtocolError) as err:
        protocol.decode(frame)
    assert err.value.code in ("bad_frame", "bad_message")


@pytest.mark.parametrize("frame", [msgpack.packb([1, 2]), "[1, 2]", "3", msgpack.packb("x")])
def test_non_map_frames_are_bad_message(frame):
    with pytest.raises(ProtocolError) as err:
        protocol.decode(frame)
    assert err.value.code == "bad_message"


@pytest.mark.parametrize(
    ("msg", "code"),
    [
        ({}, "bad_message"),
        ({"type": 5}, "bad_message"),
        ({"type": "dance"}, "unknown_type"),
        ({"type": "hello"}, "bad_message"),
        ({"type": "hello", "protocol": "1"}, "bad_message"),
        ({"type": "hello", "protocol": True}, "bad_message"),
        ({"type": "move", "game": "g", "move": []}, "bad_message"),
        ({"type": "move", "game": "g", "move": {}, "seq": 1.5}, "bad_message"),
        ({"type": "move", "game": "g", "move": {}, "move_id": "x" * 65}, "bad_message"),
        ({"type": "ping", "id": [1]}, "bad_message"),
    ],
)
def test_check_refuses_bad_messages_with_stable_codes(msg, code):
    with pytest.raises(ProtocolError) as err:
        protocol.check(msg)
    assert err.value.code == code
    assert err.value.message


def test_error_carries_the_request_id():
    assert protocol.error("illegal_move", "no", 7) == {
        "type": "error",
        "code": "illegal_move",
        "message": "no",
        "id": 7,
    }
