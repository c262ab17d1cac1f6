"""Game records: validation of bad records, replay of bad moves, round trips."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from moose import record as records
from moose import rules
from moose.record import Record, RecordError

from helpers import EMPTYING_END, emptying_game, play, random_game


def finished(players: int = 3, seed: int = 11) -> tuple[rules.State, list[dict[str, Any]]]:
    """A seeded random game played to the end: (final state, moves)."""
    history = list(random_game(players, seed))
    return history[-1][0], [m for _, m in history if m is not None]


def record_data(players: int = 3, seed: int = 11, upto: int | None = None) -> dict[str, Any]:
    """The record of a seeded game as plain data, cut after `upto` moves if given."""
    state, moves = finished(players, seed)
    return records.from_game(state, moves[:upto]).to_dict()


# -- from_game, dump and load ----------------------------------------------------------


def test_from_game_writes_the_result_of_a_finished_game() -> None:
    state, moves = finished()
    rec = records.from_game(state, moves, names=["ann", "bob", "cy"])
    assert rec.players == 3 and rec.dealer == state.dealer and rec.deck == state.deck
    assert rec.result == {"scores": rules.scores(state), "winners": rules.winners(state)}
    assert rec.to_dict()["names"] == ["ann", "bob", "cy"]


def test_from_game_writes_no_result_before_the_end() -> None:
    rec = records.from_game(*_cut(finished(), 10))
    assert rec.result is None
    assert "result" not in rec.to_dict()


def _cut(game: tuple[rules.State, list[dict[str, Any]]], n: int) -> tuple[Any, Any]:
    return game[0], game[1][:n]


def test_from_game_refuses_an_illegal_move() -> None:
    state, moves = finished()
    with pytest.raises(RecordError, match="move 3 is illegal: "):
        records.from_game(state, [*moves[:3], {"action": "pass"}])


def test_from_game_refuses_names_that_do_not_fit_the_table() -> None:
    state, moves = finished()
    with pytest.raises(RecordError, match="2 names for 3 seats"):
        records.from_game(state, moves, names=["ann", "bob"])


def test_record_survives_dumps_and_loads() -> None:
    state, moves = finished()
    rec = records.from_game(state, moves, names=["ann", "bob", "cy"])
    assert records.loads(records.dumps(rec)) == rec
    assert json.loads(records.dumps(rec)) == rec.to_dict()


def test_record_survives_dump_and_load_through_a_file(tmp_path: Path) -> None:
    rec = records.from_game(*finished())
    path = tmp_path / "game.json"
    records.dump(rec, path)
    assert records.load(path) == rec
    assert records.load(str(path)) == rec
    with path.open("rb") as f:
        assert records.load(f) == rec
    buf = io.StringIO()
    records.dump(rec, buf)
    assert records.load(io.StringIO(buf.getvalue())) == rec


def test_record_keys_are_those_of_rules_md() -> None:
    data = records.from_game(*finished()).to_dict()
    assert list(data) == ["players", "dealer", "deck", "moves", "result"]
    assert list(data["result"]) == ["scores", "winners"]


# -- replay ---------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (4, 3), (5, 4), (6, 5)])
def test_replay_reproduces_the_game_exactly(players: int, seed: int) -> None:
    states = [s for s, _ in random_game(players, seed)]
    moves = [m for _, m in random_game(players, seed) if m is not None]
    result = records.replay(records.loads(records.dumps(records.from_game(states[0], moves))))
    assert result.ok and result.error is None
    assert result.applied == len(moves)
    assert result.state == states[-1]


def test_replay_of_a_record_without_moves_is_the_deal() -> None:
    data = {**record_data(upto=0)}
    result = records.replay(records.validate(data))
    assert result.ok and result.applied == 0
    assert result.state == rules.new_game(3, deck=data["deck"], dealer=data["dealer"])


def test_replay_of_the_scripted_game_that_empties_every_hand() -> None:
    deck, moves = emptying_game()
    start = rules.new_game(2, deck=deck, dealer=1)
    rec = records.from_game(start, [*moves, *EMPTYING_END])
    assert rec.result == {"scores": [3, 3], "winners": [0]}
    assert records.replay(rec).state == play(start, *moves, *EMPTYING_END)


def _with_move(index: int, move: Any, *, seed: int = 11) -> dict[str, Any]:
    """A record whose move `index` is replaced by `move` (the rest cut off)."""
    data = record_data(seed=seed, upto=index)
    data["moves"].append(move)
    return data


def _replayed_error(data: dict[str, Any]) -> tuple[records.ReplayResult, dict[str, Any]]:
    result = records.replay(records.validate(data))
    assert not result.ok and result.error is not None
    return result, result.error


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        ({"action": "play", "card": "moose:garage", "target": 1, "room": 0}, "unknown card"),
        ({"action": "fly"}, "unknown action 'fly'"),
        ({"action": "trap"}, "no moose to answer"),
        ("pass", "a move must be a map"),
        ({"action": "play", "card": "house"}, "'target' is required"),
    ],
)
def test_a_bad_move_is_reported_with_its_index_and_reason(move: Any, reason: str) -> None:
    data = _with_move(5, move)
    result, error = _replayed_error(data)
    assert error["move"] == 5
    assert reason in error["reason"]
    assert result.applied == 5
    assert result.state == records.replay(records.validate(record_data(upto=5))).state


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [("target", 9, "target 9 is not a seat (0 to 2)"), ("room", 42, "has no room 42")],
)
def test_a_wrong_seat_or_room_index_is_reported(key: str, value: int, reason: str) -> None:
    _, moves = finished()
    index = next(i for i, m in enumerate(moves) if key in m)
    data = _with_move(index, {**moves[index], key: value})
    _, error = _replayed_error(data)
    assert error["move"] == index
    assert reason in error["reason"]


def test_a_move_by_the_wrong_seat_is_reported() -> None:
    data = record_data(upto=4)
    state = records.replay(records.validate(data)).state
    seat = rules.to_act(state)
    other = (seat + 1) % 3
    data["moves"].append({**rules.legal_moves(state)[0], "seat": other})
    _, error = _replayed_error(data)
    assert error == {"move": 4, "reason": f"it is seat {seat}'s move, not seat {other}'s"}


def test_a_move_with_the_right_seat_field_replays() -> None:
    state, moves = finished()
    data = record_data(upto=0)
    s = rules.new_game(3, deck=data["deck"], dealer=data["dealer"])
    for m in moves:
        data["moves"].append({**m, "seat": rules.to_act(s)})
        s = rules.apply(s, m)
    assert records.replay(records.validate(data)).state == state


def test_a_move_that_is_not_legal_now_is_reported() -> None:
    data = record_data(upto=0)
    data["moves"] = [{"action": "pass"}]
    _, error = _replayed_error(data)
    assert error == {
        "move": 0,
        "reason": "passing is only allowed in the end phase; discard instead",
    }


def test_a_move_after_the_end_of_the_game_is_reported() -> None:
    data = record_data()
    n = len(data["moves"])
    data["moves"].append({"action": "pass"})
    del data["result"]
    _, error = _replayed_error(data)
    assert error == {"move": n, "reason": "the game is over"}


def test_a_result_that_differs_from_the_replay_is_reported() -> None:
    data = record_data()
    data["result"]["scores"] = [s + 1 for s in data["result"]["scores"]]
    result, error = _replayed_error(data)
    assert error["move"] is None
    assert "differs from the replay" in error["reason"]
    assert result.applied == len(data["moves"])


def test_a_result_on_an_unfinished_game_is_reported() -> None:
    data = record_data(upto=10)
    data["result"] = {"scores": [0, 0, 0], "winners": [0]}
    _, error = _replayed_error(data)
    assert error == {
        "move": None,
        "reason": "the record has a result, but the game is not over after its last move",
    }


# -- malformed records ----------------------------------------------------------------


def _broken(**changes: Any) -> dict[str, Any]:
    data = record_data()
    for key, value in changes.items():
        if value is _DROP:
            del data[key]
        else:
            data[key] = value
    return data


_DROP = object()
_DECK = list(rules.CARDS)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([1, 2], "a game record must be a JSON object, not a list"),
        ("record", "a game record must be a JSON object, not a string"),
        (None, "a game record must be a JSON object, not null"),
        (_broken(moves=_DROP), "the record has no 'moves'"),
        (_broken(deck=_DROP, dealer=_DROP), "the record has no 'dealer', 'deck'"),
        (_broken(winner=0), "unknown key(s) in the record: winner"),
        (_broken(players=1), "'players' must be 2 to 6, not 1"),
        (_broken(players=7), "'players' must be 2 to 6, not 7"),
        (_broken(players="3"), "'players' must be an integer, not '3'"),
        (_broken(players=True), "'players' must be an integer, not True"),
        (_broken(dealer=3), "'dealer' must be a seat from 0 to 2, not 3"),
        (_broken(dealer=-1), "'dealer' must be a seat from 0 to 2, not -1"),
        (_broken(dealer=None), "'dealer' must be a seat from 0 to 2, not None"),
        (_broken(deck=_DECK[:-1]), "'deck': deck must hold each of the 58 cards exactly once"),
        (_broken(deck=[*_DECK, "trap"]), "(59 cards given; wrong counts of trap)"),
        (_broken(deck=["house", *_DECK[1:]]), "wrong counts of house, room:kitchen"),
        (_broken(deck=[*_DECK[:-1], "moose:attic"]), "deck[57] is not a card code: 'moose:attic'"),
        (_broken(deck="door room:kitchen"), "'deck': deck must be a list of 58 card codes"),
        (
            _broken(moves={"0": {"action": "pass"}}),
            "'moves' must be a list of moves, not an object",
        ),
        (_broken(moves="pass"), "'moves' must be a list of moves, not a string"),
        (_broken(names=["ann", "bob"]), "'names' has 2 names for 3 seats"),
        (_broken(names=["ann", "bob", 3]), "'names' must be a list of strings"),
        (_broken(result={"scores": [1, 2, 3]}), "'result' must be a map with exactly"),
        (_broken(result={"scores": [1, 2], "winners": [0]}), "'result.scores' must be 3"),
        (_broken(result={"scores": [1, 2, 3], "winners": []}), "'result.winners' must be a non"),
        (_broken(result={"scores": [1, 2, 3], "winners": [5]}), "each of 'result.winners' must"),
    ],
)
def test_a_malformed_record_is_refused_with_a_clear_reason(data: Any, reason: str) -> None:
    with pytest.raises(RecordError) as info:
        records.validate(data)
    assert reason in str(info.value)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "the record is empty"),
        ("  \n", "the record is empty"),
        ('{"players": 3,', "the record is not valid JSON: Expecting property name"),
        ("players: 3", "the record is not valid JSON: Expecting value (line 1, column 1)"),
        (b"\xff\xfe{}", "the record is not UTF-8 text"),
        ("[" * 100_000, "nested too deeply"),
    ],
)
def test_text_that_is_not_a_json_record_is_refused(text: str | bytes, reason: str) -> None:
    with pytest.raises(RecordError) as info:
        records.loads(text)
    assert reason in str(info.value)


def test_a_missing_file_is_a_record_error(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"cannot read .*nope\.json.*No such file"):
        records.load(tmp_path / "nope.json")


def test_validate_returns_a_record_that_keeps_moves_as_written() -> None:
    data = record_data(upto=3)
    rec = records.validate(data)
    assert isinstance(rec, Record)
    assert list(rec.moves) == data["moves"]
    assert rec.to_dict() == data


def test_every_public_name_exists_and_says_what_it_does() -> None:
    assert sorted(records.__all__) == sorted(
        [
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
    )
    for name in records.__all__:
        assert getattr(records, name).__doc__, name
