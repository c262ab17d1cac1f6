"""Every Redis call of the load test, and only they (tests/test_layers.py): redis-py of
its own, as the package imports nothing of the server, whose calls go through its gateway.

- `urls`: a Redis Cluster URL and its nodes;
- `window`: `RedisProbe`, INFO commandstats and CPU before and after a window, a short
  MONITOR sample that counts the commands clients send per commit (the commands a
  script runs inside Redis are marked `lua` there and left out), the slow log, and
  MEMORY USAGE of keys; `NodesProbe`, the same summed over each node of a cluster;
- `memory`: Redis memory per game (every key of a sample of games: `deployment`
  names them);
- `setup`: Redis made ready for a run: the ratings the matchmaking phase's players
  queue with, the nodes of `--cluster` joined into one, the slow log's threshold.
"""
