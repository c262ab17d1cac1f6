#!/usr/bin/env bash
# Profile a `moose serve` under `moose loadtest` with py-spy.
# usage: bench/profile.sh OUT_PREFIX REDIS_URL [loadtest flags...]
# Starts a server on a free port over REDIS_URL, records it with py-spy for the
# load test's run, writes OUT_PREFIX.svg (flame graph), OUT_PREFIX.txt (top
# functions), OUT_PREFIX.json (the load test's report), then stops the server.
set -euo pipefail
out=$1; redis=$2; shift 2
py=${PYTHON:-/work/venv/bin/python}
spy=${PYSPY:-$(dirname "$py")/py-spy}
port=$($py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
data=$(mktemp -d)
$py -m moose serve --port "$port" --redis "$redis" --data-dir "$data" --log-level WARNING \
  >"$out.serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
  sleep 0.1
done
"$spy" record --pid "$server" --rate 200 --format raw --output "$out.raw" ${PYSPY_FLAGS---nonblocking} \
  >/dev/null 2>&1 &
spy_pid=$!
$py -m moose loadtest --url "ws://127.0.0.1:$port/ws" --server-pid "$server" \
  --redis-url "$redis" --no-ceilings --json "$@" >"$out.json"
kill -INT $spy_pid; wait $spy_pid || true
# Self time per function (leaf frames), from the collapsed stacks.
$py - "$out.raw" >"$out.txt" <<'PY'
import sys, collections
self_t, total_t, n = collections.Counter(), collections.Counter(), 0
for line in open(sys.argv[1]):
    stack, _, count = line.rstrip().rpartition(" ")
    frames = stack.split(";")
    c = int(count); n += c
    self_t[frames[-1]] += c
    for f in set(frames):
        total_t[f] += c
print(f"{n} samples\n-- self --")
for f, c in self_t.most_common(40):
    print(f"{100*c/n:5.1f}% {f}")
print("-- total --")
for f, c in total_t.most_common(60):
    print(f"{100*c/n:5.1f}% {f}")
PY
