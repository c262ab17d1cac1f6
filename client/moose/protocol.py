"""Wire frames of PROTOCOL.md: encode and decode them, the stable error codes.

Binary WebSocket frames are msgpack maps, text frames JSON objects with the same
schema. `decode` turns a frame into a dict or raises `ProtocolError` with the
stable error code the server sends back. The messages themselves, with their
fields and limits, are the Structs of `moose.messages`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import msgpack

__all__ = [
    "ERROR_CODES",
    "MAX_FRAME",
    "MAX_INT",
    "PROTOCOL_VERSION",
    "ProtocolError",
    "decode",
    "encode",
    "error",
    "is_unicode",
    "request_id",
]

PROTOCOL_VERSION = 1
MAX_FRAME = 64 * 1024

ERROR_CODES = frozenset(
    {
        "bad_frame",
        "bad_message",
        "unknown_type",
        "hello_required",
        "already_hello",
        "protocol_version",
        "bad_token",
        "token_expired",
        "token_revoked",
        "bad_login",
        "bad_password",
        "name_taken",
        "already_registered",
        "not_registered",
        "no_such_player",
        "illegal_move",
        "not_your_turn",
        "not_in_game",
        "no_such_game",
        "stale_seq",
        "game_over",
        "already_queued",
        "not_queued",
        "too_early",
        "bad_code",
        "table_full",
        "already_seated",
        "not_host",
        "not_over",
        "rate_limited",
        "unavailable",
        "internal",
        "banned",  # moderation
        # Holds: what one client may hold at once
        "too_many_games",
        "too_many_tables",
        "too_many_sessions",
        "too_many_watched",
        "not_fair",  # provably fair deals
        "already_seeded",
        "already_dealt",
        # Together: rematch and challenges
        "player_offline",
        "too_many_challenges",
        "no_such_challenge",
        "no_such_rematch",
        "expired",
        "offer_closed",
        # Arena tournaments
        "no_such_arena",
        "arena_over",
        "not_member",
        "not_allowed",
        # Chat, blocks and follows
        "chat_too_long",
        "too_many_blocks",
        "too_many_follows",
        "no_such_message",
    }
)

_ID = (int, str)
_MAX_STR = 64  # the longest `id`
# Integers a client sends must fit in a double without loss (what a browser's JSON
# holds) and so in msgpack too: JSON carries integers of any size, and an answer
# that echoes one must be encodable in either encoding.
MAX_INT = 2**53 - 1


class ProtocolError(Exception):
    """A message that breaks the protocol; `code` is the stable error code."""

    def __init__(self, code: str, message: str, msg_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.msg_id = msg_id


def encode(message: Mapping[str, Any], *, binary: bool = True) -> bytes | str:
    """A message as a frame: msgpack bytes, or JSON text when `binary` is false."""
    if binary:
        blob: bytes = msgpack.packb(message, use_bin_type=True)
        return blob
    return json.dumps(message, separators=(",", ":"))


def decode(frame: bytes | str) -> dict[str, Any]:
    """A frame as a message map, or `ProtocolError` (bad_frame / bad_message)."""
    try:
        if isinstance(frame, bytes | bytearray | memoryview):
            data = msgpack.unpackb(frame, raw=False, strict_map_key=True)
        else:
            data = json.loads(frame)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as exc:
        kind = "msgpack" if isinstance(frame, bytes | bytearray | memoryview) else "JSON"
        raise ProtocolError("bad_frame", f"the frame is not valid {kind}: {exc}") from exc
    except Exception as exc:  # msgpack raises a few other types on hostile input
        raise ProtocolError("bad_frame", f"the frame cannot be decoded: {exc}") from exc
    if not isinstance(data, dict):
        raise ProtocolError("bad_message", f"a message must be a map, not {type(data).__name__}")
    return data


def request_id(message: Mapping[str, Any]) -> int | str | None:
    """The message's `id` when it is a valid one (an integer or a short string), else None."""
    msg_id = message.get("id")
    if isinstance(msg_id, bool) or not isinstance(msg_id, _ID):
        return None
    if isinstance(msg_id, str) and (len(msg_id) > _MAX_STR or not is_unicode(msg_id)):
        return None
    if isinstance(msg_id, int) and not -MAX_INT <= msg_id <= MAX_INT:
        return None
    return msg_id


def is_unicode(text: str) -> bool:
    """Whether `text` is valid Unicode: JSON's \\ud800 escapes decode to lone surrogates."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def error(code: str, message: str, msg_id: Any = None) -> dict[str, Any]:
    """An error message with a stable code."""
    assert code in ERROR_CODES, code
    out: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if msg_id is not None:
        out["id"] = msg_id
    return out
