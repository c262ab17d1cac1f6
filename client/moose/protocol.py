"""Wire messages of PROTOCOL.md: encode, decode and check their shape.

Binary WebSocket frames are msgpack maps, text frames JSON objects with the same
schema. `decode` turns a frame into a dict or raises `ProtocolError` with the
stable error code the server sends back; `check` validates a decoded client
message against `CLIENT_MESSAGES`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import msgpack

__all__ = [
    "CLIENT_MESSAGES",
    "ERROR_CODES",
    "MAX_FRAME",
    "MAX_INT",
    "PROTOCOL_VERSION",
    "SERVER_MESSAGES",
    "ProtocolError",
    "check",
    "decode",
    "encode",
    "error",
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

_INT = (int,)
_STR = (str,)
_ID = (int, str)
_MAP = (dict,)
_BOOL = (bool,)

# Client -> server: type -> {field: (types, required)}. `id` is allowed on all.
CLIENT_MESSAGES: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "hello": {
        "protocol": (_INT, True),
        "name": (_STR, False),
        "token": (_STR, False),
        "password": (_STR, False),
        "bot": (_BOOL, False),
    },
    "register": {"password": (_STR, True)},
    "change_password": {"password": (_STR, True), "new_password": (_STR, True)},
    "logout_all": {},
    "leaderboard": {"kind": (_STR, False), "limit": (_INT, False), "offset": (_INT, False)},
    "profile": {
        "player": (_STR, False),
        "name": (_STR, False),
        "game": (_STR, False),
        "seat": (_INT, False),
    },
    "ping": {},
    "queue": {
        "min_players": (_INT, False),
        "max_players": (_INT, False),
        "fair": (_BOOL, False),
        "days": (_INT, False),
    },
    "leave_queue": {"days": (_INT, False)},
    "queue_range": {"min_players": (_INT, False), "max_players": (_INT, False)},
    "queue_bots": {"players": (_INT, False)},
    "create_table": {
        "players": (_INT, False),
        "rated": (_BOOL, False),
        "fair": (_BOOL, False),
        "days": (_INT, False),
    },
    "join_table": {"code": (_STR, True), "fair": (_BOOL, False)},
    "add_bot": {"code": (_STR, True), "bot": (_STR, False)},
    "start_table": {"code": (_STR, True)},
    "leave_table": {"code": (_STR, True)},
    "move": {
        "game": (_STR, True),
        "move": (_MAP, True),
        "seq": (_INT, False),
        "move_id": (_STR, False),
    },
    "sync": {"game": (_STR, True), "since": (_INT, False)},
    "watch": {"game": (_STR, True), "code": (_STR, False)},
    "unwatch": {"game": (_STR, True)},
    "record": {"game": (_STR, True), "code": (_STR, False)},
    "games": {"follow": (_BOOL, False)},
    "my_games": {},
    "vacation": {"days": (_INT, True)},
    "seed": {"game": (_STR, True), "seed": (_STR, True)},  # provably fair deals
    # Together: rematch and challenges
    "rematch": {"game": (_STR, True), "bots": (_BOOL, False)},
    "rematch_accept": {"game": (_STR, True)},
    "rematch_decline": {"game": (_STR, True)},
    "challenge": {
        "name": (_STR, True),
        "players": (_INT, False),
        "rated": (_BOOL, False),
        "open": (_BOOL, False),
        "days": (_INT, False),
    },
    "challenge_accept": {"challenge": (_STR, True)},
    "challenge_decline": {"challenge": (_STR, True), "reason": (_STR, False)},
    "challenge_cancel": {"challenge": (_STR, True)},
    "challenge_setting": {"challenges": (_STR, False)},
    # Arena tournaments
    "arenas": {},
    "show_arena": {"arena": (_STR, True)},
    "join_arena": {
        "arena": (_STR, True),
        "min_players": (_INT, False),
        "max_players": (_INT, False),
    },
    "pause_arena": {"arena": (_STR, True)},
    "leave_arena": {"arena": (_STR, True)},
    "watch_arena": {"arena": (_STR, True)},
    "unwatch_arena": {"arena": (_STR, True)},
    "report": {
        "player": (_STR, True),
        "game": (_STR, False),
        "reason": (_STR, True),
        "chat": (_STR, False),
        "code": (_STR, False),
        "room": (_STR, False),
    },
    # Chat, blocks and follows
    "say": {"game": (_STR, False), "code": (_STR, False), "text": (_STR, True)},
    "chat_history": {
        "game": (_STR, False),
        "code": (_STR, False),
        "room": (_STR, False),
        "since": (_STR, False),
    },
    "block": {"player": (_STR, True), "game": (_STR, False)},
    "unblock": {"player": (_STR, True), "game": (_STR, False)},
    "blocks": {},
    "follow": {"player": (_STR, True), "game": (_STR, False)},
    "unfollow": {"player": (_STR, True), "game": (_STR, False)},
    "following": {},
}

SERVER_MESSAGES = frozenset(
    {
        "welcome",
        "pong",
        "queued",
        "left",
        "match",
        "table",
        "event",
        "moved",
        "synced",
        "watching",
        "unwatched",
        "record",
        "registered",
        "password_changed",
        "logged_out",
        "leaderboard",
        "profile",
        "game_list",
        "my_games",
        "vacation",
        "gone",
        "reported",
        "seeded",
        "rematch_offer",  # together
        "rematch_started",
        "challenge_offer",
        "challenge_setting",
        "arena_list",  # arena tournaments
        "arena",
        "arena_member",
        "arena_unwatched",
        # Chat, blocks and follows
        "said",
        "chat",
        "chat_history",
        "blocked",
        "unblocked",
        "blocks",
        "followed",
        "unfollowed",
        "following",
        "error",
    }
)

_MAX_STR = 64  # ids, codes, names, tokens are short; a move_id is at most this
_MAX_TOKEN = 512
# Integers a client sends must fit in a double without loss (what a browser's JSON
# holds) and so in msgpack too: JSON carries integers of any size, and an answer
# that echoes one must be encodable in either encoding.
MAX_INT = 2**53 - 1
_MAX_DEPTH = 4  # maps and lists nested in a field (a move is one map of scalars)
_MAX_PASSWORD = 128
_MAX_REASON = 200  # a report's reason
# A chat line's text as sent: the server refuses one over 200 characters once cleaned
# with `chat_too_long`; past this it is not even read (bad_message).
_MAX_CHAT_FRAME = 1000
_LIMITS = {
    "token": _MAX_TOKEN,
    "password": _MAX_PASSWORD,
    "new_password": _MAX_PASSWORD,
    "reason": _MAX_REASON,
    "text": _MAX_CHAT_FRAME,
}


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
    if isinstance(msg_id, str) and (len(msg_id) > _MAX_STR or not _unicode(msg_id)):
        return None
    if isinstance(msg_id, int) and not -MAX_INT <= msg_id <= MAX_INT:
        return None
    return msg_id


def _unicode(text: str) -> bool:
    """Whether `text` is valid Unicode: JSON's \\ud800 escapes decode to lone surrogates."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _plain(value: Any, depth: int = 0) -> str | None:
    """Why `value` cannot be echoed in both encodings, or None when it can.

    Strings and integers are checked inline (this runs on every move).
    """
    kind = type(value)
    if kind is str:
        return None if value.isascii() or _unicode(value) else "valid Unicode (no lone surrogates)"
    if kind is int:
        return None if -MAX_INT <= value <= MAX_INT else f"an integer within +-{MAX_INT}"
    if value is None or kind is bool:
        return None
    if kind is float:
        return None if math.isfinite(value) else "a finite number"
    if kind is not dict and kind is not list:
        return "plain data"
    if depth >= _MAX_DEPTH:
        return f"nested at most {_MAX_DEPTH} deep"
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return "a map with string keys"
            if not key.isascii() and not _unicode(key):
                return "valid Unicode (no lone surrogates)"
            kind = type(item)
            if (kind is str and item.isascii()) or (kind is int and -MAX_INT <= item <= MAX_INT):
                continue  # what a move holds: no call for it
            why = _plain(item, depth + 1)
            if why is not None:
                return why
        return None
    for item in value:
        why = _plain(item, depth + 1)
        if why is not None:
            return why
    return None


def check(message: Mapping[str, Any]) -> str:
    """Validate a client message's type and fields; return its type.

    Every field must be one the server can hold and echo: strings valid Unicode
    and short, integers within `MAX_INT`, maps plain data; else `bad_message`.
    """
    msg_id = request_id(message)
    if msg_id is None and message.get("id") is not None:
        raise ProtocolError("bad_message", "'id' must be an integer or a short string")
    mtype = message.get("type")
    if not isinstance(mtype, str):
        raise ProtocolError("bad_message", "a message needs a string 'type'", msg_id)
    fields = CLIENT_MESSAGES.get(mtype)
    if fields is None:
        raise ProtocolError("unknown_type", f"unknown message type {mtype[:40]!r}", msg_id)
    for name, (types, required) in fields.items():
        value = message.get(name)
        if value is None:
            if required:
                raise ProtocolError("bad_message", f"'{mtype}' needs the field '{name}'", msg_id)
            continue
        if isinstance(value, bool) != (types is _BOOL) or not isinstance(value, types):
            want = " or ".join(t.__name__ for t in types)
            got = type(value).__name__
            text = f"'{mtype}.{name}' must be {want}, not {got}"
            raise ProtocolError("bad_message", text, msg_id)
        if isinstance(value, str):
            if len(value) > _LIMITS.get(name, _MAX_STR):
                raise ProtocolError("bad_message", f"'{mtype}.{name}' is too long", msg_id)
            if value.isascii():
                continue
        elif isinstance(value, int) and -MAX_INT <= value <= MAX_INT:
            continue
        why = _plain(value)
        if why is not None:
            raise ProtocolError("bad_message", f"'{mtype}.{name}' must be {why}", msg_id)
    return mtype


def error(code: str, message: str, msg_id: Any = None) -> dict[str, Any]:
    """An error message with a stable code."""
    assert code in ERROR_CODES, code
    out: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if msg_id is not None:
        out["id"] = msg_id
    return out
