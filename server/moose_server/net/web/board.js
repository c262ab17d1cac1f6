// @ts-check
// The game screen: the turn and your clock (kept in view), the card table (felt.js,
// drawn from table.js's model), your moves, the log and the end. The table element
// stays from one draw to the next and only what changed is redrawn (dom.js `morph`),
// so animations (animate.js) and focus survive the server's events.

import { before as animateBefore, drop as dropAnimations } from "./animate.js";
import { armed, mark, muted, notify, setMuted, sound } from "./cues.js";
import { h, icon, morph } from "./dom.js";
import { whyNot } from "./engine.js";
import { handCards, piles, seatPanel } from "./felt.js";
import { cardName, count, duration, roomName, t } from "./i18n.js";
import { ratingChange, seatName } from "./pages.js";
import { tieBreakText } from "./ending.js";
import { cues, tableModel } from "./table.js";

export { roomTile } from "./felt.js";

/** Within this many ms of the last draw, the next waits for the next frame. */
const FRAME_MS = 16;

/**
 * The game drawn: its element, what was chosen, what was said, when it was drawn and
 * the frame a coalesced redraw waits for.
 * @type {{id: string, el: HTMLElement, selected: string | null, at: number, due: number,
 *   cue: {mine: boolean, pending: any, low: boolean} | null} | null}
 */
let drawn = null;

/**
 * The game screen; the same element from one call to the next for the same game.
 * ctx: {game, selected, now, online, select(card), play(move), back(), leave(), replay(), download}
 * @param {any} ctx
 * @returns {HTMLElement}
 */
export function renderGame(ctx) {
  const { game } = ctx;
  if (game.missing) return missing(ctx);
  if (!game.view) return h("section", { class: "panel" }, t("status_connecting"));
  const start = performance.now();
  // Events that come within a frame of the last draw (a reconnect's burst) are drawn
  // together at the next frame: one draw, not one per event. A hidden tab has no
  // frames: it draws at once (its title and notification must not wait).
  if (drawn && drawn.id === game.id && start - drawn.at < FRAME_MS && !document.hidden && ctx.redraw) {
    const later = drawn;
    if (!later.due) later.due = requestAnimationFrame(() => { later.due = 0; later.at = 0; ctx.redraw(); });
    return later.el;
  }
  const model = tableModel(game, ctx.selected, ctx.now());
  const fresh = drawGame(ctx, model);
  const taken = game.recent.splice(0);
  if (!drawn || drawn.id !== game.id) {
    dropAnimations();
    if (drawn && drawn.due) cancelAnimationFrame(drawn.due);
    drawn = { id: game.id, el: fresh, selected: null, at: 0, due: 0, cue: null };
  } else {
    animateBefore(drawn.el, taken);
    morph(drawn.el, fresh);
  }
  if (ctx.selected && ctx.selected !== drawn.selected) showTargets(drawn.el);
  drawn.selected = ctx.selected;
  drawn.at = performance.now();
  tell(ctx, model);
  // What one draw costs (bench/bench_page.py reads these).
  performance.measure("table-draw", { start });
  if (performance.getEntriesByName("table-draw").length > 200) performance.clearMeasures("table-draw");
  return drawn.el;
}

// A card was chosen: its first target comes into view between the turn bar (sticky at
// the top) and the hand (sticky at the bottom of a phone's screen), unless it is there.
/** @param {HTMLElement} el */
function showTargets(el) {
  requestAnimationFrame(() => {
    const first = el.querySelector('[data-testid="target"]');
    if (!first) return;
    const bar = el.querySelector(".status");
    const hand = el.querySelector(".hand");
    const top = bar ? bar.getBoundingClientRect().bottom : 0;
    const handTop = hand ? hand.getBoundingClientRect().top : window.innerHeight;
    const bottom = Math.min(window.innerHeight, handTop > top ? handTop : window.innerHeight);
    const box = first.getBoundingClientRect();
    if (box.top >= top && box.bottom <= bottom) return;
    first.scrollIntoView({ block: "center", behavior: "instant" });
  });
}

// The sound, notification, title and icon badge when it becomes your move.
/** @param {any} ctx @param {import("./table.js").TableModel} model */
function tell(ctx, model) {
  if (!drawn) return;
  const said = cues(drawn.cue, model);
  drawn.cue = { mine: model.mine, pending: model.pending, low: model.low };
  for (const cue of said) sound(cue);
  if (said.includes("trap")) notify(t("title"), t("answer_you", trapWords(ctx)));
  else if (said.includes("turn")) notify(t("title"), t("turn_you"));
  mark(model.mine, t("title"), t("turn_you"));
}

/** @param {any} ctx */
function trapWords(ctx) {
  const { game } = ctx;
  const p = game.view.pending;
  return { name: game.shown(p.attacker), place: game.place(game.seat, p.room) };
}

/** @param {any} ctx @param {import("./table.js").TableModel} model */
function drawGame(ctx, model) {
  const { game } = ctx;
  const view = game.view;
  const mine = model.mine;
  const seats = model.seats.map((s) => seatPanel(ctx, s, plate(ctx, s)));
  const [me, ...others] = game.seat === null ? [null, ...seats] : seats;
  return h(
    "section",
    { class: mine ? "game mine" : "game", "aria-label": t("title"), "data-key": `game:${game.id}`, "data-game": game.id, "data-seq": game.seq, "data-seat": game.seat, onclick: armed },
    view.over ? null : status(ctx, model),
    game.seat === null && !view.over ? watching(ctx) : null,
    game.seat !== null && game.away[game.seat] && !view.over
      ? h("button", { class: "banner away", testid: "away-banner", "data-key": "away", onclick: ctx.back }, t("away_banner"))
      : null,
    mine && view.pending ? answer(ctx) : null,
    view.over ? gameOver(ctx) : null,
    h(
      "div",
      { class: "felt", "data-key": "felt" },
      h("div", { class: "seats others", "data-key": "others" }, others),
      piles(model, lastSaid(game)),
      me ? h("div", { class: "seats mine", "data-key": "mine" }, me) : null,
    ),
    game.seat !== null && !view.over ? hand(ctx, model) : null,
    logPanel(game),
  );
}

// The last move in words, under the piles.
/** @param {any} game */
function lastSaid(game) {
  const last = game.lastMove && game.log.find((/** @type {any} */ line) => line.seq === game.lastMove.seq);
  if (last) return last.text;
  const line = game.log.length ? game.log[game.log.length - 1] : null;
  return line && game.lastMove ? line.text : "";
}

/** @param {any} ctx @param {import("./table.js").SeatModel} s */
function plate(ctx, s) {
  const { game } = ctx;
  const view = game.view;
  const scores = view.over ? view.scores : null;
  return [
    seatName(ctx, s.seat),
    s.me ? h("span", { class: "badge you" }, t("you")) : null,
    s.bot ? h("span", { class: "badge bot" }, t("bot")) : null,
    s.away ? h("span", { class: "badge away" }, t("away")) : null,
    s.dealer ? h("span", { class: "badge" }, t("dealer")) : null,
    h("span", { class: "rating", testid: "rating", title: t("rating") }, game.rating(s.seat)),
    // Any other person at the table may be reported to the moderators.
    !s.me && !s.bot && game.names[s.seat]
      ? h("button", { class: "report", testid: "report-button", title: t("report_title"), onclick: () => ctx.report(s.seat) }, t("report_button"))
      : null,
    // After the game, another seat may be challenged to a new one (together.js).
    view.over && !s.me && game.names[s.seat] && ctx.seatButton ? ctx.seatButton(game.names[s.seat]) : null,
    h("span", { class: "count" }, scores ? count("moose_n", scores[s.seat]) : count("card_n", s.handSize)),
  ];
}

/** @param {any} ctx @param {import("./table.js").TableModel} model */
function status(ctx, model) {
  const { game } = ctx;
  const view = game.view;
  let text;
  if (view.pending && model.mine) text = t("answer_you", trapWords(ctx));
  else if (view.pending) text = t("answer_other", { name: game.name(view.to_act) });
  else if (model.mine) text = t("turn_you");
  else if (view.to_act !== null && (game.bots[view.to_act] || game.away[view.to_act] || view.to_act === game.seat)) {
    text = t("server_plays", { name: game.name(view.to_act) });
  } else text = t("turn_other", { name: game.name(view.to_act) });
  const off = muted();
  return h(
    "div",
    { class: model.mine ? "status urgent" : "status", "data-key": "status" },
    h("strong", { testid: "turn", role: "status", "aria-live": "polite" }, text),
    h("span", { class: countdownClass(ctx, model), testid: "countdown" }, clock(ctx)),
    game.seat === null ? null : bigClock(ctx, model),
    h("button", {
      class: "sound", testid: "sound-toggle", "aria-pressed": off ? "false" : "true", title: t("sound_title"),
      onclick: () => { setMuted(!muted()); armed(); ctx.redraw && ctx.redraw(); },
    }, icon(off ? "mute" : "sound"), h("span", { class: "sr" }, t("sound_title"))),
  );
}

/**
 * The small countdown shows only what the big clock does not (another seat's thinking
 * time, or a spectator's view); beside your own time it would say it twice, so it is
 * kept for screen readers alone ("1:00 left" reads better than "1:00"). A phone hides
 * it, but for another seat's turn that goes on past its deadline (a `deadline`).
 * @param {any} ctx @param {import("./table.js").TableModel} model
 */
function countdownClass(ctx, model) {
  // Another seat's turn that goes on past its deadline: shown on a phone too.
  const base = ctx.game.theirs(ctx.now()) ? "countdown goes-on" : "countdown";
  if (ctx.game.seat === null) return base;
  return clockText(ctx, model.mine)[1] === "idle" ? base : `${base} sr`;
}

/** @param {any} ctx @param {import("./table.js").TableModel} model */
function bigClock(ctx, model) {
  const [text, state] = clockText(ctx, model.mine);
  return h("span", { class: `clock ${state}`, testid: "clock", "data-state": state }, text);
}

/**
 * Your clock's words and state: "12 s" (yours), "Hurry — 8 s" (low), "Not connected".
 * @param {any} ctx
 * @param {boolean} mine
 * @returns {[string, string]}
 */
export function clockText(ctx, mine) {
  if (ctx.online === false) return [t("clock_offline"), "offline"];
  const left = mine ? ctx.game.left(ctx.now()) : null;
  if (left === null) return [t("clock_waiting"), "idle"];
  if (left <= 10000) return [t("clock_low", { time: duration(left) }), "low"];
  return [duration(left), "yours"];
}

/**
 * The clocks tick without a redraw (focus and selection stay): app.js calls this.
 * @param {Element} root
 * @param {any} ctx {game, now, online}
 */
export function tickGame(root, ctx) {
  const countdown = root.querySelector('[data-testid="countdown"]');
  if (countdown) countdown.textContent = clock(ctx);
  const big = root.querySelector('[data-testid="clock"]');
  if (!big || !ctx.game.view) return;
  const model = tableModel(ctx.game, null, ctx.now());
  if (countdown) countdown.className = countdownClass(ctx, model);
  const [text, state] = clockText(ctx, model.mine);
  if (big.textContent !== text) big.textContent = text;
  big.className = `clock ${state}`;
  big.setAttribute("data-state", state);
  if (drawn && drawn.id === ctx.game.id) tell(ctx, model);
}

// Our own deadline counts down; another seat's turn counts up from when it began, or
// down to its deadline when the server said that it goes on past it (a `deadline`).
/** @param {any} ctx */
export function clock(ctx) {
  const { game } = ctx;
  if (ctx.online === false && game.left(ctx.now()) !== null) return t("clock_offline");
  const left = game.left(ctx.now());
  if (left !== null) return t("left", { time: duration(left) });
  const theirs = game.theirs(ctx.now());
  if (theirs) return t("left_theirs", { name: game.shown(theirs[0]), time: duration(theirs[1]) });
  if (game.turnSince) return t("waited", { time: duration(ctx.now() - game.turnSince) });
  return "";
}

/** @param {any} ctx */
function answer(ctx) {
  const { game } = ctx;
  const byAction = (/** @type {string} */ a) => game.legal.find((/** @type {any} */ m) => m.action === a);
  const trap = byAction("trap");
  const allow = byAction("allow");
  return h(
    "div",
    { class: "prompt", role: "alert", "data-key": "prompt" },
    h("p", {}, cardName(game.view.pending.card)),
    trap ? h("button", { class: "primary", testid: "trap-button", onclick: () => ctx.play(trap) }, t("trap_button")) : null,
    allow ? h("button", { testid: "allow-button", onclick: () => ctx.play(allow) }, t("allow_button")) : null,
    h("p", { class: "hint" }, t("trap_hint")),
  );
}

/** @param {any} ctx @param {import("./table.js").TableModel} model */
function hand(ctx, model) {
  const { game } = ctx;
  const playable = new Set(model.hand.filter((c) => c.playable).map((c) => c.card));
  return h(
    "section",
    { class: "hand", "aria-label": t("your_hand"), "data-key": "hand" },
    h("h2", {}, t("your_hand"), " ", h("span", { class: "count" }, count("card_n", model.hand.length))),
    model.mine && !game.view.pending ? h("p", { class: "hint", testid: "hand-hint" }, handHint(ctx, playable)) : null,
    model.hand.length ? handCards(ctx, model, (card) => why(game, model.mine, card)) : h("p", {}, t("hand_empty")),
    moves(ctx, model),
  );
}

// Every legal move as a button: the keyboard's and the screen reader's way to play.
/** @param {any} ctx @param {import("./table.js").TableModel} model */
function moves(ctx, model) {
  const { game } = ctx;
  const choices = model.mine && !game.view.pending ? game.legal : [];
  if (!choices.length) return null;
  return h(
    "div",
    { class: "moves-panel", "data-key": "moves" },
    h("h3", {}, t("moves_title")),
    h("div", { class: "moves" }, choices.map((/** @type {any} */ move, /** @type {number} */ i) =>
      h("button", {
        class: move.card && move.card === ctx.selected ? "move chosen" : "move",
        testid: "legal-move", "data-key": `move-${i}`, "data-move": JSON.stringify(move),
        onclick: () => ctx.play(move),
      }, game.choice(move)))),
  );
}

// The hint over the hand: what to do now; on a turn where nothing can be played, discard.
/** @param {any} ctx @param {Set<string>} playable */
function handHint(ctx, playable) {
  if (ctx.selected) return t("pick_target", { card: cardName(ctx.selected) });
  return playable.size ? t("pick_card") : t("pick_discard");
}

// Why a card of ours cannot be played on our move (replays: engine.js), or null.
/** @param {any} game @param {boolean} mine @param {string} card */
function why(game, mine, card) {
  if (!mine || game.view.pending || game.legal.some((/** @type {any} */ m) => m.action === "play" && m.card === card)) return null;
  const found = /** @type {[string, any] | null} */ (whyNot(game.view.houses, game.seat, card));
  return found ? t(found[0], { ...found[1], room: found[1].type ? roomName(found[1].type) : "" }) : t("why_other");
}

function gameOver(ctx) {
  const { game } = ctx;
  const view = game.view;
  const winners = view.winners || [];
  const result = view.abandoned ? t("abandoned") : game.seat === null ? "" : winners.includes(game.seat) ? t("you_won") : t("you_lost");
  const rows = [...Array(view.players).keys()].map((seat) =>
    h("tr", { class: winners.includes(seat) ? "winner" : "", "data-seat": seat, "data-score": view.scores[seat] },
      h("td", {}, game.name(seat), winners.includes(seat) ? " ★" : ""),
      h("td", {}, String(view.scores[seat])),
      h("td", {}, leftover(game, seat))),
  );
  return h(
    "section",
    { class: "panel over", testid: "game-over" },
    h("h2", {}, t("game_over"), result ? ` — ${result}` : ""),
    h("p", {}, t("winners", { names: winners.map((s) => game.name(s)).join(", ") }), " ", t("fewest"), " ", t("score_is")),
    tieBreak(game),
    ratingChange(game),
    h("table", { testid: "scores" }, h("thead", {}, h("tr", {}, h("th", {}, t("player_col")), h("th", {}, t("score_col")), h("th", {}, t("left_col")))), h("tbody", {}, rows)),
    h(
      "p",
      { class: "actions" },
      h("a", { class: "button", href: `/g/${game.id}`, testid: "replay-link", onclick: (e) => { e.preventDefault(); ctx.replay(); } }, t("replay_link")),
      ctx.download ? h("a", { class: "button", href: ctx.download, download: `moose-${game.id}.json`, testid: "record-link" }, t("download")) : null,
      ctx.verifyDeal ? h("button", { onclick: ctx.verifyDeal, testid: "verify-deal" }, t("verify_deal")) : null,
      h("button", { class: "primary", onclick: ctx.leave, testid: "lobby-button" }, t("back_lobby")),
    ),
    game.verdict ? h("p", { class: "verdict", role: "status", testid: "deal-verdict" }, game.verdict) : null,
  );
}

// How a tie for the fewest moose was broken (ending.js), when there was one.
function tieBreak(game) {
  const text = tieBreakText(game);
  return text ? h("p", { class: "tie-break", testid: "tie-break" }, text) : null;
}

function logPanel(game) {
  return h(
    "section",
    { class: "log", "aria-label": t("log_title") },
    h("h2", {}, t("log_title")),
    // Focusable: it scrolls, and a keyboard must be able to scroll it (axe: scrollable-region-focusable).
    h("ol", { reversed: true, tabindex: 0, "aria-label": t("log_title") }, game.log.slice().reverse().map((line) => h("li", { "data-seq": line.seq }, line.text))),
  );
}

// -- deadends -----------------------------------------------------------

// A spectator's bar: what they are doing, and the way out.
function watching(ctx) {
  return h(
    "p",
    { class: "row note" },
    t("spectating"),
    h("button", { testid: "stop-watching", onclick: ctx.leave }, t("stop_watching")),
  );
}

// A game that cannot be shown (a watch link to a game that does not exist, or a
// private one): why, and the way back, instead of "Connecting…" for ever.
function missing(ctx) {
  return h(
    "section",
    { class: "panel gone-game", testid: "game-missing", role: "alert" },
    h("h2", {}, t("missing_title")),
    h("p", {}, ctx.game.missing),
    h("p", { class: "actions" }, h("button", { class: "primary", onclick: ctx.leave, testid: "lobby-button" }, t("back_lobby"))),
  );
}

// Where a seat's score comes from: the moose in its house (on the table) and the moose
// cards still in its hand, which nobody saw (the score minus the first). Its own
// player sees which cards those are.
function leftover(game, seat) {
  const view = game.view;
  const inHouse = view.houses[seat].rooms.filter((room) => room.cover === "moose").length;
  const inHand = Math.max(0, view.scores[seat] - inHouse);
  const own = seat === game.seat && view.hand ? view.hand.filter((card) => card.startsWith("moose:")) : [];
  return h(
    "span",
    { testid: "leftover", "data-seat": seat, "data-in-hand": inHand },
    t("score_parts", { house: count("moose_n", inHouse), hand: count("moose_card_n", inHand), left: count("card_n", view.hand_sizes[seat]) }),
    own.length ? h("ul", { class: "leftover" }, own.map((card) => h("li", { class: "moose-card" }, cardName(card)))) : null,
  );
}
