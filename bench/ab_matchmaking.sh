#!/bin/bash
# Interleaved A/B of the matchmaking phase (2,000 players queued at once): the same load
# generator (this work tree's `moose loadtest --url ... --redis-url ...`) against server A
# (the code in folder $1, holding client/ and server/, e.g. a `git worktree` of main) and
# server B (this work tree), rounds A1 B1 A2 B2 A3 B3. Reports: $OUT/abmm-{A,B}-N.json.
#   bench/ab_matchmaking.sh /tmp/mainwt /tmp
set -u
A=$1 OUT=${2:-/tmp}
cd "$(dirname "$0")/.."
run() {  # $1 = A|B, $2 = round
  d=$OUT/abmm-$1-$2; rm -rf "$d"
  if [ "$1" = A ]; then PP=$A/client:$A/server; else PP=; fi
  PYTHONPATH=$PP python -m moose serve --port 18950 --data-dir "$d" > "$d.serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 60); do curl -sf http://127.0.0.1:18950/readyz >/dev/null && break; sleep 0.5; done
  timeout 600 python -m moose loadtest --url ws://127.0.0.1:18950/ws \
    --redis-url "unix://$d/redis/redis.sock" --server-pid $pid --games 0 --matchmaking 2000 \
    --json > "$d.json" 2> "$d.err"
  kill -INT $pid; wait $pid
}
for i in 1 2 3; do run A $i; run B $i; done
