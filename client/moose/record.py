"""Game records (RULES.md section 7): load, validate, replay, dump.

A record is the whole game, deck included::

    {"players": 3, "dealer": 0, "deck": [...58 codes, top first...],
     "moves": [{"action": "play", ...}, ...],
     "names": ["ann", "bob", "cy"], "result": {"scores": [...], "winners": [...]},
     "deal": {"scheme": "moose-deal-v1", ...}}

(`deal`, how a provably fair deal was drawn, is checked by `moose.fair.verify`.)

Errors::

    ValueError
     └── RecordError      the record itself is unusable: unreadable, not JSON, not
                          a map, a bad seat count, dealer, deck, names or result

An illegal move is not a `RecordError`: `replay` stops at it and reports its
index and the reason in `ReplayResult.error`, keeping the state reached so far.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, Any

from moose import rules
from moose.rules import IllegalMove, InvalidGame, State

__all__ = [
    "Record",
    "RecordError",
    "ReplayResult",
    "dump",
    "dumps",
    "from_game",
    "initial_state",
    "load",
    "loads",
    "replay",
    "validate",
]

_REQUIRED = ("players", "dealer", "deck", "moves")
_KEYS = frozenset((*_REQUIRED, "names", "result", "deal"))


class RecordError(ValueError):
    """A game record that cannot be used: the message says what is wrong with it."""


@dataclass(frozen=True)
class Record:
    """One game: the table, the deck (top first) and every move in order."""

    players: int
    dealer: int
    deck: tuple[str, ...]
    moves: tuple[Any, ...]  # as written; `replay` judges each one
    names: tuple[str, ...] | None = None
    result: Mapping[str, list[int]] | None = None
    deal: Mapping[str, Any] | None = None  # a provably fair deal's (moose.fair), as written

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON-ready data, in the RULES.md key order."""
        d: dict[str, Any] = {
            "players": self.players,
            "dealer": self.dealer,
            "deck": list(self.deck),
            "moves": [dict(m) if isinstance(m, Mapping) else m for m in self.moves],
        }
        if self.names is not None:
            d["names"] = list(self.names)
        if self.result is not None:
            result = self.result
            d["result"] = {"scores": list(result["scores"]), "winners": list(result["winners"])}
        if self.deal is not None:
            d["deal"] = dict(self.deal)
        return d


@dataclass(frozen=True)
class ReplayResult:
    """Where a replay got to: the last legal state, and the first illegal move if any."""

    state: State
    applied: int  # how many moves were applied
    error: dict[str, Any] | None = field(default=None)  # {"move": index|None, "reason": str}

    @property
    def ok(self) -> bool:
        """Whether every move applied and the result (if written) matched."""
        return self.error is None


# -- validating ----------------------------------------------------------------------


def _seat_count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"'players' must be an integer, not {value!r}")
    if not rules.MIN_PLAYERS <= value <= rules.MAX_PLAYERS:
        raise RecordError(
            f"'players' must be {rules.MIN_PLAYERS} to {rules.MAX_PLAYERS}, not {value}"
        )
    return value


def _seat(value: Any, players: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < players:
        raise RecordError(f"{what} must be a seat from 0 to {players - 1}, not {value!r}")
    return value


def _names(value: Any, players: int) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise RecordError("'names' must be a list of strings, one per seat")
    if len(value) != players:
        raise RecordError(f"'names' has {len(value)} names for {players} seats")
    return tuple(value)


def _result(value: Any, players: int) -> dict[str, list[int]]:
    if not isinstance(value, Mapping) or set(value) != {"scores", "winners"}:
        raise RecordError("'result' must be a map with exactly 'scores' and 'winners'")
    scores, winners = value["scores"], value["winners"]
    if (
        not isinstance(scores, list)
        or len(scores) != players
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in scores)
    ):
        raise RecordError(f"'result.scores' must be {players} whole numbers, one per seat")
    if not isinstance(winners, list) or not winners:
        raise RecordError("'result.winners' must be a non-empty list of seats")
    for w in winners:
        _seat(w, players, "each of 'result.winners'")
    return {"scores": list(scores), "winners": list(winners)}


def validate(data: Any) -> Record:
    """Check the shape of a decoded record and return it as a `Record`."""
    if not isinstance(data, Mapping):
        raise RecordError(f"a game record must be a JSON object, not {_kind(data)}")
    if "error" in data and "players" not in data:  # the HTTP API's answer, saved as is
        raise RecordError(
            f"not a game record but the server's refusal: {data.get('message')} "
            f"({data.get('error')})"
        )
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise RecordError(f"the record has no {', '.join(repr(k) for k in missing)}")
    unknown = sorted(str(k) for k in data if k not in _KEYS)
    if unknown:
        raise RecordError(f"unknown key(s) in the record: {', '.join(unknown)}")
    players = _seat_count(data["players"])
    dealer = _seat(data["dealer"], players, "'dealer'")
    deck = data["deck"]
    try:
        rules.check_deck(deck)
    except InvalidGame as exc:
        raise RecordError(f"'deck': {exc}") from exc
    moves = data["moves"]
    if not isinstance(moves, list):
        raise RecordError(f"'moves' must be a list of moves, not {_kind(moves)}")
    names = _names(data["names"], players) if "names" in data else None
    result = _result(data["result"], players) if "result" in data else None
    deal = data.get("deal")
    if deal is not None and not isinstance(deal, Mapping):
        raise RecordError(f"'deal' must be a map, not {_kind(deal)}")
    return Record(players, dealer, tuple(deck), tuple(moves), names, result, deal)


# What JSON calls each type that json.loads can return, for error messages.
_JSON_KINDS: dict[type, str] = {
    dict: "an object",
    list: "a list",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
}


def _kind(value: Any) -> str:
    return _JSON_KINDS.get(type(value), type(value).__name__)


# -- reading and writing ---------------------------------------------------------------


def loads(text: str | bytes) -> Record:
    """Parse and validate a record from JSON text."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise RecordError(
                f"the record is not UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from exc
    if not text.strip():
        raise RecordError("the record is empty")
    try:
        data = json.loads(text)
    except RecursionError as exc:
        raise RecordError("the record is nested too deeply to be a game record") from exc
    except json.JSONDecodeError as exc:
        raise RecordError(
            f"the record is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from exc
    return validate(data)


def load(source: str | os.PathLike[str] | IO[str] | IO[bytes]) -> Record:
    """Read, parse and validate a record from a path or an open file."""
    if isinstance(source, str | os.PathLike):
        try:
            with open(source, "rb") as f:
                text: str | bytes = f.read()
        except OSError as exc:
            raise RecordError(f"cannot read {os.fspath(source)!r}: {exc.strerror}") from exc
    else:
        try:
            text = source.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise RecordError(f"cannot read the record: {exc}") from exc
    return loads(text)


def dumps(record: Record) -> str:
    """The record as JSON text, one line (no trailing newline)."""
    return json.dumps(record.to_dict(), ensure_ascii=False)


def dump(record: Record, target: str | os.PathLike[str] | IO[str]) -> None:
    """Write the record as one line of JSON to a path or an open text file."""
    text = dumps(record) + "\n"
    if isinstance(target, str | os.PathLike):
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        target.write(text)


# -- replaying -----------------------------------------------------------------------


def initial_state(record: Record) -> State:
    """The state right after the deal of the record's game."""
    return rules.new_game(record.players, deck=record.deck, dealer=record.dealer)


def replay(record: Record) -> ReplayResult:
    """Apply the moves in order, stopping at the first illegal one."""
    state = initial_state(record)
    for index, move in enumerate(record.moves):
        try:
            state = rules.apply(state, move)
        except IllegalMove as exc:
            return ReplayResult(state, index, {"move": index, "reason": str(exc)})
    done = len(record.moves)
    if record.result is not None:
        problem = _result_mismatch(state, record.result)
        if problem:
            return ReplayResult(state, done, {"move": None, "reason": problem})
    return ReplayResult(state, done, None)


def _result_mismatch(state: State, result: Mapping[str, list[int]]) -> str | None:
    """Why the written result disagrees with the replayed game, or None."""
    if not state.over:
        return "the record has a result, but the game is not over after its last move"
    scores, winners = rules.scores(state), rules.winners(state)
    if list(result["scores"]) != scores or sorted(result["winners"]) != winners:
        return (
            f"the record's result (scores {list(result['scores'])}, winners"
            f" {list(result['winners'])}) differs from the replay (scores {scores},"
            f" winners {winners})"
        )
    return None


def from_game(
    game: State, moves: Sequence[Mapping[str, Any]], names: Sequence[str] | None = None
) -> Record:
    """The record of a game: its table and deck (from any of its states) plus `moves`.

    The moves are replayed to check them; `result` is written when they end the game.
    """
    record = Record(
        players=game.n,
        dealer=game.dealer,
        deck=tuple(game.deck),
        moves=tuple(dict(m) for m in moves),
        names=_names(list(names), game.n) if names is not None else None,
    )
    replayed = replay(record)
    if replayed.error:
        raise RecordError(f"move {replayed.error['move']} is illegal: {replayed.error['reason']}")
    if replayed.state.over:
        result = {"scores": rules.scores(replayed.state), "winners": rules.winners(replayed.state)}
        record = replace(record, result=result)
    return record
