"""The wire format: encode/decode, the typed messages' checks, and PROTOCOL.md's examples."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgpack
import msgspec
import pytest

from moose import messages, protocol
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


def check(msg: dict) -> str:
    """Decode `msg` as the server does (a JSON frame, then msgpack); its type."""
    typed = messages.decode(json.dumps(msg))
    assert type(messages.decode(msgpack.packb(msg))) is type(typed)
    return str(typed.__struct_config__.tag)


def test_doc_examples_of_client_messages_pass_the_check():
    kinds = set()
    for ex in doc_examples():
        if ex["type"] in messages.CLIENT_TYPES:
            assert check(ex) == ex["type"]
            kinds.add(ex["type"])
        else:
            assert ex["type"] in messages.SERVER_TYPES, ex["type"]
    assert kinds == set(messages.CLIENT_TYPES)


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
        check(msg)
    assert err.value.code == code
    assert err.value.message


def test_error_carries_the_request_id():
    assert protocol.error("illegal_move", "no", 7) == {
        "type": "error",
        "code": "illegal_move",
        "message": "no",
        "id": 7,
    }


@pytest.mark.parametrize(
    "msg",
    [
        {"type": "ping", "id": "\ud800"},  # a lone surrogate: JSON can say it, UTF-8 cannot
        {"type": "ping", "id": 100000000000000000000000000000},  # JSON: any size
        {"type": "ping", "id": 2**64 - 1},  # msgpack: up to 2**64-1
        {"type": "ping", "id": -(2**63)},
        {"type": "watch", "game": "g_\udfff"},
        {"type": "record", "game": "\ud800"},
        {"type": "hello", "protocol": 1, "name": "a\udc80b"},
        {"type": "hello", "protocol": 2**60},
        {"type": "sync", "game": "g_1", "since": 2**53},
        {"type": "queue", "min_players": -(2**53)},
        {"type": "move", "game": "g_1", "move": {"action": "\ud800"}},
        {"type": "move", "game": "g_1", "move": {"action": "play", "target": 2**64 - 1}},
        {"type": "move", "game": "g_1", "move": {"action": "play", "room": float("nan")}},
        {"type": "move", "game": "g_1", "move": {"a": {"b": {"c": {"d": {"e": 1}}}}}},
    ],
)
def test_values_that_cannot_be_echoed_are_bad_message(msg):
    with pytest.raises(ProtocolError) as err:
        messages.decode(protocol.encode(msg, binary=False))  # JSON text holds them all
    assert err.value.code == "bad_message"
    # The refusal itself can be sent in either encoding.
    answer = protocol.error(err.value.code, err.value.message, err.value.msg_id)
    for binary in (True, False):
        assert protocol.decode(protocol.encode(answer, binary=binary)) == answer


@pytest.mark.parametrize("msg_id", ["\ud800", 10**29, 2**64 - 1, 2**53])
def test_an_id_that_cannot_be_echoed_is_not_echoed(msg_id):
    assert protocol.request_id({"type": "ping", "id": msg_id}) is None


def test_the_largest_safe_integers_and_any_unicode_pass():
    big = protocol.MAX_INT
    assert check({"type": "ping", "id": big}) == "ping"
    assert check({"type": "ping", "id": -big}) == "ping"
    assert check({"type": "sync", "game": "g_1", "since": big}) == "sync"
    assert check({"type": "hello", "protocol": 1, "name": "Zoë 🦌 ムース"}) == "hello"
    move = {"action": "play", "card": "door", "room": 0, "seat": 1, "note": [1.5, None, True]}
    assert check({"type": "move", "game": "g_1", "move": move}) == "move"


@pytest.mark.parametrize(
    ("msg", "text"),
    [
        ({"type": "hello"}, "'hello' needs the field 'protocol'"),
        ({"type": "watch", "game": None}, "'watch' needs the field 'game'"),
        ({"type": "hello", "protocol": "1"}, "'hello.protocol' must be int, not str"),
        ({"type": "say", "text": "x" * 1001}, "'say.text' is too long (at most 1000 characters)"),
        ({"type": "sync", "game": "g", "since": 2**53}, "'sync.since' must be an integer within"),
        ({"type": "move", "game": "g", "move": {"a": [[[[1]]]]}}, "'move.move' must be nested"),
    ],
)
def test_a_refusal_names_the_message_and_the_field(msg, text):
    for frame in (json.dumps(msg), msgpack.packb(msg)):
        with pytest.raises(ProtocolError) as err:
            messages.decode(frame)
        assert err.value.code == "bad_message"
        assert err.value.message.startswith(text), err.value.message


def test_a_lone_surrogate_in_a_field_no_message_has_is_ignored_like_any_unknown_field():
    # msgspec refuses the whole JSON text; the field is not one of ping's, so it passes.
    assert messages.decode('{"type": "ping", "id": 4, "x": "\\ud800"}') == messages.Ping(id=4)


def test_a_typed_message_has_its_fields_and_leaves_out_unknown_ones():
    frame = {"type": "move", "id": "m1", "game": "g_1", "move": {"action": "pass"}, "extra": 1}
    for encoded in (json.dumps(frame), msgpack.packb(frame)):
        msg = messages.decode(encoded)
        assert isinstance(msg, messages.Move)
        assert (msg.id, msg.game, msg.move, msg.seq, msg.move_id) == (
            "m1",
            "g_1",
            {"action": "pass"},
            None,
            None,
        )


def test_doc_examples_of_server_messages_built_as_structs_are_those_structs():
    # PROTOCOL.md's `event`, `match`, `error`, `pong` and `moved` examples, read as their
    # Struct and written back: the same map, every field documented and no other.
    built = {"event": messages.Event, "match": messages.Match, "error": messages.Error}
    built |= {"pong": messages.Pong, "moved": messages.Moved}
    seen = set()
    for ex in doc_examples():
        cls = built.get(ex["type"])
        if cls is None:
            continue
        typed = msgspec.convert(ex, cls)
        assert msgspec.to_builtins(typed) == ex, ex
        seen.add(ex["type"])
    assert seen == set(built)


@pytest.mark.parametrize("inner", [{1: 2}, [{b"x": 2}], {"b": {None: 1}}])
def test_a_move_map_holding_a_map_with_other_keys_than_strings_is_refused(inner):
    # msgpack lets a map's keys be anything; PROTOCOL.md's maps have string keys (JSON's).
    frame = msgpack.packb({"type": "move", "id": 3, "game": "g_1", "move": {"a": inner}})
    with pytest.raises(ProtocolError) as err:
        messages.decode(frame)
    assert err.value.code in ("bad_frame", "bad_message")
