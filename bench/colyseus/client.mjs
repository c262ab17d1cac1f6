// The load client of bench/colyseus/run.sh: GAMES games of 4 bots through
// Colyseus' matchmaking (joinOrCreate), each bot playing its first legal move at
// once, all moves paced to RATE a second (a token bucket without saving up, as
// `moose loadtest --rate`), players joining again when their game ends.
// After WARMUP seconds it measures DURATION seconds: moves answered (`moved`),
// move -> `moved` latency, and the server process' CPU time (/proc/PID/stat).
//
// Usage: node client.mjs --url ws://127.0.0.1:PORT --server-pid PID
//        [--games 200] [--rate 1000] [--warmup 3] [--duration 20]
// Prints one JSON line.
import { readFileSync } from "node:fs";
import { Client } from "@colyseus/sdk";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => (a.startsWith("--") ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []),
);
const url = args.url;
const pid = Number(args["server-pid"]);
const games = Number(args.games ?? 200);
const rate = Number(args.rate ?? 1000);
const warmup = Number(args.warmup ?? 3);
const duration = Number(args.duration ?? 20);
const TICKS = 100; // clock ticks a second (getconf CLK_TCK)

function cpuSeconds(p) {
  const fields = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS; // utime + stime
}

let next = performance.now();
function paced() {
  // The next move's delay in ms (no saving up: a late move earns no burst).
  if (rate <= 0) return 0;
  const now = performance.now();
  const slot = Math.max(next, now);
  next = slot + 1000 / rate;
  return slot - now;
}

const stats = { measuring: false, moves: 0, errors: 0, latencies: [], games: 0 };
const sdk = new Client(url);
let stopping = false;
let ids = 0;

async function bot() {
  while (!stopping) {
    let room;
    try {
      room = await sdk.joinOrCreate("turn");
    } catch (err) {
      stats.errors += 1;
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    const sent = new Map();
    await new Promise((resolve) => {
      room.onMessage("match", () => {});
      room.onMessage("moved", (msg) => {
        const t = sent.get(msg.id);
        sent.delete(msg.id);
        if (stats.measuring && t !== undefined) {
          stats.moves += 1;
          stats.latencies.push(performance.now() - t);
        }
      });
      room.onMessage("error", () => { stats.errors += 1; });
      room.onMessage("event", (msg) => {
        if (msg.view.over) {
          if (stats.measuring) stats.games += 1;
          resolve();
        } else if (msg.legal) {
          const card = msg.legal[0];
          setTimeout(() => {
            const id = ++ids;
            sent.set(id, performance.now());
            room.send("move", { id, card });
          }, paced());
        }
      });
      room.onLeave(() => resolve());
    });
    await room.leave(true).catch(() => {});
  }
}

const bots = Array.from({ length: games * 4 }, () => bot());
await new Promise((r) => setTimeout(r, warmup * 1000));
const cpu0 = cpuSeconds(pid);
const t0 = performance.now();
stats.measuring = true;
await new Promise((r) => setTimeout(r, duration * 1000));
stats.measuring = false;
const seconds = (performance.now() - t0) / 1000;
const cpu = cpuSeconds(pid) - cpu0;
stopping = true;
const lat = stats.latencies.sort((a, b) => a - b);
const q = (p) => (lat.length ? Number(lat[Math.min(lat.length - 1, Math.floor(p * lat.length))].toFixed(2)) : null);
console.log(
  JSON.stringify({
    moves: stats.moves,
    moves_per_second: Number((stats.moves / seconds).toFixed(1)),
    games: stats.games,
    errors: stats.errors,
    server_cpu_percent: Number(((100 * cpu) / seconds).toFixed(1)),
    cpu_ms_per_move: stats.moves ? Number(((1000 * cpu) / stats.moves).toFixed(4)) : null,
    moved_ms: { p50: q(0.5), p95: q(0.95), p99: q(0.99) },
  }),
);
process.exit(0);
