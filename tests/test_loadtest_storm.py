"""`moose loadtest --storm`: an instance killed under its players, who all come back.

A small storm of the real tool (three spawned instances over one Redis, the last
killed with SIGKILL): every player of the dead instance reconnects to the others
and resyncs, and no seat of theirs is played by timeout. No timed assertions.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from moose import cli
from moose_loadtest.report import summary_rows
from moose_loadtest.run import Options
from moose_loadtest.storm import storm_figures


def test_the_figures_of_a_storm_from_the_players_records() -> None:
    kill = 100.0
    records = [
        (
            True,
            {"lost": 100.01, "attempts": 1, "welcomed": 100.2, "instance": 0, "resynced": 100.3},
        ),
        (
            True,
            {"lost": 100.01, "attempts": 3, "welcomed": 101.0, "instance": 1, "resynced": 101.5},
        ),
        (True, {"lost": 100.01, "attempts": 9}),  # never came back
        (False, None),
    ]
    storm = {
        "players": records,
        "timeouts": [(True, "g_1", 7), (False, "g_2", 9)],
        "survivor_moves": [(96.0, 5.0), (99.9, 7.0), (100.5, 40.0), (103.0, 1.0)],
    }
    out = storm_figures(storm, kill, Options(duration=10.0), 3)
    assert out["players_of_dead_instance"] == 3 and out["back"] == 2
    assert out["kill_to_last_resynced_s"] == 1.5
    assert out["back_on_instance"] == {0: 1, 1: 1}
    assert out["turns_lost"] == 1 and out["timeouts_of_others"] == 1
    assert out["survivors_move_ms_before"]["max"] == 7.0
    assert out["survivors_move_ms_during"]["max"] == 40.0  # 103.0 is after the last resync
    assert storm_figures(storm, None, Options(), 3) == {"killed": False}


def test_a_storm_needs_instances_the_load_test_started(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (
        ["--url", "ws://127.0.0.1:1/ws", "--storm", "240"],
        ["--spawn", "--storm", "240"],
        ["--spawn", "--instances", "3", "--storm", "4"],
    ):
        assert cli.main(["loadtest", *args]) == 2
        assert "--storm N needs --spawn" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_storm_brings_every_player_of_the_dead_instance_back_and_loses_no_turn() -> None:
    cmd = [
        sys.executable,
        "-m",
        "moose",
        "loadtest",
        "--spawn",
        "--instances",
        "3",
        "--storm",
        "240",
        "--warmup",
        "2",
        "--duration",
        "10",
        "--drain",
        "60",
        "--json",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    storm = report["storm"]
    assert storm["killed"] and storm["instances"] == 3
    assert storm["players_of_dead_instance"] == 80  # round-robin: a third of 240
    assert storm["back"] == 80 and storm["kill_to_last_resynced_s"] is not None
    assert set(storm["back_on_instance"]) == {"0", "1"}  # spread over both others
    assert storm["turns_lost"] == 0 and storm["timeouts_of_others"] == 0
    assert storm["reconnects_of_others"] == 0
    # A failed attempt (the instance going down) is retried; nothing else went wrong.
    assert all(e.startswith("reconnect attempt") for e in storm["errors"]), storm["errors"]
    assert storm["games"] > 0 and storm["survivors_move_ms_before"]["p99"] is not None
    assert storm["survivors_move_ms_during"]["p99"] is not None
    rows = dict(summary_rows(report))
    assert rows["  players of the dead instance, back"] == "80, 80"
