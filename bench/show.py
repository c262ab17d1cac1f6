"""Print the headline figures of `moose loadtest --json` reports: python bench/show.py FILE..."""

import json
import sys

for path in sys.argv[1:]:
    with open(path) as f:
        r = json.load(f)
    print(f"== {path}")
    for k in (
        "moves_per_second",
        "move_latency_ms",
        "event_latency_ms",
        "all_seats_latency_ms",
        "matchmaking_wait_ms",
        "games",
        "errors",
        "server",
        "load_generator",
    ):
        if k in r:
            print(f"  {k}: {r[k]}")
    if r.get("redis"):
        rd = r["redis"]
        trips = rd.get("round_trips") or {}
        print(
            f"  redis: {rd['commands_per_move']} commands/move, cpu {rd['cpu_percent']}%, "
            f"round trips/commit {trips.get('per_commit')} {trips.get('client_commands')}"
        )
    for name, c in (r.get("ceilings") or {}).items():
        if c:
            lat = c.get("move_latency_ms") or c.get("latency_ms")
            print(
                f"  ceiling {name}: {c['moves_per_second']} moves/s, ratio {c['ratio']}, "
                f"latency {lat}, errors {c.get('errors')}"
            )
    for k in ("matchmaking", "connections", "warnings"):
        if k in r:
            print(f"  {k}: {r[k]}")
