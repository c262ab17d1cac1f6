// @ts-check
// The game screen: every seat's house, the piles, your hand and moves, the log, the end.

import { h, icon } from "./dom.js";
import { whyNot } from "./engine.js";
import { cardName, count, duration, roomName, t } from "./i18n.js";
import { ratingChange, seatName } from "./pages.js";
import { tieBreakText } from "./ending.js";

// ctx: {game, selected, now, select(card), play(move), back(), leave(), replay(), download}
export function renderGame(ctx) {
  const { game } = ctx;
  const view = game.view;
  if (game.missing) return missing(ctx);
  if (!view) return h("section", { class: "panel" }, t("status_connecting"));
  const mine = game.seat !== null && view.to_act === game.seat && game.legal;
  return h(
    "section",
    { class: mine && !view.over ? "game mine" : "game", "aria-label": t("title"), "data-game": game.id, "data-seq": game.seq, "data-seat": game.seat },
    view.over ? null : status(ctx),
    game.seat === null && !view.over ? watching(ctx) : null,
    game.seat !== null && game.away[game.seat] && !view.over
      ? h("button", { class: "banner away", testid: "away-banner", onclick: ctx.back }, t("away_banner"))
      : null,
    mine && view.pending ? answer(ctx) : null,
    view.over ? gameOver(ctx) : null,
    h("div", { class: "seats" }, order(game).map((seat) => seatPanel(ctx, seat))),
    piles(view),
    game.seat !== null && !view.over ? hand(ctx, mine) : null,
    logPanel(game),
  );
}

function order(game) {
  const n = game.view.players;
  const first = game.seat === null ? 0 : game.seat;
  return [...Array(n).keys()].map((k) => (first + k) % n);
}

function status(ctx) {
  const { game } = ctx;
  const view = game.view;
  let text;
  if (view.over) text = t("game_over");
  else if (view.pending && view.to_act === game.seat && game.legal) {
    text = t("answer_you", { name: game.shown(view.pending.attacker), place: game.place(game.seat, view.pending.room) });
  } else if (view.pending) text = t("answer_other", { name: game.name(view.to_act) });
  else if (view.to_act === game.seat && game.legal) text = t("turn_you");
  else if (view.to_act !== null && (game.bots[view.to_act] || game.away[view.to_act] || view.to_act === game.seat)) {
    text = t("server_plays", { name: game.name(view.to_act) });
  } else text = t("turn_other", { name: game.name(view.to_act) });
  const urgent = view.to_act === game.seat && game.legal && !view.over;
  return h(
    "div",
    { class: urgent ? "status urgent" : "status", role: "status", "aria-live": "polite" },
    h("strong", { testid: "turn" }, text),
    view.over ? null : h("span", { class: "countdown", testid: "countdown" }, clock(ctx)),
  );
}

// Our own deadline counts down; another seat's turn counts up from when it began.
export function clock(ctx) {
  const { game } = ctx;
  if (ctx.offline) return t("clock_offline"); // no time runs out for us while the server cannot hear us
  const left = game.left(ctx.now());
  if (left !== null) return t("left", { time: duration(left) });
  if (game.turnSince) return t("waited", { time: duration(ctx.now() - game.turnSince) });
  return "";
}

function answer(ctx) {
  const { game } = ctx;
  const byAction = (a) => game.legal.find((m) => m.action === a);
  const trap = byAction("trap");
  const allow = byAction("allow");
  return h(
    "div",
    { class: "prompt", role: "alert" },
    h("p", {}, icon("moose"), " ", cardName(game.view.pending.card)),
    trap ? h("button", { class: "primary", testid: "trap-button", onclick: () => ctx.play(trap) }, icon("trap"), t("trap_button")) : null,
    allow ? h("button", { testid: "allow-button", onclick: () => ctx.play(allow) }, t("allow_button")) : null,
    h("p", { class: "hint" }, t("trap_hint")),
  );
}

function seatPanel(ctx, seat) {
  const { game } = ctx;
  const view = game.view;
  const house = view.houses[seat];
  const targets = targetsOn(ctx, seat);
  const badges = [
    seat === game.seat ? h("span", { class: "badge you" }, t("you")) : null,
    game.bots[seat] ? h("span", { class: "badge bot" }, t("bot")) : null,
    game.away[seat] ? h("span", { class: "badge away" }, t("away")) : null,
    seat === view.dealer ? h("span", { class: "badge" }, t("dealer")) : null,
  ];
  const scores = view.over ? view.scores : null;
  return h(
    "article",
    { class: `seat${view.to_act === seat && !view.over ? " acting" : ""}`, testid: "seat", "data-seat": seat },
    h(
      "header",
      {},
      view.to_act === seat && !view.over ? h("span", { class: "turn-mark", "aria-hidden": "true" }, "▶") : null,
      seatName(ctx, seat),
      badges,
      h("span", { class: "rating", testid: "rating", title: t("rating") }, game.rating(seat)),
      // Any other person at the table may be reported to the moderators.
      seat !== game.seat && !game.bots[seat] && game.names[seat]
        ? h("button", { class: "report", testid: "report-button", title: t("report_title"), onclick: () => ctx.report(seat) }, t("report_button"))
        : null,
      // After the game, another seat may be challenged to a new one (together.js).
      view.over && seat !== game.seat && game.names[seat] && ctx.seatButton ? ctx.seatButton(game.names[seat]) : null,
      h("span", { class: "count" }, scores ? count("moose_n", scores[seat]) : count("card_n", view.hand_sizes[seat])),
    ),
    h("p", { class: house.house ? "house has" : "house" }, icon("house"), house.house ? t("house_yes") : t("house_no")),
    h(
      "ul",
      { class: "rooms" },
      house.rooms.length ? house.rooms.map((room, i) => roomTile(ctx, seat, i, room, targets.rooms.get(i))) : h("li", { class: "none" }, t("no_rooms")),
    ),
    targets.seat ? h("button", { class: "target", testid: "target", onclick: () => ctx.play(targets.seat) }, t("play_here"), " ← ", cardName(targets.seat.card)) : null,
  );
}

// The legal moves of the selected card that land on this seat: on the seat, or on its rooms.
function targetsOn(ctx, seat) {
  const out = { seat: null, rooms: new Map() };
  const { game } = ctx;
  if (!ctx.selected || !game.legal) return out;
  for (const move of game.legal) {
    if (move.card !== ctx.selected || move.action !== "play") continue;
    if (move.card === "door" && seat === game.seat) out.rooms.set(move.room, move);
    else if (move.card.startsWith("moose:") && move.target === seat) out.rooms.set(move.room, move);
    else if (move.target === seat && move.room === undefined) out.seat = move;
  }
  return out;
}

// A room as a tile; `target`: a legal move onto it (the tile is then a button).
export function roomTile(ctx, seat, index, room, target) {
  const cover = room.cover;
  const body = [
    icon(room.type),
    h("span", { class: "rname" }, `${roomName(room.type)} ${index + 1}`),
    h("span", { class: `cover ${cover || "open"}` }, cover ? icon(cover) : null, cover ? t(`cover_${cover}`) : t("open")),
  ];
  const cls = `room r-${room.type} c-${cover || "open"}`;
  if (target) {
    return h("li", { class: cls }, h("button", { class: "target", testid: "target", onclick: () => ctx.play(target), "aria-label": ctx.game.choice(target) }, body));
  }
  return h("li", { class: cls }, body);
}

function piles(view) {
  const top = view.discard.length ? cardName(view.discard[view.discard.length - 1]) : t("empty");
  return h(
    "div",
    { class: "piles" },
    h("p", {}, h("strong", {}, t("draw_pile")), ` ${view.draw_pile}`),
    h("p", {}, h("strong", {}, t("discard_pile")), ` ${view.discard.length}: `, top),
  );
}

function hand(ctx, mine) {
  const { game } = ctx;
  const cards = game.view.hand || [];
  const playable = new Set((mine ? game.legal : []).filter((m) => m.card && m.action === "play").map((m) => m.card));
  const choices = mine && !game.view.pending ? game.legal : [];
  return h(
    "section",
    { class: "hand", "aria-label": t("your_hand") },
    h("h2", {}, t("your_hand")),
    mine && !game.view.pending ? h("p", { class: "hint", testid: "hand-hint" }, handHint(ctx, playable)) : null,
    cards.length ? null : h("p", {}, t("hand_empty")),
    h(
      "div",
      { class: "cards" },
      cards.map((card, i) => {
        const reason = why(game, mine, card);
        return h(
          "button",
          {
            class: `card ${cardClass(card)}${playable.has(card) ? " playable" : ""}`,
            testid: "hand-card",
            "data-card": card,
            "data-key": `card-${i}`,
            "aria-pressed": ctx.selected === card ? "true" : "false",
            disabled: !playable.has(card),
            onclick: () => ctx.select(card),
            "aria-describedby": reason ? `why-${i}` : null,
            title: reason,
          },
          icon(cardIcon(card)),
          h("span", {}, cardName(card)),
          reason ? h("small", { class: "why", id: `why-${i}`, testid: "card-reason" }, reason) : null,
        );
      }),
    ),
    choices.length ? h("h3", {}, t("moves_title")) : null,
    choices.length
      ? h(
          "div",
          { class: "moves" },
          choices.map((move, i) =>
            h(
              "button",
              {
                class: move.card && move.card === ctx.selected ? "move chosen" : "move",
                testid: "legal-move",
                "data-key": `move-${i}`,
                "data-move": JSON.stringify(move),
                onclick: () => ctx.play(move),
              },
              game.choice(move),
            ),
          ),
        )
      : null,
  );
}

// The hint over the hand: what to do now; on a turn where nothing can be played, discard.
function handHint(ctx, playable) {
  if (ctx.selected) return t("pick_target", { card: cardName(ctx.selected) });
  return playable.size ? t("pick_card") : t("pick_discard");
}

// Why a card of ours cannot be played on our move (replays: engine.js), or null.
function why(game, mine, card) {
  if (!mine || game.view.pending || game.legal.some((m) => m.action === "play" && m.card === card)) return null;
  const found = /** @type {[string, any] | null} */ (whyNot(game.view.houses, game.seat, card));
  return found ? t(found[0], { ...found[1], room: found[1].type ? roomName(found[1].type) : "" }) : t("why_other");
}

function cardClass(card) {
  const [kind, room] = card.split(":");
  return room ? `k-${kind} r-${room}` : `k-${kind}`;
}

function cardIcon(card) {
  const [kind, room] = card.split(":");
  return kind === "room" ? room : kind;
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

// -- deadends (issue 24) -----------------------------------------------------------

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
