"""`moose replay` run as a real subprocess: one JSON object out, exit codes 0/1/2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moose import record as records
from moose import rules

from helpers import random_game

pytestmark = pytest.mark.slow  # each test runs `moose replay`


def run_replay(*args: str, stdin: str | bytes | None = None) -> tuple[int, dict[str, Any]]:
    """Run `python -m moose replay ARGS`; return (exit code, the one JSON object printed)."""
    proc = subprocess.run(
        [sys.executable, "-m", "moose", "replay", *args],
        input=stdin.encode() if isinstance(stdin, str) else stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.stderr == b"", proc.stderr.decode()
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 1, proc.stdout
    out = json.loads(lines[0])
    assert isinstance(out, dict)
    return proc.returncode, out


def game(players: int = 4, seed: int = 21) -> tuple[rules.State, list[dict[str, Any]]]:
    """A seeded random game: (final state, moves)."""
    history = list(random_game(players, seed))
    return history[-1][0], [m for _, m in history if m is not None]


def write(tmp_path: Path, data: Any, name: str = "game.json") -> str:
    """Write `data` as JSON (or text as is) and return the path."""
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


@pytest.fixture
def finished(tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """A finished game's record file and its data."""
    state, moves = game()
    data = records.from_game(state, moves, names=["a", "b", "c", "d"]).to_dict()
    return write(tmp_path, data), data


def test_a_finished_record_replays_cleanly(finished: tuple[str, dict[str, Any]]) -> None:
    path, data = finished
    code, out = run_replay(path)
    assert code == 0
    assert out == {
        "over": True,
        "to_act": None,
        "scores": data["result"]["scores"],
        "winners": data["result"]["winners"],
        "error": None,
    }


def test_legal_lists_the_moves_of_the_seat_to_act(tmp_path: Path) -> None:
    state, moves = game()
    start = rules.new_game(4, deck=state.deck, dealer=state.dealer)
    mid = start
    for m in moves[:30]:
        mid = rules.apply(mid, m)
    path = write(tmp_path, records.from_game(start, moves[:30]).to_dict())
    code, out = run_replay(path, "--legal")
    assert code == 0
    assert out["over"] is False
    assert out["to_act"] == rules.to_act(mid)
    assert out["legal"] == rules.legal_moves(mid)
    assert out["scores"] == rules.scores(mid)  # the current scores while not over
    assert out["winners"] == []
    assert out["error"] is None


def test_legal_of_a_finished_game_is_empty(finished: tuple[str, dict[str, Any]]) -> None:
    code, out = run_replay("--legal", finished[0])
    assert code == 0 and out["legal"] == []


def test_an_illegal_move_exits_1_naming_its_index(tmp_path: Path) -> None:
    state, moves = game()
    data = records.from_game(state, moves[:12]).to_dict()
    data["moves"].append({"action": "play", "card": "moose:attic", "target": 1, "room": 0})
    data["moves"].extend(moves[13:])
    code, out = run_replay(write(tmp_path, data), "--legal")
    assert code == 1
    assert out["error"] == {"move": 12, "reason": "unknown card code 'moose:attic'"}
    before = records.replay(records.validate({**data, "moves": moves[:12]})).state
    assert out["to_act"] == rules.to_act(before)
    assert out["legal"] == rules.legal_moves(before)


def test_a_move_by_the_wrong_seat_exits_1(tmp_path: Path) -> None:
    state, moves = game()
    data = records.from_game(state, moves[:1]).to_dict()
    first = (state.dealer + 1) % 4
    second = (first + 1) % 4
    data["moves"] = [{**moves[0], "seat": second}]
    code, out = run_replay(write(tmp_path, data))
    assert code == 1
    assert out["error"] == {"move": 0, "reason": f"it is seat {first}'s move, not seat {second}'s"}
    assert out["to_act"] == first


def test_a_wrong_result_exits_1(finished: tuple[str, dict[str, Any]], tmp_path: Path) -> None:
    _, data = finished
    data["result"]["winners"] = [w for w in range(4) if w not in data["result"]["winners"]][:1]
    code, out = run_replay(write(tmp_path, data, "wrong.json"))
    assert code == 1
    assert out["error"]["move"] is None
    assert "differs from the replay" in out["error"]["reason"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"players": 9}, "'players' must be 2 to 6, not 9"),
        ({"dealer": 4}, "'dealer' must be a seat from 0 to 3, not 4"),
        ({"deck": ["trap"] * 58}, "deck must hold each of the 58 cards exactly once"),
        ({"moves": "all of them"}, "'moves' must be a list of moves"),
    ],
)
def test_a_malformed_record_exits_2(
    finished: tuple[str, dict[str, Any]], tmp_path: Path, change: dict[str, Any], reason: str
) -> None:
    _, data = finished
    code, out = run_replay(write(tmp_path, {**data, **change}, "bad.json"), "--legal")
    assert code == 2
    assert out["over"] is None and out["legal"] is None
    assert out["error"]["move"] is None
    assert reason in out["error"]["reason"]


def test_non_json_input_exits_2(tmp_path: Path) -> None:
    code, out = run_replay(write(tmp_path, "players: 4\n", "bad.json"))
    assert code == 2
    assert out == {
        "over": None,
        "to_act": None,
        "scores": None,
        "winners": None,
        "error": {
            "move": None,
            "reason": "the record is not valid JSON: Expecting value (line 1, column 1)",
        },
    }


def test_an_unreadable_file_exits_2(tmp_path: Path) -> None:
    code, out = run_replay(str(tmp_path / "missing.json"))
    assert code == 2
    assert "cannot read" in out["error"]["reason"]
    code, out = run_replay(str(tmp_path))  # a directory
    assert code == 2
    assert "cannot read" in out["error"]["reason"]


def test_dash_reads_the_record_from_stdin(finished: tuple[str, dict[str, Any]]) -> None:
    path, data = finished
    code, out = run_replay("-", stdin=Path(path).read_text())
    assert code == 0 and out["winners"] == data["result"]["winners"]
    code, out = run_replay("-", stdin=b"\x00\xff")
    assert code == 2 and "not UTF-8" in out["error"]["reason"]


def readme_session() -> list[tuple[str, str]]:
    """README's replay example: each `$ command` (a heredoc included) and its output."""
    text = (Path(__file__).parent.parent / "README.md").read_text()
    block = text.split("Top to bottom, in an empty folder", 1)[1]
    block = block.split("```console\n", 1)[1].split("```\n", 1)[0]
    steps: list[tuple[str, str]] = []
    lines = iter(block.splitlines())
    for line in lines:
        if line.startswith("$ "):
            command = line[2:]
            if command.endswith("<<'EOF'"):
                body = []
                for more in lines:
                    body.append(more)
                    if more == "EOF":
                        break
                command = "\n".join([command, *body])
            steps.append((command, ""))
        else:
            command, out = steps[-1]
            steps[-1] = (command, out + line + "\n")
    return steps


def test_the_readme_replay_example_runs_top_to_bottom(tmp_path: Path) -> None:
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "LANG": "C.UTF-8"}
    status = 0
    steps = readme_session()
    assert len(steps) >= 7
    for command, expected in steps:
        if command == "echo $?":  # the status of the step before, not of this shell
            command = f"echo {status}"
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        status = done.returncode
        assert done.stdout == expected, (command, done.stdout, done.stderr)
