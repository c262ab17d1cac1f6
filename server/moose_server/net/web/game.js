// @ts-check
// One game as the page knows it: events taken in seq order, and what they say in words.
//
// The rules stay on the server: the page shows the view and offers the `legal`
// moves it was sent (engine.js only says why a card is not among them, and replays).

import { botName, cardName, duration, roomName, t } from "./i18n.js";

const LOG_KEPT = 60;

export class Game {
  constructor(id, seat = null) {
    this.id = id;
    this.seat = seat; // null: watching
    this.names = [];
    this.bots = [];
    this.ratings = []; // {rating, provisional} or null per seat, as the game started
    this.away = [];
    this.seq = 0;
    this.view = null;
    this.legal = null;
    this.deadline = null;
    this.turnSince = null; // server time the seat to act began to act
    /** @type {{seat: number, deadline: number} | null} another seat's turn that goes on past its deadline */
    this.goesOn = null;
    this.log = [];
    this.missing = null; // why the game cannot be shown (watch refused)
    this.past = null; // the view of the last event taken by `backfill`
    this.record = null;
    /** @type {import("./motion.js").Taken[]} events taken since the table was drawn (board.js) */
    this.recent = [];
    /** @type {import("./motion.js").Taken | null} the last move, highlighted until the next */
    this.lastMove = null;
    /** @type {string | null} the arena tournament of an arena game (arena.js) */
    this.arena = null;
  }

  get over() {
    return Boolean(this.view && this.view.over);
  }

  // Take an `event` message: "ok", "old" (seen already) or "gap" (ask for `sync`).
  take(msg) {
    const event = msg.event || {};
    if (event.kind === "state") {
      if (msg.seq < this.seq) return "old";
    } else if (msg.seq <= this.seq) {
      this.backfill(msg);
      return "old";
    } else if (msg.seq !== this.seq + 1) {
      return "gap";
    }
    const before = this.view;
    this.seq = msg.seq;
    this.view = msg.view;
    if (event.abandoned) {
      // The server ended the game (every player away): the rules' view is not over.
      this.view = { ...msg.view, over: true, abandoned: true, scores: event.scores, winners: [] };
    } else if (event.forfeit) {
      // Lost by a banned seat: over, though not by the rules.
      this.view = { ...msg.view, over: true, forfeit: event.forfeit, scores: event.scores, winners: event.winners || [] };
    }
    if (this.seat === null && msg.view.seat !== null && msg.view.seat !== undefined) this.seat = msg.view.seat;
    this.legal = msg.legal || null;
    this.deadline = msg.deadline || null;
    this.goesOn = null;
    if (event.names) this.names = event.names;
    if (event.bots) this.bots = event.bots;
    if (event.ratings) this.ratings = event.ratings;
    if (event.away) this.away = event.away.slice();
    if (this.away.length !== msg.view.players) this.away = new Array(msg.view.players).fill(false);
    if (event.kind === "away") this.away[event.seat] = true;
    if (event.kind === "back") this.away[event.seat] = false;
    if (!before || before.to_act !== msg.view.to_act || event.kind === "move" || event.kind === "state") {
      this.turnSince = msg.server_time;
    }
    if (event.kind === "state") this.past = null;
    const taken = { event, before, after: this.view, seq: msg.seq };
    this.recent.push(taken);
    if (this.recent.length > 64) this.recent.shift(); // a burst: only its size matters
    if (event.kind === "move") this.lastMove = taken;
    const last = this.log[this.log.length - 1];
    if (event.kind === "state" && last && last.seq === msg.seq) return "ok"; // nothing new to say
    this.log.push(this.line(msg, before, event.kind === "state"));
    if (this.log.length > LOG_KEPT) this.log.shift();
    return "ok";
  }

  // An event from before the `state` the page began with (`sync` since 0, after a
  // reload, in a new tab, when watching): its line goes into the log in its place, and
  // the "following from here" line of that seq gives way to it.
  backfill(msg) {
    const before = this.past;
    this.past = msg.view;
    const at = this.log.findIndex((line) => line.seq === msg.seq);
    if (at >= 0 && !this.log[at].state) return;
    const line = this.line(msg, before);
    if (at >= 0) this.log[at] = line;
    else this.log.push(line);
    this.log.sort((a, b) => a.seq - b.seq);
    if (this.log.length > LOG_KEPT) this.log.splice(0, this.log.length - LOG_KEPT);
  }

  // A line of the log: the event kept, its words made when drawn (in the language of
  // the moment, bot names too: a switch of language redraws the whole log).
  line(msg, before, state = false) {
    const game = this;
    return { seq: msg.seq, state, get text() { return game.describe(msg, before); } };
  }

  // A seat's name as shown, a server bot's in the page's language ("" for none).
  shown(seat) {
    return (this.bots[seat] ? botName(this.names[seat]) : this.names[seat]) || "";
  }

  name(seat) {
    const name = this.shown(seat) || t("seat_n", { n: seat + 1 });
    return seat === this.seat ? `${name} (${t("you")})` : name;
  }

  // A room as a phrase: "your kitchen 2", "bob's kitchen 2", or (`own`) "their kitchen 2".
  place(owner, index, view = this.view, own = false) {
    const room = view && view.houses[owner] ? view.houses[owner].rooms[index] : null;
    const params = { room: room ? roomName(room.type) : "?", n: index + 1, name: this.shown(owner) };
    const key = owner === this.seat ? "place_mine" : own ? "place_theirs" : "place_other";
    return t(key, params);
  }

  // One event in words, for the log. `before`: the view before it (where a moose landed).
  describe(msg, before) {
    const ev = msg.event || {};
    const names = (seats) => seats.map((s) => this.name(s)).join(", ");
    switch (ev.kind) {
      case "start":
        return t("ev_start", { names: names([...Array(ev.players).keys()]), dealer: this.name(ev.dealer) });
      case "state":
        return t("ev_state");
      case "away":
      case "back":
        return t(`ev_${ev.kind}`, { who: this.name(ev.seat) });
      case "over":
        if (ev.abandoned) return t("ev_abandoned");
        if (ev.forfeit) return t("ev_forfeit", { who: names(ev.forfeit), names: names(ev.winners || []) });
        return t("ev_over", { names: names(ev.winners || []) });
      case "move":
        return this.describeMove(ev.move, ev.seat, before || msg.view) + t(`auto_${ev.auto || "bot"}`);
      default:
        return ev.kind;
    }
  }

  describeMove(move, seat, view) {
    const who = this.name(seat);
    const card = move.card ? cardName(move.card) : "";
    switch (move.action) {
      case "discard":
        return t("ev_discard", { who, card });
      case "pass":
        return t("ev_pass", { who });
      case "trap":
      case "allow":
        return t(`ev_${move.action}`, { who });
      default:
        break;
    }
    if (move.card === "door") return t("ev_door", { who, place: this.place(seat, move.room, view, true) });
    if (move.card.startsWith("moose:")) {
      return t("ev_moose", { who, card, place: this.place(move.target, move.room, view) });
    }
    return t("ev_house", { who, card, target: this.name(move.target) });
  }

  // A legal move as a button's text, said to the seat that would make it.
  choice(move) {
    const card = move.card ? cardName(move.card) : "";
    if (move.action === "discard") return t("mv_discard", { card });
    if (move.action === "pass") return t("mv_pass");
    if (move.action === "trap") return t("trap_button");
    if (move.action === "allow") return t("allow_button");
    if (move.card === "door") return t("mv_door", { card, place: this.place(this.seat, move.room) });
    if (move.card.startsWith("moose:")) return t("mv_moose", { card, place: this.place(move.target, move.room) });
    return t("mv_house", { card, target: this.shown(move.target) });
  }

  // A seat's rating as shown: "1612", or "540?" while provisional; "" for none.
  rating(seat) {
    const r = this.ratings[seat];
    return r ? `${r.rating}${r.provisional ? "?" : ""}` : "";
  }

  // A `synced` answer: its `deadline` is the one in force now at its `seq` (an outage
  // may have moved it without an event), so the countdown shows the time really left.
  synced(msg) {
    if (msg.seq === this.seq && "deadline" in msg) this.deadline = this.legal ? msg.deadline || null : null;
  }

  // A `deadline` message: the turn at its `seq` goes on past its deadline (its seat's
  // player lost their connection: "spared"; the server was briefly away: "outage").
  // Ours: the countdown takes it; another seat's counts down too. The log says why
  // (a reason it does not know, as "spared"). False: out of date (another event came).
  told(msg) {
    if (msg.seq !== this.seq || !this.view || typeof msg.deadline !== "number") return false;
    const mine = this.seat !== null && msg.to_act === this.seat;
    if (mine && this.legal) this.deadline = msg.deadline;
    if (!mine) this.goesOn = { seat: msg.to_act, deadline: msg.deadline };
    const game = this;
    const params = () => ({ who: game.name(msg.to_act), time: duration(msg.deadline - msg.server_time) });
    const keys = msg.reason === "outage" ? ["ev_outage_you", "ev_outage"] : ["ev_spared_you", "ev_spared"];
    this.log.push({ seq: msg.seq, state: false, get text() { return t(keys[mine ? 0 : 1], params()); } });
    if (this.log.length > LOG_KEPT) this.log.shift();
    return true;
  }

  // Seconds left to our deadline, or null.
  left(now) {
    return this.deadline ? Math.max(0, this.deadline - now) : null;
  }

  // Another seat's turn that goes on past its deadline: [seat, ms left], or null.
  theirs(now) {
    return this.goesOn ? [this.goesOn.seat, Math.max(0, this.goesOn.deadline - now)] : null;
  }
}
