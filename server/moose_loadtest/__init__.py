"""`moose loadtest`: bot players, worker processes, phases, probes and ceilings.

- `players`: lean msgpack bot players that time every step (`Job`, `Tally`);
- `run`: worker processes, the start barrier, merging the tallies;
- `phases`: the games, matchmaking and connections phases of one run;
- `lobby`, `lobby_phase`: the lobby mode (`--lobby`), players at a human pace in a
  lobby that grows step by step, measured at each size;
- `probes`: server CPU and memory, Redis INFO and MONITOR, `--spawn`;
- `ceilings`: the bare WebSocket and bare Redis ceilings measured beside it.
"""
