// bot.js's command line and its saved token.

import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";

export function readToken(file) {
  try {
    return readFileSync(file, "utf8").trim() || null;
  } catch {
    return null; // no token yet: hello by name
  }
}

export function writeToken(file, token) {
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
}

export function forgetToken(file) {
  rmSync(file, { force: true });
}

export const USAGE = `usage: node bot.js [--url URL] [--name NAME] [--token-file FILE] [--games N]
                   [--players N|MIN-MAX | --create N [--add-bot NAME]... | --join CODE
                    | --accept-challenges | --arena ID [--players N|MIN-MAX]]`;

/** The command line's options, checked; null for --help. */
export function options(argv) {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      url: { type: "string", default: process.env.MOOSE_URL ?? "ws://127.0.0.1:8080/ws" },
      name: { type: "string", default: "js-bot" },
      "token-file": { type: "string" },
      games: { type: "string" },
      players: { type: "string" }, // the queue's default 2-4; an arena's its own
      "accept-challenges": { type: "boolean", default: false },
      arena: { type: "string" },
      create: { type: "string" },
      "add-bot": { type: "string", multiple: true, default: [] },
      join: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return null;
  const [min, max = min] = (v.players ?? (v.arena ? "" : "2-4")).split("-").map(Number);
  const opts = {
    url: v.url,
    name: v.name,
    tokenFile: v["token-file"] ?? `${v.name}.token`,
    // A private table plays one game; an arena's bot plays until it is over.
    games: v.create || v.join ? 1 : Number(v.games ?? (v.arena ? Infinity : 1)),
    players: v.players || !v.arena ? [min, max] : null,
    create: v.create === undefined ? null : Number(v.create),
    addBot: v["add-bot"],
    join: v.join ?? null,
    accept: v["accept-challenges"],
    arena: v.arena ?? null,
  };
  const seats = (n) => Number.isInteger(n) && n >= 2 && n <= 6;
  const count = opts.games === Infinity || (Number.isInteger(opts.games) && opts.games >= 1);
  if (!count) throw new Error("--games: a count");
  if (opts.players && (!seats(min) || !seats(max) || min > max)) {
    throw new Error("--players: 2-6 or MIN-MAX");
  }
  if (opts.create !== null && !seats(opts.create)) throw new Error("--create: 2 to 6 seats");
  const ways = [opts.create !== null, opts.join, opts.accept, opts.arena].filter(Boolean);
  if (ways.length > 1) throw new Error("one of --create, --join, --accept-challenges, --arena");
  return opts;
}
