"""Each bot's win share and its 95 % interval, from `moose simulate --record-dir` records.

    python bench/win_share.py DIR [DIR ...]

All the records of every DIR are counted together (several runs of different
seeds make one sample). A shared win is split between its winners, as `moose
simulate` reports it; the interval is the normal approximation over the
per-seat-game shares (each 0, 1/k or 1). Prints one JSON object.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path


def shares(dirs: list[str]) -> dict[str, list[float]]:
    """Every seat-game's share of the win, per bot name."""
    out: dict[str, list[float]] = {}
    for d in dirs:
        for path in sorted(Path(d).glob("*.json")):
            rec = json.loads(path.read_text())
            winners = rec["result"]["winners"]
            for seat, name in enumerate(rec["names"]):
                out.setdefault(name, []).append(1 / len(winners) if seat in winners else 0.0)
    return out


def main() -> None:
    """Print the shares of the record folders named on the command line."""
    report = {}
    for name, xs in shares(sys.argv[1:]).items():
        mean = sum(xs) / len(xs)
        half = 1.96 * statistics.pstdev(xs) / math.sqrt(len(xs))
        report[name] = {
            "seat_games": len(xs),
            "win_share": round(mean, 4),
            "ci95": [round(mean - half, 4), round(mean + half, 4)],
        }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
