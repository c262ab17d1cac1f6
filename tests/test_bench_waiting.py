"""bench/bench_waiting_scale.py keeps working: run at a tiny size (no figure is judged).

It starts its own valkey-server and `moose serve`, plays one correspondence game
into waiting, clones it, probes the deadline loop, the lobby and a real-time move,
and deletes the clones again.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "bench_waiting_scale.py"


@pytest.mark.slow
def test_the_waiting_games_bench_runs_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "waiting.json"
    cmd = [sys.executable, str(BENCH), "--sizes", "50,20", "--rounds", "2", "--moves", "4"]
    run = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(out.read_text())
    assert [row["waiting"] for row in result["rows"]] == [50, 20]
    for row in result["rows"]:
        assert row["used_memory_per_game"] > 0
        # a clone's stream is the real one's entries, XADDed as the commits did
        assert abs(row["key_bytes"]["events stream"] - result["template"]["events stream"]) < 100
        assert row["my_games_listed"] in (20, 21)  # 20 clones (and a real-time game, unless over)
        assert all(row[probe]["p50"] > 0 for probe in ("tick", "my_games", "games", "move"))
    assert "| waiting games |" in run.stdout
