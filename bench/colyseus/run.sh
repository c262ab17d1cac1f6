#!/usr/bin/env bash
# CPU per move of moose serve (with its Redis) against a Colyseus 0.18 server
# playing a 4-seat turn game (server.mjs, driven by client.mjs), at the same move
# rate, in interleaved rounds (ours then Colyseus, then Colyseus then ours, ...).
# CPU per move = process CPU time / moves answered in the window: `moose serve`
# plus its Redis for ours, the node process for Colyseus.
#
#   bench/colyseus/run.sh --rate 1000 [--rounds 3] [--games 200] [--duration 20]
#
# Needs `moose` (the server extra) on PATH and node + npm; installs Colyseus with
# `npm ci` into bench/colyseus/node_modules. Prints each round and the medians.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rate=1000 rounds=3 games=200 duration=20 warmup=3 port=25680
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) rate="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --games) games="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
(cd "$here" && npm ci --no-audit --no-fund --silent)
out="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$out"' EXIT

ours() {  # one round of moose serve + Redis: prints its CPU ms per move
  moose loadtest --spawn --games "$games" --rate "$rate" --warmup "$warmup" \
    --duration "$duration" --drain 10 --no-ceilings --monitor 0 --json >"$out/ours.json" 2>/dev/null
  python3 - "$out/ours.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cpu = r["server"]["cpu_percent"] + r["redis"]["cpu_percent"]
rate = r["moves_per_second"]
print(f"{10 * cpu / rate:.4f} {rate:.0f} {r['move_latency_ms']['p99']} server {r['server']['cpu_percent']} % + Redis {r['redis']['cpu_percent']} %")
PY
}

theirs() {  # one round of the Colyseus server: prints its CPU ms per move
  node "$here/server.mjs" "$port" >/dev/null &
  server=$!
  for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
  node "$here/client.mjs" --url "ws://127.0.0.1:$port" --server-pid "$server" --games "$games" \
    --rate "$rate" --warmup "$warmup" --duration "$duration" >"$out/theirs.json"
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
  python3 - "$out/theirs.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{r['cpu_ms_per_move']:.4f} {r['moves_per_second']:.0f} {r['moved_ms']['p99']} server {r['server_cpu_percent']} %, errors {r['errors']}")
PY
}

: >"$out/ours.txt"; : >"$out/theirs.txt"
echo "rate $rate moves/s, $games games of 4, ${duration} s windows, $rounds rounds; columns: CPU ms/move, moves/s, move p99 ms"
for i in $(seq "$rounds"); do
  if [ $((i % 2)) -eq 1 ]; then order="ours theirs"; else order="theirs ours"; fi
  for side in $order; do
    line="$($side)"
    echo "$line" >>"$out/$side.txt"
    printf 'round %s %-7s %s\n' "$i" "$side" "$line"
  done
done
python3 - "$out/ours.txt" "$out/theirs.txt" <<'PY'
import statistics, sys
ours, theirs = ([float(l.split()[0]) for l in open(p)] for p in sys.argv[1:])
a, b = statistics.median(ours), statistics.median(theirs)
print(f"median CPU ms/move: moose serve + Redis {a:.4f}, Colyseus {b:.4f}; ours/Colyseus {a / b:.2f}x")
PY
