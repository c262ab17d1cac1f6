#!/bin/bash
# Interleaved A/B of seats spread over two instances: the same load generator (this work
# tree's `moose loadtest --url A --url B ...`, which runs rounds of every player on the
# first instance and rounds of players spread over both, interleaved) against two
# `moose serve` over one fresh Redis of code A (folder $1 holding client/ and server/,
# e.g. `git archive main | tar -x -C /tmp/main`) and of code B (this work tree), rounds
# B1 A1 A2 B2. Reports: $OUT/abinst-{A,B}-N.json; more flags go to `moose loadtest`.
#   bench/ab_instances.sh /tmp/main /tmp --games 200 --duration 10 --rounds 2 --no-ceilings --monitor 0
set -u
A=$1 OUT=$2
shift 2
FLAGS=("$@")  # for `moose loadtest`
cd "$(dirname "$0")/.."
BIN=$(python -c 'from moose_server.storage.embedded import redis_server_binary as b; print(b())')
run() {  # $1 = A|B, $2 = round
  d=$OUT/abinst-$1-$2; rm -rf "$d"; mkdir -p "$d"
  if [ "$1" = A ]; then PP=$A/client:$A/server; else PP=; fi
  "$BIN" --port 18960 --bind 127.0.0.1 --dir "$d" --save '' --appendonly no --daemonize yes \
    --logfile "$d/redis.log"
  sleep 0.5
  export MOOSE_TOKEN_SECRET=$(python -c 'import secrets; print(secrets.token_urlsafe(32))')
  args=() pids=()
  for i in 1 2; do
    MOOSE_REDIS_URL=redis://127.0.0.1:18960/0 PYTHONPATH=$PP python -m moose serve \
      --port $((18960 + i)) --data-dir "$d/d$i" > "$d/serve$i.log" 2>&1 &
    pids+=($!) args+=(--url ws://127.0.0.1:$((18960 + i))/ws --server-pid $!)
  done
  for i in 1 2; do
    for _ in $(seq 60); do curl -sf http://127.0.0.1:$((18960 + i))/readyz >/dev/null && break; sleep 0.5; done
  done
  timeout 900 python -m moose loadtest "${args[@]}" --redis-url redis://127.0.0.1:18960/0 \
    --json "${FLAGS[@]}" > "$d.json" 2> "$d.err"
  kill -INT "${pids[@]}"; wait "${pids[@]}"
  python -c 'import redis; redis.Redis(port=18960).shutdown(nosave=True)' 2>/dev/null
}
run B 1; run A 1; run A 2; run B 2
