"""PROTOCOL.md's messages as msgspec Structs: what a client sends, what the server answers.

A client message is one Struct per `type`, tagged by its `type` field (a msgspec
tagged union, `ClientMessage`), with the field types and limits PROTOCOL.md
states: the server decodes a frame straight into one (`decode`), so a handler
gets `msg.game`, never an unchecked map. A frame the decoder refuses is
explained by `refusal`, with the stable code (`bad_frame`, `bad_message`,
`unknown_type`) and a message that names the field. tests/test_documented_facts.py
checks PROTOCOL.md's message tables against these classes.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, ClassVar

import msgspec

from moose.protocol import MAX_INT, ProtocolError, is_unicode, request_id
from moose.protocol import decode as decode_map

__all__ = [
    "CHALLENGE_SETTINGS",
    "CLIENT_TYPES",
    "SERVER_TYPES",
    "Answer",
    "ClientMessage",
    "Error",
    "Event",
    "Match",
    "Moved",
    "Pong",
    "Reply",
    "Request",
    "decode",
    "plain_why",
    "refusal",
]

_MAX_DEPTH = 4  # maps and lists nested in a field (a move is one map of scalars)

Int = Annotated[int, msgspec.Meta(ge=-MAX_INT, le=MAX_INT)]
Short = Annotated[str, msgspec.Meta(max_length=64)]  # ids, codes, names, game ids
Token = Annotated[str, msgspec.Meta(max_length=512)]
Password = Annotated[str, msgspec.Meta(max_length=128)]
Reason = Annotated[str, msgspec.Meta(max_length=200)]  # a report's reason
# A chat line as sent: past 200 characters once cleaned it is `chat_too_long`; past
# this it is not even read (bad_message).
ChatText = Annotated[str, msgspec.Meta(max_length=1000)]


class Request(msgspec.Struct, tag_field="type", kw_only=True, omit_defaults=True):
    """A client message: every one may carry an `id`, echoed in its answer."""

    id: Int | Short | None = None


# -- session and accounts -------------------------------------------------------------


class Hello(Request, tag="hello"):
    """The first message of a socket."""

    protocol: Int
    name: Short | None = None
    token: Token | None = None
    password: Password | None = None
    bot: bool | None = None


class Register(Request, tag="register"):
    """Claim the guest's name as an account."""

    password: Password


class ChangePassword(Request, tag="change_password"):
    """A new password for the account."""

    password: Password
    new_password: Password


class LogoutAll(Request, tag="logout_all"):
    """Refuse every token of the account from before now."""


class Ping(Request, tag="ping"):
    """Ask for a `pong` (and the server's time)."""


class Leaderboard(Request, tag="leaderboard"):
    """A page of a leaderboard."""

    kind: Short | None = None
    limit: Int | None = None
    offset: Int | None = None
    pool: Short | None = None


class Profile(Request, tag="profile"):
    """A player's rating and history, by id, name or seat of a game."""

    player: Short | None = None
    name: Short | None = None
    game: Short | None = None
    seat: Int | None = None


# -- matchmaking and private tables ---------------------------------------------------


class Queue(Request, tag="queue"):
    """Wait in the public queue for a game."""

    min_players: Int | None = None
    max_players: Int | None = None
    fair: bool | None = None
    days: Int | None = None  # a correspondence ticket: days a move (1, 2, 3, 5, 7, 14)


class LeaveQueue(Request, tag="leave_queue"):
    """Leave the public queue (with `days`: withdraw that correspondence ticket)."""

    days: Int | None = None


class QueueRange(Request, tag="queue_range"):
    """Change the table sizes a queued ticket takes."""

    min_players: Int | None = None
    max_players: Int | None = None


class QueueBots(Request, tag="queue_bots"):
    """Fill a waiting ticket's table with server bots."""

    players: Int | None = None


class CreateTable(Request, tag="create_table"):
    """Open a private table."""

    players: Int | None = None
    rated: bool | None = None
    fair: bool | None = None
    days: Int | None = None  # a correspondence table: days a move


class JoinTable(Request, tag="join_table"):
    """Sit at a private table by its join code."""

    code: Short
    fair: bool | None = None


class AddBot(Request, tag="add_bot"):
    """Seat a server bot at one's table."""

    code: Short
    bot: Short | None = None


class StartTable(Request, tag="start_table"):
    """Start one's table's game."""

    code: Short


class LeaveTable(Request, tag="leave_table"):
    """Leave a private table."""

    code: Short


# -- playing --------------------------------------------------------------------------


def plain_why(value: Any, depth: int = 0) -> str | None:
    """Why `value` cannot be echoed in both encodings (JSON and msgpack), or None."""
    kind = type(value)
    if kind is str:
        return None if is_unicode(value) else "valid Unicode (no lone surrogates)"
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
        for key in value:
            if type(key) is not str:  # msgpack's maps may have other keys; JSON's cannot
                return "a map with string keys"
            if not key.isascii() and not is_unicode(key):
                return "valid Unicode (no lone surrogates)"
    for item in value.values() if kind is dict else value:
        kind_of = type(item)
        if (kind_of is str and item.isascii()) or (kind_of is int and -MAX_INT <= item <= MAX_INT):
            continue  # what a move holds: no call for it (this runs on every move)
        why = plain_why(item, depth + 1)
        if why is not None:
            return why
    return None


class Move(Request, tag="move"):
    """Play a move (RULES.md notation) in a game."""

    game: Short
    move: dict[str, Any]
    seq: Int | None = None
    move_id: Short | None = None

    def __post_init__(self) -> None:
        why = plain_why(self.move)
        if why is not None:
            raise ValueError(f"must be {why}")


class Sync(Request, tag="sync"):
    """The events of a game since `since` (or its state)."""

    game: Short
    since: Int | None = None


class Watch(Request, tag="watch"):
    """Follow a game as a spectator (a private table's by its code)."""

    game: Short
    code: Short | None = None


class Unwatch(Request, tag="unwatch"):
    """Stop watching a game."""

    game: Short


class Record(Request, tag="record"):
    """A finished game's record."""

    game: Short
    code: Short | None = None


class Games(Request, tag="games"):
    """The live games (and, with `follow`, their changes)."""

    follow: bool | None = None


class MyGames(Request, tag="my_games"):
    """Your unfinished games, those where it is your move first."""


class Vacation(Request, tag="vacation"):
    """Hold the clocks of your correspondence games for some days."""

    days: Int


class Seed(Request, tag="seed"):
    """A seat's seed for a provably fair deal."""

    game: Short
    seed: Short


# -- together: rematch and challenges -------------------------------------------------


class Rematch(Request, tag="rematch"):
    """Offer the players of a finished game another one."""

    game: Short
    bots: bool | None = None


class RematchAccept(Request, tag="rematch_accept"):
    """Accept a rematch."""

    game: Short


class RematchDecline(Request, tag="rematch_decline"):
    """Decline a rematch."""

    game: Short


class Challenge(Request, tag="challenge"):
    """Challenge a player by name."""

    name: Short
    players: Int | None = None
    rated: bool | None = None
    open: bool | None = None
    days: Int | None = None  # a correspondence game: days a move


class ChallengeAccept(Request, tag="challenge_accept"):
    """Accept a challenge."""

    challenge: Short


class ChallengeDecline(Request, tag="challenge_decline"):
    """Decline a challenge."""

    challenge: Short
    reason: Short | None = None


class ChallengeCancel(Request, tag="challenge_cancel"):
    """Withdraw one's challenge."""

    challenge: Short


# Who may challenge a player: everyone, players with an account, those they follow, nobody.
CHALLENGE_SETTINGS = ("everyone", "registered", "following", "nobody")


class ChallengeSetting(Request, tag="challenge_setting"):
    """Who may challenge one (or, without `challenges`, the setting as it is)."""

    challenges: Short | None = None


# -- arena tournaments ----------------------------------------------------------------


class Arenas(Request, tag="arenas"):
    """The arenas, running and upcoming."""


class ShowArena(Request, tag="show_arena"):
    """One arena's standings and games."""

    arena: Short


class JoinArena(Request, tag="join_arena"):
    """Join an arena (or come back after a pause)."""

    arena: Short
    min_players: Int | None = None
    max_players: Int | None = None


class PauseArena(Request, tag="pause_arena"):
    """Be seated in no new arena game for now."""

    arena: Short


class LeaveArena(Request, tag="leave_arena"):
    """Leave an arena."""

    arena: Short


class WatchArena(Request, tag="watch_arena"):
    """Follow an arena's changes."""

    arena: Short


class UnwatchArena(Request, tag="unwatch_arena"):
    """Stop following an arena."""

    arena: Short


# -- moderation, chat, blocks and follows ---------------------------------------------


class Report(Request, tag="report"):
    """Report a player (and maybe a chat line of theirs) to the moderators."""

    player: Short
    reason: Reason
    game: Short | None = None
    chat: Short | None = None
    code: Short | None = None
    room: Short | None = None


class Say(Request, tag="say"):
    """Say a line at a game or a private table."""

    text: ChatText
    game: Short | None = None
    code: Short | None = None


class ChatHistory(Request, tag="chat_history"):
    """The lines a room keeps."""

    game: Short | None = None
    code: Short | None = None
    room: Short | None = None
    since: Short | None = None


class Block(Request, tag="block"):
    """Hear nothing more of a player."""

    player: Short
    game: Short | None = None


class Unblock(Request, tag="unblock"):
    """Hear a blocked player again."""

    player: Short
    game: Short | None = None


class Blocks(Request, tag="blocks"):
    """The players one blocks."""


class Follow(Request, tag="follow"):
    """Be told when a player comes online or starts a game."""

    player: Short
    game: Short | None = None


class Unfollow(Request, tag="unfollow"):
    """Stop following a player."""

    player: Short
    game: Short | None = None


class Following(Request, tag="following"):
    """The players one follows."""


# -- notices away from the page -----------------------------------------------------

Endpoint = Annotated[str, msgspec.Meta(max_length=1024)]  # a push service's URL
Email = Annotated[str, msgspec.Meta(max_length=254)]  # RFC 5321's longest path


class PushSubscribe(Request, tag="push_subscribe"):
    """Have notices pushed to a browser: its PushSubscription as JSON (endpoint, keys)."""

    subscription: dict[str, Any]

    def __post_init__(self) -> None:
        why = plain_why(self.subscription)
        if why is not None:
            raise ValueError(f"must be {why}")


class PushUnsubscribe(Request, tag="push_unsubscribe"):
    """Push no more notices to a browser."""

    endpoint: Endpoint


class NotifySettings(Request, tag="notify_settings"):
    """Turn kinds of notices on or off, set the mail address ("" for none), or ask."""

    your_move: bool | None = None
    time_running_out: bool | None = None
    game_over: bool | None = None
    challenge_received: bool | None = None
    email: Email | None = None


ClientMessage = (
    Hello
    | Register
    | ChangePassword
    | LogoutAll
    | Ping
    | Leaderboard
    | Profile
    | Queue
    | LeaveQueue
    | QueueRange
    | QueueBots
    | CreateTable
    | JoinTable
    | AddBot
    | StartTable
    | LeaveTable
    | Move
    | Sync
    | Watch
    | Unwatch
    | Record
    | Games
    | MyGames
    | Vacation
    | Seed
    | Rematch
    | RematchAccept
    | RematchDecline
    | Challenge
    | ChallengeAccept
    | ChallengeDecline
    | ChallengeCancel
    | ChallengeSetting
    | Arenas
    | ShowArena
    | JoinArena
    | PauseArena
    | LeaveArena
    | WatchArena
    | UnwatchArena
    | Report
    | Say
    | ChatHistory
    | Block
    | Unblock
    | Blocks
    | Follow
    | Unfollow
    | Following
    | PushSubscribe
    | PushUnsubscribe
    | NotifySettings
)

# type -> its Struct: every client message
CLIENT_TYPES: dict[str, type[Request]] = {
    str(cls.__struct_config__.tag): cls for cls in ClientMessage.__args__
}

# -- what the server sends ------------------------------------------------------------


class Reply(msgspec.Struct, tag_field="type", kw_only=True):
    """A server message built as a Struct: encoded by msgspec, `type` first."""


class Answer(Reply, kw_only=True, omit_defaults=True):
    """An answer to a request: `id` is the request's (left out when it had none)."""

    id: int | str | None = None


class Error(Answer, tag="error"):
    """A refusal with a stable code; more fields when the code says so."""

    KNOWN: ClassVar[frozenset[str]] = frozenset({"retry_after", "reason", "until", "next"})

    code: str
    message: str
    retry_after: int | None = None  # ms: rate_limited, banned
    reason: str | None = None  # banned
    until: int | None = None  # banned: when the ban ends (ms)
    next: str | None = None  # offer_closed: the game a rematch started


class Pong(Answer, tag="pong"):
    """The answer to `ping`."""

    server_time: int


class Moved(Answer, tag="moved"):
    """The answer to a `move`: the seq of the event it made."""

    game: str
    seq: int


class Match(Reply, tag="match", kw_only=True, omit_defaults=True):
    """A seat in a game that starts: sent to its player (through the player channel,
    as its map, to whichever instance holds their sockets)."""

    game: str
    seat: int
    players: int
    names: list[str]
    bots: list[bool]
    ratings: list[dict[str, Any] | None]  # {"rating", "provisional"}; None: a server bot
    arena: str | None = None  # an arena game's arena
    deal: dict[str, Any] | None = None  # a fair deal's {"scheme", "commitment"}
    days: int | None = None  # a correspondence game's days a move


class Event(Reply, tag="event"):
    """A game's change as one seat (or a spectator) sees it; every field is sent,
    `legal` and `deadline` as null when it is not that seat's move."""

    game: str
    seq: int
    event: dict[str, Any]
    view: dict[str, Any]
    legal: Any  # list of moves, or None
    deadline: Any  # ms, or None
    server_time: int


# Every `type` the server sends; those above are built as Structs, the others as maps.
SERVER_TYPES = frozenset(
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
        "deadline",  # a turn's deadline moved without an event (a spared turn, an outage)
        "reported",
        "seeded",
        "rematch_offer",
        "rematch_started",
        "challenge_offer",
        "challenge_setting",
        "arena_list",
        "arena",
        "arena_member",
        "arena_unwatched",
        "said",
        "chat",
        "chat_history",
        "blocked",
        "unblocked",
        "blocks",
        "followed",
        "unfollowed",
        "following",
        "push_subscribed",  # notices away from the page
        "push_unsubscribed",
        "notify_settings",
        "error",
    }
)

# -- decoding -------------------------------------------------------------------------

_JSON = msgspec.json.Decoder(ClientMessage)
_MSGPACK = msgspec.msgpack.Decoder(ClientMessage)


def decode(frame: bytes | str) -> ClientMessage:
    """A frame (msgpack bytes or JSON text) as its typed message, else `ProtocolError`."""
    try:
        if isinstance(frame, str):
            return _JSON.decode(frame)
        return _MSGPACK.decode(frame)
    except msgspec.MsgspecError:
        pass  # explained below: off the hot path
    return refusal(frame)


def refusal(frame: bytes | str) -> ClientMessage:
    """Why the decoder refused `frame`, as the `ProtocolError` of PROTOCOL.md's codes.

    The frame is decoded again as plain data: a frame that is no map is
    `bad_frame`/`bad_message` (moose.protocol.decode_map), then `id`, `type` and
    the fields are checked in that order. A frame the typed decoder refused only
    for a JSON string that holds a lone surrogate in a field no message has is
    let through, as before: the message is then returned.
    """
    raw = decode_map(frame)
    msg_id = request_id(raw)
    if msg_id is None and raw.get("id") is not None:
        raise ProtocolError("bad_message", "'id' must be an integer or a short string")
    mtype = raw.get("type")
    if not isinstance(mtype, str):
        raise ProtocolError("bad_message", "a message needs a string 'type'", msg_id)
    if mtype not in CLIENT_TYPES:
        raise ProtocolError("unknown_type", f"unknown message type {mtype[:40]!r}", msg_id)
    try:
        msg: ClientMessage = msgspec.convert(raw, ClientMessage)
    except msgspec.ValidationError as exc:
        raise ProtocolError("bad_message", _explained(mtype, str(exc)), msg_id) from None
    for name in msg.__struct_fields__:
        value = getattr(msg, name)
        if isinstance(value, str) and not is_unicode(value):
            text = f"'{mtype}.{name}' must be valid Unicode (no lone surrogates)"
            raise ProtocolError("bad_message", text, msg_id)
    return msg


def _explained(mtype: str, text: str) -> str:
    """msgspec's reason a `mtype` message is refused, said with the field's name."""
    reason, _, where = text.partition(" - at `$.")
    field = where.rstrip("`").split("[", 1)[0].split(".", 1)[0]
    if reason.startswith("Object missing required field `"):
        return f"'{mtype}' needs the field '{reason.split('`')[1]}'"
    if reason.endswith("got `null`"):
        return f"'{mtype}' needs the field '{field}'"
    if reason.startswith("must be"):  # Move's, PushSubscribe's __post_init__
        return f"'{mtype}.{'subscription' if mtype == 'push_subscribe' else 'move'}' {reason}"
    if match := _TOO_LONG.fullmatch(reason):
        return f"'{mtype}.{field}' is too long (at most {match[1]} characters)"
    if _OUT_OF_RANGE.fullmatch(reason):
        return f"'{mtype}.{field}' must be an integer within +-{MAX_INT}"
    if match := _WRONG_TYPE.fullmatch(reason):
        want = match[1].replace(" | null", "").replace("object", "map").replace(" | ", " or ")
        return f"'{mtype}.{field}' must be {want}, not {match[2]}"
    return f"'{mtype}.{field}': {reason}"


_TOO_LONG = re.compile(r"Expected `str` of length <= (\d+)")
_OUT_OF_RANGE = re.compile(r"Expected `int` [<>]= -?\d+")
_WRONG_TYPE = re.compile(r"Expected `([^`]+)`, got `([^`]+)`")
