"""A game as stored (`Game`), and what is made of one without Redis: its record, the
`match` and seat facts its players are told, the events that end it, and the moves
the server picks for a bot's seat or a seat whose time ran out.

`Games` (games.py) plays moves on games; every part that only reads a game (the
hub's frames, the lobby, results, live games) needs this module alone.

Errors: `GameError(code, message)`, with a PROTOCOL.md error code.
"""

from __future__ import annotations

import dataclasses
import functools
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from moose import rules
from moose.messages import Match
from moose_server.accounts import Standing, distinct, ratings
from moose_server.errors import Refusal
from moose_server.play.correspondence import days_info
from moose_server.storage import formats
from moose_server.storage.codec import (
    array_items,
    extend_map,
    pack,
    pack_array_header,
    pack_map,
    unpack,
    unpack_stored,
)
from moose_server.storage.formats import FIELD as FORMAT_FIELD
from moose_server.storage.formats import WRITTEN

__all__ = [
    "NOT_SHOWN",
    "Event",
    "Game",
    "GameError",
    "Move",
    "abandoned_event",
    "arena_info",
    "bot_move",
    "finished_record",
    "forfeit_event",
    "match_message",
    "over_event",
    "seat_info",
    "seat_info_of",
    "summary",
    "table_match",
    "thinks",
    "timeout_move",
]

Move = dict[str, Any]
Event = dict[str, Any]
FALLBACK_BOT = "greedy"
# The refusal (not_in_game) of naming a player by a private game one does not see.
NOT_SHOWN = "a private table's game is watched with its code; its players are not yours to name"


class GameError(Refusal):
    """A request the game refuses; `code` is the PROTOCOL.md error code."""


def finished_record(game: Game) -> dict[str, Any]:
    """The game's record (deck included) once it is over, or GameError not_over."""
    if not game.finished:
        raise GameError("not_over", "the game is still being played")
    return game.record()


@dataclass(frozen=True)
class Game:
    """A game as stored: the rules state plus who sits where."""

    id: str
    version: int
    deadline: int
    state: rules.State
    players: list[str | None]
    names: list[str]
    bots: list[str | None]
    away: list[bool]
    misses: list[int]
    moves: list[Move]
    code: str | None = None  # the join code of the private table it came from; None: queue
    rated: bool = False  # its end updates the seats' ratings
    # Per seat at the start: {"bot", "mu", "sigma", "games"}, or None for a server bot.
    profiles: list[dict[str, Any] | None] | None = None
    # "abandoned" (nobody plays it) or "forfeit" (a seat was banned): the server ended
    # it before the rules did.
    ended: str | None = None
    # A provably fair deal's {"scheme", "commitment", "server_seed" (hex), "seeds"}
    # (moose.fair); secret until the end. None: dealt from a fixed deck (tests).
    deal: dict[str, Any] | None = None
    arena: str | None = None  # the arena tournament it is a game of
    forfeits: tuple[int, ...] = ()  # the seats that lost by forfeit (a banned player's)
    days: int | None = None  # days per move of a correspondence game; None: real time
    # (k, msgpack of moves[:k] concatenated), from the commit that wrote this
    # game's ancestor: moves only grow, so it is a prefix of `moves`. Not compared.
    # A game made from packed data (`from_packed`) holds every move here alone,
    # until `moves` is read (`_UnpackedOnRead`).
    packed_moves: tuple[int, bytes] = dataclasses.field(default=(0, b""), compare=False, repr=False)

    @classmethod
    def from_data(
        cls,
        game_id: str,
        version: int,
        deadline: int,
        d: dict[str, Any],
        parsed: rules.State | None = None,
        legal: list[Move] | None = None,
        packed_moves: tuple[int, bytes] | None = None,
    ) -> Game:
        """A game from its stored data (made as `but` makes its copies: a follower
        makes one for each move of a seat of its after another instance's).

        `parsed`: `d["state"]` as a rules state, where the caller has it already
        (the hub made it from the step it heard), and `legal` its legal moves.
        `packed_moves`: every move packed (their number and bytes), taken instead
        of `d["moves"]`, and unpacked only when `moves` is read."""
        game = object.__new__(cls)
        game.__dict__.update(
            id=game_id,
            version=version,
            deadline=deadline,
            state=rules.State.from_dict(d["state"]) if parsed is None else parsed,
            players=d["players"],
            names=d["names"],
            bots=d["bots"],
            away=d["away"],
            misses=d["misses"],
            code=d.get("code"),
            rated=d.get("rated", False),
            profiles=d.get("profiles"),
            ended=d.get("ended"),
            deal=d.get("deal"),
            arena=d.get("arena"),
            forfeits=tuple(d.get("forfeits", ())),
            days=d.get("days"),
            packed_moves=(0, b"") if packed_moves is None else packed_moves,
        )
        if packed_moves is None:
            game.__dict__["moves"] = d["moves"]
        if legal is not None:  # as `legal` would have computed them
            game.__dict__["legal"] = legal
        return game

    @classmethod
    def from_packed(
        cls,
        game_id: str,
        version: int,
        deadline: int,
        data: bytes,
        parsed: rules.State | None = None,
        legal: list[Move] | None = None,
    ) -> Game:
        """`from_data` of the game data as a commit wrote it (packed, or compressed),
        its moves kept packed (a move's commit adds its own to them: `packed`), and
        its state not unpacked when `parsed` is given. A format this release does
        not write is read as a read from Redis reads it: `formats.UnknownFormat`
        for one it does not read."""
        found = unpack_stored(data, _WRITTEN_DATA)
        if type(found.fmt) is not int or found.fmt != WRITTEN:
            d = formats.read(unpack_stored(data), f"game {game_id}")
            return cls.from_data(game_id, version, deadline, d, parsed, legal)
        if parsed is None:
            parsed = rules.State.from_dict(unpack(bytes(found.state)))
        d = msgspec.structs.asdict(found)
        moves = array_items(memoryview(found.moves))
        return cls.from_data(game_id, version, deadline, d, parsed, legal, moves)

    def to_data(self, state: dict[str, Any] | None = None) -> dict[str, Any]:
        """The stored data (everything but id, version and deadline).

        `state` is `self.state.to_dict()` when the caller has made it already.
        """
        return self._data(self.state.to_dict() if state is None else state, self.moves)

    def _data(self, state: dict[str, Any], moves: Any) -> dict[str, Any]:
        """`to_data(state)` with `moves` (packed, or a stand-in for bytes given apart)."""
        return {
            FORMAT_FIELD: WRITTEN,  # storage/formats.py: what a reader checks first
            "state": state,
            "players": self.players,
            "names": self.names,
            "bots": self.bots,
            "away": self.away,
            "misses": self.misses,
            "moves": moves,
            "code": self.code,
            "rated": self.rated,
            "profiles": self.profiles,
            **({"ended": self.ended} if self.ended else {}),
            **({"deal": self.deal} if self.deal else {}),
            **({"arena": self.arena} if self.arena else {}),
            **({"forfeits": list(self.forfeits)} if self.forfeits else {}),
            **days_info(self.days),
        }

    def packed(self, state: dict[str, Any], auto: bool) -> tuple[bytes, bytes, tuple[int, bytes]]:
        """`pack(self.to_data(state))`, `pack({**state, "auto": auto})` and the moves' cache.

        The same bytes as packing the maps, but the state is packed once for both
        and the moves already packed by an earlier commit are not packed again:
        bench/bench_move_path.py measured this at 2x faster than packing the maps
        (~13 us against ~29 us a commit, 30-50 moves in).
        """
        packed_state = pack(state)
        count, done = self.packed_moves
        moves = self.__dict__.get("moves")  # None: every move is packed (`from_packed`)
        if moves is None:
            packed_moves = pack_array_header(count) + done
        elif 0 < count <= len(moves):
            done += b"".join([pack(m) for m in moves[count:]])
            count = len(moves)
            packed_moves = pack_array_header(count) + done
        else:  # none packed yet (a game read, or heard in an older format): at once
            packed_moves = pack(moves)
            count = len(moves)
            done = packed_moves[len(pack_array_header(count)) :]
        data = pack_map(self._data(state, None), {"state": packed_state, "moves": packed_moves})
        snapshot = extend_map(packed_state, len(state), {"auto": auto})
        return data, snapshot, (count, done)

    def with_move(self, move: Move, **changes: Any) -> Game:
        """`but(moves=[*self.moves, move], **changes)`; moves held packed alone
        (`from_packed`) stay so, the move's bytes added to them."""
        new = self.but(**changes)
        moves = self.__dict__.get("moves")
        if moves is not None:
            new.__dict__["moves"] = [*moves, move]
        else:
            count, done = self.packed_moves
            new.__dict__["packed_moves"] = (count + 1, done + pack(move))
        return new

    def but(self, **changes: Any) -> Game:
        """A copy with some fields changed: `dataclasses.replace` at a quarter of its cost.

        Every move makes two copies; replace() runs __init__ with its checks.
        The copy keeps `legal` when it was computed, unless the state changes.
        Its attributes are a copy of this one's dict: fewer instructions than
        filling an empty one key by key (callgrind, bench/bench_move_path.py).
        """
        assert changes.keys() <= _FIELDS, changes.keys() - _FIELDS
        new = object.__new__(Game)
        fields = self.__dict__.copy()
        fields.update(changes)
        if "state" in changes:
            fields.pop("legal", None)
        object.__setattr__(new, "__dict__", fields)
        return new

    @property
    def finished(self) -> bool:
        """Over by the rules, or ended by the server (abandoned)."""
        return self.state.over or self.ended is not None

    @property
    def decided(self) -> bool:
        """Whether it has a result: over by the rules, or lost by a seat's forfeit (an
        abandoned game has none)."""
        return self.state.over or bool(self.forfeits)

    def places(self, state: rules.State | None = None) -> list[int]:
        """Each seat's place (1 = won) at `state` (default: its own): by the scores, as
        `ratings.places`, except that a seat that forfeited is behind every other."""
        base = ratings.places(self.state if state is None else state)
        if not self.forfeits:
            return base
        kept = [i for i in range(len(base)) if i not in self.forfeits]
        last = len(kept) + 1
        return [
            last if i in self.forfeits else 1 + sum(base[k] < base[i] for k in kept)
            for i in range(len(base))
        ]

    def abandoned(self) -> bool:
        """Whether the server ends the game now: a private table's game that changes no
        rating (unrated, or fewer than two players) whose every player's seat is away.

        A rated game of two players or more is played out, so that walking away from
        a lost position loses it as before.
        """
        seats = [i for i, p in enumerate(self.players) if p is not None]
        if self.code is None or (self.rated and len(seats) >= 2) or self.finished:
            return False
        return bool(seats) and all(self.away[i] for i in seats)

    def seat_of(self, player: str) -> int | None:
        """The player's seat, or None."""
        return self.players.index(player) if player in self.players else None

    def shown_to(self, player: str | None, following: bool) -> bool:
        """Whether its seats' players are `player`'s to know: a queue game is anyone's to
        watch; a private table's only its seats' or a socket `following` it (watched
        with the code, or synced)."""
        return self.code is None or following or (player is not None and player in self.players)

    def seat_named(self, target: str) -> int | None:
        """The seat of a player called `target` (its player id, its name, or its name as
        the table shows it, "bob #2"), or None."""
        shown = distinct(self.names)
        for seat, player in enumerate(self.players):
            if player is not None and target in (player, self.names[seat], shown[seat]):
                return seat
        return None

    def humans(self) -> list[str]:
        """The player ids seated at this game."""
        return [p for p in self.players if p is not None]

    @functools.cached_property
    def legal(self) -> list[Move]:
        """`rules.legal_moves(self.state)`, computed once: a move's commit, its auto-play
        and the hub's message to the seat to act all need them. Do not change the list.
        """
        return rules.legal_moves(self.state)

    @property
    def legal_made(self) -> list[Move] | None:
        """`legal` if it was computed already, else None (not computed for this)."""
        return self.__dict__.get("legal")

    def auto_kind(self) -> str | None:
        """How the server plays the seat to act now: 'bot', 'forced', or None (a person)."""
        seat = rules.to_act(self.state)
        if seat is None:
            return None
        if self.bots[seat] is not None or self.away[seat]:
            return "bot"
        state = self.state
        # A trap to answer, or a card drawn (a discard at worst), is never a pass alone
        # (rules.legal_moves): the legal moves are not made for this, only where a frame
        # offers them (~2.5 us a commit whose seat to act has no socket here).
        if state.pending or state.drew:
            return None
        if self.legal == [{"action": "pass"}]:
            return "forced"
        return None

    def record(self) -> dict[str, Any]:
        """The game record of RULES.md section 7."""
        s = self.state
        rec: dict[str, Any] = {
            "players": s.n,
            "dealer": s.dealer,
            "deck": list(s.deck),
            "moves": self.moves,
            "names": self.names,
        }
        if s.over:
            rec["result"] = {"scores": rules.scores(s), "winners": rules.winners(s)}
        if self.finished and self.deal is not None:  # the server seed is told at the end
            rec["deal"] = self.deal
        return rec

    def public_deal(self) -> dict[str, Any]:
        """`{"deal": {"scheme", "commitment"}}` for `match` and `start`; {} without a deal."""
        if self.deal is None:
            return {}
        return {"deal": {"scheme": self.deal["scheme"], "commitment": self.deal["commitment"]}}


_FIELDS = frozenset(f.name for f in dataclasses.fields(Game))


class _UnpackedOnRead:
    """`Game.moves` of a game that holds its moves packed alone (`Game.from_packed`):
    the first read unpacks them into the game, where every later read finds them,
    as it finds the list of any other game (a non-data descriptor: the instance's
    own value comes first, and attribute reads of every other field stay as fast)."""

    def __get__(self, game: Game | None, owner: type[Game]) -> list[Move]:
        if game is None:
            raise AttributeError("moves")  # a field without a default: none on the class
        count, done = game.packed_moves
        moves: list[Move] = unpack(pack_array_header(count) + done)
        game.__dict__["moves"] = moves
        return moves


Game.moves = _UnpackedOnRead()  # type: ignore[assignment]  # set after @dataclass made Game


class _WrittenData(msgspec.Struct):
    """The game data map as `Game.to_data` writes it, its state and moves left packed
    (`Game.from_packed`); a field it does not name is skipped, as `from_data` skips it."""

    state: msgspec.Raw
    players: Any
    names: Any
    bots: Any
    away: Any
    misses: Any
    moves: msgspec.Raw
    fmt: Any = msgspec.field(default=0, name=FORMAT_FIELD)  # none: format 0
    code: Any = None
    rated: Any = False
    profiles: Any = None
    ended: Any = None
    deal: Any = None
    arena: Any = None
    forfeits: Any = ()
    days: Any = None


_WRITTEN_DATA = msgspec.msgpack.Decoder(_WrittenData)


def _bots_module() -> Any:
    try:
        from moose import bots
    except ImportError:  # the bots may not be installed in a trimmed client
        return None
    return bots


def timeout_move(view: dict[str, Any], legal: list[Move]) -> Move:
    """The move played when a seat's time runs out (also for away seats)."""
    bots = _bots_module()
    choose = getattr(bots, "choose_timeout_move", None)
    if choose is not None:
        return dict(choose(view, legal))
    return next((m for m in legal if m["action"] == "trap"), legal[0])


def bot_move(game: Game, name: str, view: dict[str, Any], legal: list[Move]) -> Move:
    """A bot seat's move; the seed comes from the game and version, so replays agree."""
    bots = _bots_module()
    if bots is None:
        return legal[0]
    seed = zlib.crc32(f"{game.id}:{game.version}".encode())
    try:
        bot = bots.make_bot(name, seed)
    except ValueError:
        bot = bots.make_bot(FALLBACK_BOT, seed)
    return dict(bot.choose(view, legal))


def thinks(name: str | None) -> bool:
    """Whether the bot kind `name` searches (about 0.1-0.15 s of CPU a move)."""
    bots = _bots_module()
    return name is not None and name in getattr(bots, "SEARCHING", ())


def match_message(game: Game, seat: int) -> dict[str, Any]:
    """The `match` that tells a seated player of their game."""
    info = {**seat_info(game), **arena_info(game), **days_info(game.days)}
    return table_match(game.id, seat, game.names, info, game.public_deal())


def table_match(
    game: str, seat: int, names: list[str], info: dict[str, Any], deal: dict[str, Any]
) -> dict[str, Any]:
    """A `match` from its parts: `info` is `seat_info`'s, `deal` `Game.public_deal`'s.

    Built as the Struct (a field it does not name is a TypeError), sent as its map:
    it travels through Redis' player channel to the player's instance.
    """
    match = Match(game=game, seat=seat, players=len(names), names=names, **info, **deal)
    built: dict[str, Any] = msgspec.to_builtins(match)
    return built


def seat_info(game: Game) -> dict[str, Any]:
    """`bots` (each seat a bot, the server's or a player's) and `ratings` of a game's seats,
    for `match`, `start` and `state`; a rating is {"rating", "provisional"} or None."""
    return seat_info_of(game.bots, game.profiles)


def arena_info(game: Game) -> dict[str, Any]:
    """`arena`: the arena tournament an arena game belongs to, for `match`, `start` and
    `state` (nothing for any other game): the page shows its name and standings."""
    return {"arena": game.arena} if game.arena else {}


def seat_info_of(
    server_bots: Sequence[str | None], profiles: Sequence[dict[str, Any] | None] | None
) -> dict[str, Any]:
    """`seat_info` of seats played by `server_bots` (None: not the server's) with `profiles`."""
    profiles = profiles or [None] * len(server_bots)
    bots = [
        b is not None or bool(p and p.get("bot"))
        for b, p in zip(server_bots, profiles, strict=True)
    ]
    ratings: list[dict[str, Any] | None] = [
        None
        if p is None
        else {
            "rating": Standing(p["mu"], p["sigma"], p["games"]).rating,
            "provisional": p["provisional"],
        }
        for p in profiles
    ]
    return {"bots": bots, "ratings": ratings}


def over_event(state: rules.State) -> Event:
    """The event that ends a game."""
    return {"kind": "over", "scores": rules.scores(state), "winners": rules.winners(state)}


def forfeit_event(game: Game) -> Event:
    """The event that ends a game a seat forfeited: the scores as they stand, the seats
    that forfeited, and the winners among the others (`Game.places`)."""
    places = game.places()
    return {
        "kind": "over",
        "forfeit": list(game.forfeits),
        "scores": rules.scores(game.state),
        "winners": [i for i, p in enumerate(places) if p == 1],
    }


def abandoned_event(state: rules.State) -> Event:
    """The event that ends an abandoned game: the scores as they stand, and no winner."""
    return {"kind": "over", "abandoned": True, "scores": rules.scores(state), "winners": []}


def summary(game: Game) -> dict[str, Any]:
    """What the list says of one game: its seats' names, bot flags and ratings as in
    `match` (its id and start time are added by the index)."""
    return {"players": len(game.names), "names": game.names, **seat_info(game)}
