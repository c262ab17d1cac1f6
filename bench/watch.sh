#!/usr/bin/env bash
# Run `moose loadtest` against a `moose serve` whose event loop is watched (bench/loopwatch.py).
# usage: bench/watch.sh OUT_PREFIX [loadtest flags...]
# Starts a private valkey-server (unix socket, AOF, as `moose serve` runs it by
# default) and the watched server on a free port, runs the load test, then
# stops both. Writes OUT_PREFIX.json (the load test's report), OUT_PREFIX.loop.json
# (loop turns, callbacks, collections), OUT_PREFIX.slowlog.json (Redis SLOWLOG of
# commands over 1 ms and LATENCY LATEST) and OUT_PREFIX.serve.log.
# PYSPY=1 also records the server with py-spy (OUT_PREFIX.raw, collapsed stacks).
# CODE=FOLDER runs the server from another revision's client/ and server/ (e.g. from
# `git archive REV client server | tar -x -C FOLDER`); the load test is this tree's.
set -euo pipefail
out=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python}
data=$(mktemp -d)
server_bin=$($py -c 'from moose_server.storage.embedded import redis_server_binary as b; print(b())')
sock=$data/redis.sock
"$server_bin" --port 0 --unixsocket "$sock" --dir "$data" --appendonly yes \
  --save '' --daemonize no --logfile "$data/redis.log" --slowlog-log-slower-than 1000 \
  --slowlog-max-len 1024 --latency-monitor-threshold 5 &
redis=$!
port=$($py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
ulimit -n "$(ulimit -Hn)"
code=${CODE:+$CODE/client:$CODE/server}
PYTHONPATH=$code $py "$here/loopwatch.py" "$out.loop.json" --port "$port" --redis "unix://$sock" \
  --data-dir "$data" --log-level ${LOG_LEVEL:-WARNING} >"$out.serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; kill $redis; wait $redis; rm -rf "$data"' EXIT
for _ in $(seq 200); do
  curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
  sleep 0.1
done
if [ "${PYSPY:-0}" = 1 ]; then
  py-spy record --pid "$server" --rate 100 --format raw --output "$out.raw" --nonblocking \
    >/dev/null 2>&1 &
  spy=$!
fi
$py -m moose loadtest --url "ws://127.0.0.1:$port/ws" --server-pid "$server" \
  --redis-url "unix://$sock" --json "$@" >"$out.json"
[ "${PYSPY:-0}" = 1 ] && { kill -INT $spy; wait $spy || true; }
$py - "unix://$sock" >"$out.slowlog.json" <<'PY'
import json, sys, redis
r = redis.Redis.from_url(sys.argv[1])
log = [{"id": e["id"], "ms": e["duration"] / 1000, "command": e["command"].decode(errors="replace")[:120]}
       for e in r.slowlog_get(1024)]
print(json.dumps({"slowlog": log, "latency_latest": [list(map(str, x)) for x in r.execute_command("LATENCY", "LATEST")]}, indent=1))
PY
