"""`moose loadtest`: bot players, worker processes, phases, probes and ceilings.

A package of its own: it uses the client library (`moose`), the public protocol,
and what it measures from outside (/metrics, Redis INFO, MONITOR, the slow log,
MEMORY USAGE); it imports nothing of `moose_server` (tests/test_loadtest.py
checks).

- `command`: the `moose loadtest` command line, progress bar and summary table;
- `players`: lean msgpack bot players that time every step (`Job`, `Tally`);
- `run`: worker processes, the start barrier, merging the tallies;
- `phases`: the games, matchmaking and connections phases of one run;
- `lobby`, `lobby_phase`: the lobby mode (`--lobby`), players at a human pace in a
  lobby that grows step by step, measured at each size;
- `processes`: the processes started and measured (ports, readiness, stopping; CPU
  and memory by pid) and the machine; `spawned`: the `moose serve` of `--spawn`;
- `histograms`: the server's /metrics histograms over a window;
- `probes`: every Redis call of the load test (a package): INFO and MONITOR over a
  window, the slow log, memory per game, ratings seeded, a cluster joined;
- `cluster`: the Redis Cluster of `--spawn --cluster` (three valkey-server nodes);
- `scale`: rounds spread over several instances, or over a Redis Cluster, against a baseline;
- `ceilings`: the bare WebSocket server of the socket ceiling (the storage
  ceiling is the server's: `moose_server.play.ceiling`, run as a program);
- `deployment`: what the server documents that the load test relies on
  (settings' defaults, key names, where its bundled Redis listens);
- `housekeeping`: the workers' own garbage collection and loop-lag watch.
"""
