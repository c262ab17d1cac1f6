#!/usr/bin/env node
// A Moose House bot in JavaScript, written from PROTOCOL.md alone: JSON text
// frames over one WebSocket (the `ws` package), nothing else.
//
// It says hello as a bot with the token it saved (a guest name the first time),
// queues, sits at a private table, accepts challenges or plays in an arena, and
// answers every event whose `legal` is not null with choose(view, legal) from
// choose.js. A dropped socket or a
// restarted server costs it nothing: it reconnects, resumes each game by `sync`
// and resends a move in flight with the same `move_id`, so it is applied once.
//
// stdout: `table CODE` for a table it created, `challenge me: NAME PLAYER` when
// it accepts challenges, `arena ID over` when its arena ended, one `game ID
// over: ...` line per finished game, then `finished N games`. Everything else goes to stderr.
// Exit status: 0 done, 1 refused (bad option, name or code), 3 stopped by the
// server (close 4001, 4003 banned, 4004 session ended).

import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import { choose } from "./choose.js";
import { USAGE, forgetToken, options, readToken, writeToken } from "./options.js";

const PROTOCOL = 1;
// Close codes after which connecting again would not help (PROTOCOL.md, Close codes).
const STOP = new Map([
  [4001, "the account logged out everywhere: this session's token is refused"],
  [4003, "banned"],
  [4004, "a moderator ended the session"],
]);
const RECONNECT_AT_ONCE = new Set([1012, 1013]); // restarting instance; we read too slowly
const TOKEN_REFUSED = new Set(["bad_token", "token_expired", "token_revoked"]);
const TRY_AGAIN = new Set(["rate_limited", "unavailable"]);
// What the players of our address hold (PROTOCOL.md, Limits): it clears when one
// of them ends a game, a table or a session, so ask again after a while.
const HELD = new Set(["too_many_games", "too_many_tables", "too_many_sessions"]);
const HELD_RETRY_MS = 5000;
const MAX_BACKOFF_MS = 5000;
// PROTOCOL.md, Limits: 20 messages a second and 40 at once per socket. A token
// bucket kept under that sends a fast game's moves without one `rate_limited`.
const RATE = 15; // messages a second
const BURST = 30;

const out = (line) => process.stdout.write(`${line}\n`);

/** What the bot knows of one game it has a seat in. */
class Game {
  constructor(id) {
    this.id = id;
    this.seq = 0; // the last event taken
    this.time = null; // its server_time: another one at this seq means the server lost writes
    this.last = null; // the last event taken
    this.syncs = 0; // syncs unanswered: act once every event they resend is here
    this.move = null; // our move for event `move.seq`: {seq, move_id, move, ws}
    this.done = false;
  }
}

/** One bot: a socket at a time, the games it plays, and what it does next. */
class Bot {
  constructor(opts) {
    this.opts = opts;
    this.log = (line) => process.stderr.write(`[${opts.name}] ${line}\n`);
    this.games = new Map();
    this.finished = 0;
    this.ws = null;
    this.player = null;
    this.requests = new Map(); // id -> request sent on this socket and not answered yet
    this.nextId = 0;
    this.failures = 0; // connections in a row that closed before `welcome`
    this.waiting = false; // queued, or seated at a private table not started yet
    this.table = null; // the private table we sit at (its last `table` message)
    this.starting = null; // the code of the table we asked to start
    this.timers = new Set();
    this.outbox = []; // frames waiting for a token of the bucket
    this.stopping = false;
    this.arena = null; // with --arena: its state, and whether we joined or left it
  }

  connect() {
    const ws = new WebSocket(this.opts.url);
    this.ws = ws;
    this.requests.clear();
    this.outbox = []; // what a new socket sends follows from `welcome`
    this.flushing = false;
    [this.tokens, this.filled] = [BURST, Date.now()];
    ws.on("open", () => this.hello());
    ws.on("message", (data, binary) => {
      if (ws === this.ws && !binary) this.receive(JSON.parse(data.toString()));
    });
    ws.on("error", (err) => this.log(`socket: ${err.message}`));
    ws.on("close", (code, reason) => this.closed(ws, code, reason.toString()));
  }

  send(msg) {
    this.outbox.push(JSON.stringify(msg));
    this.flush();
  }

  flush() {
    if (this.ws?.readyState !== WebSocket.OPEN) return; // a new socket starts from `welcome`
    const now = Date.now();
    this.tokens = Math.min(BURST, this.tokens + ((now - this.filled) * RATE) / 1000);
    this.filled = now;
    while (this.outbox.length && this.tokens >= 1) {
      this.tokens -= 1;
      this.ws.send(this.outbox.shift());
    }
    if (this.outbox.length && !this.flushing) {
      this.flushing = true;
      this.later(((1 - this.tokens) * 1000) / RATE, () => {
        this.flushing = false;
        this.flush();
      });
    }
  }

  request(msg) {
    msg.id = ++this.nextId;
    this.requests.set(msg.id, msg);
    this.send(msg);
  }

  later(ms, fn) {
    const timer = setTimeout(() => this.timers.delete(timer) && fn(), ms);
    this.timers.add(timer);
  }

  hello() {
    const token = readToken(this.opts.tokenFile);
    const who = token ? { token } : { name: this.opts.name };
    this.request({ type: "hello", protocol: PROTOCOL, bot: true, ...who });
  }

  receive(msg) {
    const req = this.requests.get(msg.id);
    this.requests.delete(msg.id);
    switch (msg.type) {
      case "welcome": return this.welcome(msg);
      case "match": return this.match(msg);
      case "event": return this.event(msg);
      case "synced": return this.synced(msg);
      case "table": return this.onTable(msg, req);
      case "gone": return this.gone(msg);
      case "challenge_offer": return this.offered(msg);
      case "arena_member": return this.member(msg);
      case "arena": return this.onArena(msg);
      case "error": return this.error(msg, req);
      default: return undefined; // queued, moved, ...: nothing to do
    }
  }

  welcome(msg) {
    this.failures = 0;
    this.player = msg.player;
    writeToken(this.opts.tokenFile, msg.token);
    this.log(`hello: ${msg.name} (${msg.player}) at ${this.opts.url}`);
    for (const id of msg.games) if (!this.games.has(id)) this.games.set(id, new Game(id));
    // From one event before the last we saw: a different server_time there shows
    // that the server lost writes (then we sync again without `since`).
    for (const game of this.games.values()) if (!game.done) this.sync(game, game.seq - 1);
    this.waiting = msg.table !== null;
    if (msg.table) this.onTable(msg.table);
    // A guest is challenged by its player id (PROTOCOL.md, Challenges): say it once.
    if (this.opts.accept && !this.said) out(`challenge me: ${msg.name} ${msg.player}`);
    this.said = true;
    if (this.opts.arena) this.enter(); // a socket watches afresh; a pause is undone
    this.next();
  }

  /** Queue or sit at the table, unless we are playing or waiting already. */
  next() {
    if (this.stopping || this.waiting || [...this.games.values()].some((g) => !g.done)) return;
    const { games, create, join, players, arena, accept } = this.opts;
    const { finished } = this;
    const plural = finished > 1 ? "s" : "";
    if (finished >= games || this.arena?.state === "over") {
      if (this.arena?.state === "over") out(`arena ${arena} over`);
      return this.stop(0, `finished ${finished} game${plural}`);
    }
    if ((create || join) && this.table) return this.stop(1, "the private table is gone");
    if (arena || accept) return undefined; // the arena seats us; a challenge brings a game
    this.waiting = true;
    if (create) return this.request({ type: "create_table", players: create, rated: false });
    if (join) return this.request({ type: "join_table", code: join });
    return this.request({ type: "queue", min_players: players[0], max_players: players[1] });
  }

  match(msg) {
    const known = this.games.get(msg.game);
    if (known && !known.done) return; // the same match again: same game, same seat
    this.games.set(msg.game, new Game(msg.game)); // new, even under an id we saw end
    this.waiting = false;
    this.log(`game ${msg.game}: seat ${msg.seat} of ${msg.players} (${msg.names.join(", ")})`);
    if (this.arena?.joined && this.finished + this.playing() >= this.opts.games) {
      this.arena.joined = false; // our last game: be seated no more (it is played out)
      this.arena.left = true;
      this.request({ type: "leave_arena", arena: this.opts.arena });
    }
  }

  playing() {
    return [...this.games.values()].filter((g) => !g.done).length;
  }

  /** A challenge to us: accept it while --games has room for its game, else decline. */
  offered(msg) {
    if (msg.status !== "open" || msg.to_player !== this.player || msg.id !== undefined) return;
    const room = this.opts.accept && this.finished + this.playing() < this.opts.games;
    this.log(`challenge ${msg.challenge} from ${msg.from}: ${room ? "accepted" : "declined"}`);
    if (room) this.request({ type: "challenge_accept", challenge: msg.challenge });
    else this.request({ type: "challenge_decline", challenge: msg.challenge, reason: "later" });
  }

  /** Join the arena (again) and watch it: its `arena` pushes say when it is over. */
  enter() {
    this.arena ??= { state: null, joined: false, left: false, joining: false };
    if (this.arena.left) return;
    const [min, max] = this.opts.players ?? [];
    const sizes = min === undefined ? {} : { min_players: min, max_players: max };
    this.arena.joining = true;
    this.request({ type: "join_arena", arena: this.opts.arena, ...sizes });
    this.request({ type: "watch_arena", arena: this.opts.arena });
  }

  member(msg) {
    this.arena.joining = false;
    this.arena.joined = msg.state === "wait";
    this.log(`arena ${msg.arena}: ${msg.state}${msg.playing ? ", playing" : ""}`);
  }

  /** The arena as it is now: join again if it paused us, stop once it is over. */
  onArena(msg) {
    if (msg.arena.id !== this.opts.arena) return;
    this.arena.state = msg.arena.state;
    const mine = msg.standings.find((s) => s.player === this.player);
    // PROTOCOL.md: a seat away when its game ended pauses its member; join_arena undoes it.
    if (mine?.state === "paused" && msg.arena.state === "running" && !this.arena.left) {
      if (!this.arena.joining) this.enter();
    }
    this.next();
  }

  event(msg) {
    const game = this.games.get(msg.game);
    if (!game) return;
    if (game.done) {
      // Only a state can reopen a game we saw end: the server lost its last moves.
      if (msg.event.kind !== "state" || msg.view.over) return;
      [game.done, this.finished] = [false, this.finished - 1];
    }
    if (msg.event.kind === "state") {
      game.time = null; // a state replaces what we knew, whatever its seq
      if (game.move) game.move.ws = null; // a move it shows us to make again is resent
    } else if (msg.seq <= game.seq) {
      if (msg.seq === game.seq && game.time !== null && msg.server_time !== game.time) {
        this.sync(game); // not the event we saw at this seq: take the state
      }
      return;
    } else if (msg.seq > game.seq + 1) {
      if (game.syncs === 0) this.sync(game, game.seq); // a gap: fetch what we missed
      return;
    } else {
      game.time = msg.server_time;
    }
    game.seq = msg.seq;
    game.last = msg;
    if (msg.view.over) this.finish(game, msg.view);
    else this.act(game);
  }

  sync(game, since) {
    game.syncs += 1;
    this.request({ type: "sync", game: game.id, ...(since >= 1 ? { since } : {}) });
  }

  synced(msg) {
    const game = this.games.get(msg.game);
    if (!game || game.done) return;
    game.syncs = Math.max(0, game.syncs - 1);
    if (msg.seq > game.seq && game.syncs === 0) this.sync(game, game.seq);
    else this.act(game);
  }

  /** Answer the last event if it asks us for a move (and no sync is under way). */
  act(game) {
    const event = game.last;
    if (!event || event.legal === null || game.syncs > 0) return;
    if (game.move?.seq !== event.seq) {
      const move = choose(event.view, event.legal);
      game.move = { seq: event.seq, move_id: randomUUID(), move, ws: null };
    }
    if (game.move.ws === this.ws) return; // sent on this socket already
    game.move.ws = this.ws; // resent as it was on a new socket: the server applies it once
    const { seq, move_id, move } = game.move;
    this.request({ type: "move", game: game.id, seq, move_id, move });
  }

  finish(game, view) {
    game.done = true;
    this.finished += 1;
    const result = view.winners.includes(view.seat) ? "won" : "lost";
    const [scores, winners] = [view.scores, view.winners].map((a) => JSON.stringify(a));
    out(`game ${game.id} over: seat ${view.seat}, scores ${scores}, winners ${winners}: ${result}`);
    this.next();
  }

  onTable(msg, req) {
    if (req?.type === "create_table") {
      out(`table ${msg.code}`);
      for (const bot of this.opts.addBot) this.request({ type: "add_bot", code: msg.code, bot });
    }
    this.table = msg;
    const full = msg.seats.length > 0 && !msg.seats.includes(null);
    if (msg.host === this.player && full && this.starting !== msg.code) {
      this.starting = msg.code; // the host starts the table once every seat is taken
      this.request({ type: "start_table", code: msg.code });
    }
  }

  gone(msg) {
    if (!this.games.delete(msg.game)) return;
    this.log(`game ${msg.game} is gone: the server lost it`);
    this.next();
  }

  error(msg, req) {
    const on = req ? ` (${req.type})` : "";
    this.log(`error ${msg.code}${on}: ${msg.message}`);
    if (req && (TRY_AGAIN.has(msg.code) || HELD.has(msg.code))) {
      const ws = this.ws; // the same request again, on this socket only
      const wait = msg.retry_after ?? (HELD.has(msg.code) ? HELD_RETRY_MS : 1000);
      return this.later(wait, () => ws === this.ws && this.request(req));
    }
    if (!req) return undefined; // `banned` without id: the close 4003 follows
    const game = this.games.get(req.game);
    switch (req.type) {
      case "hello":
        if (!TOKEN_REFUSED.has(msg.code)) return this.stop(msg.code === "banned" ? 3 : 1, "");
        forgetToken(this.opts.tokenFile); // the socket stays open: hello again, by name
        return this.request({ type: "hello", protocol: PROTOCOL, bot: true, name: this.opts.name });
      case "sync":
        if (!game) return undefined;
        game.syncs = Math.max(0, game.syncs - 1);
        if (msg.code === "no_such_game" || msg.code === "not_in_game") this.gone(req);
        return undefined;
      case "move": // the game moved on without us: catch up, and act on what is new
        return game && !game.done ? this.sync(game, game.seq) : undefined;
      case "queue":
        return msg.code === "already_queued" ? undefined : this.stop(1, "");
      case "challenge_accept": // expired or cancelled meanwhile: wait for the next one
      case "challenge_decline":
      case "leave_arena":
        return undefined;
      case "join_arena":
        this.arena.joining = false;
        if (msg.code !== "arena_over" || this.arena.state === null) return this.stop(1, "");
        this.arena.state = "over"; // the window closed while we were away
        return this.next();
      default:
        return this.stop(1, ""); // a table refused: bad_code, table_full, ...
    }
  }

  closed(ws, code, reason) {
    if (ws !== this.ws) return;
    this.ws = null;
    this.waiting = false; // a closed socket leaves the queue; `welcome.table` tells the rest
    this.starting = null; // a start lost with the socket is asked again if the table waits
    for (const game of this.games.values()) game.syncs = 0;
    if (this.arena) this.arena.joining = false; // welcome joins again
    if (this.stopping) return;
    if (STOP.has(code)) return this.stop(3, `closed ${code}: ${STOP.get(code)}`);
    // Full jitter (PROTOCOL.md, "Reconnecting"): bots of a dead instance come back spread out.
    const backoff = Math.random() * Math.min(MAX_BACKOFF_MS, 100 * 2 ** this.failures);
    const wait = RECONNECT_AT_ONCE.has(code) ? 0 : backoff;
    this.failures += 1;
    const why = reason ? ` (${reason})` : "";
    this.log(`closed ${code}${why}: reconnecting in ${Math.round(wait)} ms`);
    this.later(wait, () => this.connect());
  }

  stop(status, why) {
    if (this.stopping) return;
    this.stopping = true;
    if (why) (status === 0 ? out : this.log)(why);
    process.exitCode = status;
    for (const timer of this.timers) clearTimeout(timer);
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.close(1000);
    else this.ws?.terminate();
  }
}

function main() {
  let opts;
  try {
    opts = options(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    process.exit(1);
  }
  if (opts === null) return out(USAGE);
  return new Bot(opts).connect();
}

main();
