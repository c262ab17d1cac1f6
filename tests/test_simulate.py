"""Tests for `moose simulate`, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moose import rules

from helpers import replay

pytestmark = pytest.mark.slow  # each test runs `moose simulate`


def simulate(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m moose simulate ARGS` and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "moose", "simulate", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def simulate_json(*args: str) -> dict[str, Any]:
    """Run `moose simulate --json ARGS` and parse its one JSON object."""
    proc = simulate("--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_json_reports_games_speed_and_each_bot() -> None:
    proc = simulate("--json", "--players", "3", "--games", "12", "--bots", "greedy,random,cautious")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no progress bar when stderr is not a terminal
    out = json.loads(proc.stdout)
    assert out["games"] == 12
    assert out["players"] == 3
    assert out["seconds"] > 0 and out["games_per_second"] > 0
    assert out["baseline_win_rate"] == pytest.approx(1 / 3)
    assert list(out["bots"]) == ["greedy", "random", "cautious"]
    for bot in out["bots"].values():
        assert bot["seat_games"] == 12
        assert 0 <= bot["win_share"] <= bot["win_rate"] <= 1
        assert bot["mean_score"] >= 0
    # Shares split every game's win exactly once.
    assert sum(b["win_share"] * b["seat_games"] for b in out["bots"].values()) == pytest.approx(12)


def test_one_bot_name_fills_every_seat() -> None:
    out = simulate_json("--players", "5", "--games", "4", "--bots", "random", "--seed", "1")
    assert out["lineup"] == ["random"] * 5
    assert out["bots"]["random"]["seats"] == 5
    assert out["bots"]["random"]["seat_games"] == 20


def test_same_seed_same_results_whatever_the_workers() -> None:
    args = ("--players", "4", "--games", "60", "--seed", "42")
    one = simulate_json(*args)
    again = simulate_json(*args)
    two = simulate_json(*args, "--workers", "2")
    assert one["seed"] == 42
    assert one["bots"] == again["bots"] == two["bots"]


def test_the_search_bot_plays_with_the_budget_it_is_given() -> None:
    # A smoke test: the win rates belong in BENCHMARKS.md, not here.
    bots = "mcts:6,greedy,mcts"
    out = simulate_json("--players", "3", "--games", "3", "--bots", bots, "--seed", "5")
    assert list(out["bots"]) == ["mcts:6", "greedy", "mcts"]
    for bot in out["bots"].values():
        assert bot["seat_games"] == 3
    assert sum(b["win_share"] * b["seat_games"] for b in out["bots"].values()) == pytest.approx(3)


def test_table_output_names_the_bots_and_the_rate() -> None:
    proc = simulate("--players", "2", "--games", "6", "--bots", "greedy,random", "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    for text in ("greedy", "random", "win rate", "win share", "mean score", "games/s", "seed 3"):
        assert text in proc.stdout


def test_record_dir_holds_records_that_replay_to_their_result(tmp_path: Path) -> None:
    out_dir = tmp_path / "records"
    out = simulate_json(
        "--players",
        "3",
        "--games",
        "5",
        "--bots",
        "greedy,random,random",
        "--seed",
        "9",
        "--record-dir",
        str(out_dir),
    )
    files = sorted(out_dir.glob("*.json"))
    assert len(files) == 5
    names_seen = []
    for path in files:
        record = json.loads(path.read_text())
        assert set(record) == {"players", "dealer", "deck", "moves", "names", "result"}
        state = replay(record)
        assert rules.is_over(state)
        assert record["result"] == {
            "scores": rules.scores(state),
            "winners": rules.winners(state),
        }
        names_seen.append(record["names"])
    # The line-up turns one seat per game, so greedy is not stuck in seat 0.
    assert {names.index("greedy") for names in names_seen} == {0, 1, 2}
    assert out["record_dir"] == str(out_dir)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bots", "greedy,clever"], "unknown bot(s): 'clever' (known bots: cautious, greedy"),
        (["--bots", "mcts:lots"], "unknown bot(s): 'mcts:lots'"),
        (["--players", "3", "--bots", "greedy,random"], "2 bots for 3 players"),
        (["--players", "7"], "--players: must be from 2 to 6, not 7"),
        (["--players", "1"], "--players: must be from 2 to 6, not 1"),
        (["--games", "0"], "--games: must be at least 1, not 0"),
        (["--games", "many"], "--games: not a whole number: 'many'"),
        (["--workers", "0"], "--workers: must be at least 1, not 0"),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_error(args: list[str], message: str) -> None:
    proc = simulate(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "moose simulate: error:" in proc.stderr
    assert message in proc.stderr


def test_record_dir_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "a-file"
    path.write_text("")
    proc = simulate("--games", "1", "--record-dir", str(path))
    assert proc.returncode == 2
    assert "is not a directory" in proc.stderr
