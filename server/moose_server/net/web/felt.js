// @ts-check
// The card table drawn from its model (table.js): every seat's house as a row of room
// cards with the moose or door on top, other hands as fanned card backs, the draw and
// discard piles, and your hand. Words come from i18n.js; the art from cards.js.

import { art, cardClass, coverArt } from "./cards.js";
import { h, svg } from "./dom.js";

/** @type {Map<string, SVGElement>} each card's drawing, built once and then copied */
const drawings = new Map();

/**
 * A card's drawing: a copy of the one built for its code (copying is cheaper than
 * building, and the table draws dozens of cards at every event).
 * @param {string} code
 * @param {"face" | "moose" | "door"} [what]
 */
export function drawing(code, what = "face") {
  const key = `${what}:${code}`;
  let made = drawings.get(key);
  if (!made) {
    made = svg(what === "face" ? art(code) : coverArt(what));
    made.setAttribute("data-key", `art-${key}`);
    made.setAttribute("data-fixed", "");
    drawings.set(key, made);
  }
  return /** @type {SVGElement} */ (made.cloneNode(true));
}
import { cardName, count, roomName, t } from "./i18n.js";

/**
 * A card as drawn: its art and its name. `code` "back" for a hidden one.
 * @param {string} code
 * @param {{small?: boolean, extra?: string}} [how]
 */
export function card(code, how = {}) {
  const cls = `card-face ${code === "back" ? "back" : cardClass(code)}${how.small ? " small" : ""}${how.extra ? ` ${how.extra}` : ""}`;
  return h(
    "span",
    { class: cls, testid: "card", "data-card": code },
    drawing(code),
    code === "back" ? null : h("span", { class: "label" }, cardName(code)),
  );
}

/**
 * A room of a house: its room card, and over it the moose, the door or the moose
 * waiting for its owner's answer. `target`: a legal move onto it (then a button).
 * @param {any} ctx
 * @param {number} seat
 * @param {number} index
 * @param {{type: string, cover: string | null}} room
 * @param {any} target
 * @param {{pending?: string | null, last?: boolean}} [more]
 */
export function roomTile(ctx, seat, index, room, target, more = {}) {
  const cover = room.cover;
  const name = `${roomName(room.type)} ${index + 1}`;
  const state = more.pending ? t("cover_pending") : cover ? t(`cover_${cover}`) : t("open");
  const body = [
    card(`room:${room.type}`, { small: true }),
    cover ? h("span", { class: `cover ${cover}` }, drawing(room.type, /** @type {any} */ (cover)), h("span", { class: "sr" }, t(`cover_${cover}`))) : null,
    more.pending ? h("span", { class: "cover pending" }, card(more.pending, { small: true })) : null,
    h("span", { class: "rname" }, h("strong", {}, name), " · ", state),
    more.last ? lastRing() : null,
  ];
  const cls = `room r-${room.type} c-${cover || "open"}${more.last ? " last" : ""}`;
  const attrs = { class: cls, "data-spot": `room-${seat}-${index}`, "data-key": `room-${seat}-${index}` };
  if (target) {
    return h("li", attrs, h("button", { class: "target", testid: "target", onclick: () => ctx.play(target), "aria-label": ctx.game.choice(target) }, body));
  }
  return h("li", attrs, body);
}

// The mark on the last move's card, there until the next move.
function lastRing() {
  return h("span", { class: "last-ring", testid: "last-move" }, h("span", {}, t("last_move")));
}

/**
 * One seat: name plate, the hand (backs for others), the house card and the rooms.
 * @param {any} ctx
 * @param {import("./table.js").SeatModel} s
 * @param {Element[]} plate the name and badges (board.js)
 */
export function seatPanel(ctx, s, plate) {
  const cls = `seat${s.me ? " me" : ""}${s.acting ? " acting" : ""}${s.moved ? " moved" : ""}`;
  return h(
    "article",
    { class: cls, testid: "seat", "data-seat": s.seat, "data-key": `seat-${s.seat}`, "aria-label": plate[0] ? plate[0].textContent : null },
    h("header", {}, s.acting ? h("span", { class: "turn-mark", "aria-hidden": "true" }, "▶") : null, plate),
    s.me ? null : backs(s),
    h(
      "div",
      { class: "house-row" },
      houseSlot(ctx, s),
      h("ul", { class: "rooms" }, s.rooms.length
        ? s.rooms.map((r) => roomTile(ctx, s.seat, r.index, r, r.target, { pending: r.pending, last: r.last }))
        : h("li", { class: "none" }, t("no_rooms"))),
      s.target && s.target.card.startsWith("room:") ? dropTarget(ctx, s) : null,
    ),
  );
}

// Another seat's hand: fanned backs and how many.
/** @param {import("./table.js").SeatModel} s */
function backs(s) {
  const shown = Math.min(s.handSize, 8);
  return h(
    "div",
    { class: `backs n${shown}`, "data-spot": `hand-${s.seat}`, "aria-label": count("card_n", s.handSize) },
    [...Array(shown).keys()].map(() => card("back", { small: true })),
    h("span", { class: "n" }, String(s.handSize)),
  );
}

/** @param {any} ctx @param {import("./table.js").SeatModel} s */
function houseSlot(ctx, s) {
  const label = s.hasHouse ? t("house_yes") : t("house_no");
  const inner = [
    s.hasHouse ? card("house", { small: true }) : h("span", { class: "slot-empty" }, h("span", {}, label)),
    s.lastHouse ? lastRing() : null,
  ];
  const attrs = { class: s.hasHouse ? "house has" : "house", "data-spot": `house-${s.seat}`, "data-key": `house-${s.seat}`, title: label };
  if (s.target && s.target.card === "house") {
    return h("div", attrs, h("button", { class: "target", testid: "target", onclick: () => ctx.play(s.target), "aria-label": ctx.game.choice(s.target) }, inner));
  }
  return h("div", attrs, inner);
}

// Where a room card lands: a new room at the end of the row.
/** @param {any} ctx @param {import("./table.js").SeatModel} s */
function dropTarget(ctx, s) {
  if (!s.target) return null;
  return h("button", { class: "target drop", testid: "target", onclick: () => ctx.play(s.target), "aria-label": ctx.game.choice(s.target) },
    card(s.target.card, { small: true, extra: "ghosted" }), h("span", {}, t("play_here")));
}

/**
 * The draw pile, the discard pile with its top card, and the last move in words.
 * @param {import("./table.js").TableModel} m
 * @param {string} said the last move in words
 */
export function piles(m, said) {
  const top = m.discard.length ? m.discard[m.discard.length - 1] : null;
  return h(
    "div",
    { class: "piles" },
    h("div", { class: "pile draw", testid: "draw-pile", "data-count": m.draw, "aria-label": `${t("draw_pile")}: ${m.draw}` },
      m.draw ? card("back") : h("span", { class: "slot-empty" }),
      h("span", { class: "pile-name" }, t("draw_pile"), h("strong", {}, String(m.draw)))),
    h("div", { class: `pile discard${m.lastDiscard ? " last" : ""}`, testid: "discard-pile", "data-spot": "discard", "data-count": m.discard.length },
      top ? card(top, { extra: "top" }) : h("span", { class: "slot-empty" }, h("span", {}, t("empty"))),
      m.lastDiscard ? lastRing() : null,
      h("span", { class: "pile-name" }, t("discard_pile"), h("strong", {}, String(m.discard.length)))),
    said ? h("p", { class: "said", "aria-live": "off" }, said) : null,
  );
}

/**
 * Your hand: every card shown (a row that scrolls on a phone), the playable ones raised.
 * @param {any} ctx
 * @param {import("./table.js").TableModel} m
 * @param {(card: string) => string | null} why why a card cannot be played, or null
 */
export function handCards(ctx, m, why) {
  return h(
    "div",
    { class: `cards n${m.hand.length}`, "data-spot": `hand-${m.seat}` },
    m.hand.map(({ card: code, playable, chosen }, i) => {
      const reason = why(code);
      return h(
        "button",
        {
          class: `card${playable ? " playable" : ""}`,
          testid: "hand-card",
          "data-card": code,
          "data-key": `card-${i}`,
          "aria-pressed": chosen ? "true" : "false",
          disabled: !playable,
          onclick: () => ctx.select(code),
          "aria-describedby": reason ? `why-${i}` : null,
          title: reason,
        },
        card(code),
        reason ? h("small", { class: "why", id: `why-${i}`, testid: "card-reason" }, reason) : null,
      );
    }),
  );
}
