// @ts-check
// The game table as data: what board.js draws, computed from the game (game.js) and
// the card the player chose. Pure and without text (board.js adds the words), so it is
// tested without a browser. Hidden information never enters it: another seat's hand
// is only a count.

import { highlight, spotKey } from "./motion.js";

/**
 * @typedef {{type: string, cover: string, index: number, spot: string, target: any,
 *   pending: string | null, last: boolean}} RoomModel
 * @typedef {{seat: number, me: boolean, acting: boolean, dealer: boolean, bot: boolean,
 *   away: boolean, hasHouse: boolean, handSize: number, rooms: RoomModel[],
 *   target: any, lastHouse: boolean, moved: boolean}} SeatModel
 * @typedef {{card: string, playable: boolean, chosen: boolean}} HandCard
 * @typedef {{id: string, seq: number, over: boolean, mine: boolean, seat: number | null,
 *   seats: SeatModel[], hand: HandCard[], draw: number, discard: string[],
 *   lastDiscard: boolean, pending: any, low: boolean}} TableModel
 */

/** Seconds left under which the own clock warns. */
export const LOW_SECONDS = 10;

/**
 * The table to draw.
 * @param {any} game a Game of game.js with a view
 * @param {string | null} selected the card the player chose in their hand
 * @param {number} now server time, in ms
 * @returns {TableModel}
 */
export function tableModel(game, selected, now) {
  const view = game.view;
  const mine = game.seat !== null && view.to_act === game.seat && Boolean(game.legal) && !view.over;
  const last = highlight(game.lastMove || null);
  const lastSpot = last && last.to ? spotKey(last.to) : null;
  const seats = order(view.players, game.seat).map((seat) => seatModel(game, seat, mine ? selected : null, lastSpot, last));
  const playable = new Set((mine ? game.legal : []).filter((m) => m.card && m.action === "play").map((m) => m.card));
  const left = game.left(now);
  return {
    id: game.id,
    seq: game.seq,
    over: Boolean(view.over),
    mine,
    seat: game.seat,
    seats,
    hand: (view.hand || []).map((card) => ({ card, playable: playable.has(card), chosen: mine && selected === card })),
    draw: view.draw_pile,
    discard: view.discard,
    lastDiscard: lastSpot === "discard",
    pending: view.pending,
    low: mine && left !== null && left <= LOW_SECONDS * 1000,
  };
}

/**
 * The seats from the viewer's own, then around the table.
 * @param {number} players
 * @param {number | null} first
 */
export function order(players, first) {
  const start = first === null ? 0 : first;
  return [...Array(players).keys()].map((k) => (start + k) % players);
}

/**
 * @param {any} game
 * @param {number} seat
 * @param {string | null} selected
 * @param {string | null} lastSpot
 * @param {{seat: number} | null} last
 * @returns {SeatModel}
 */
function seatModel(game, seat, selected, lastSpot, last) {
  const view = game.view;
  const house = view.houses[seat];
  const targets = targetsOn(game, seat, selected);
  const pending = view.pending && view.pending.seat === seat ? view.pending : null;
  return {
    seat,
    me: seat === game.seat,
    acting: view.to_act === seat && !view.over,
    dealer: seat === view.dealer,
    bot: Boolean(game.bots[seat]),
    away: Boolean(game.away[seat]),
    hasHouse: house.house,
    handSize: view.hand_sizes[seat],
    rooms: house.rooms.map((room, index) => {
      const spot = spotKey({ zone: "room", seat, room: index });
      return {
        type: room.type, cover: room.cover, index, spot,
        target: targets.rooms.get(index) || null,
        pending: pending && pending.room === index ? pending.card : null,
        last: spot === lastSpot,
      };
    }),
    target: targets.seat,
    lastHouse: lastSpot === spotKey({ zone: "house", seat }),
    moved: Boolean(last && last.seat === seat),
  };
}

/**
 * The legal moves of the chosen card that land on this seat: on the seat, or on its rooms.
 * @param {any} game
 * @param {number} seat
 * @param {string | null} selected
 */
export function targetsOn(game, seat, selected) {
  /** @type {{seat: any, rooms: Map<number, any>}} */
  const out = { seat: null, rooms: new Map() };
  if (!selected || !game.legal) return out;
  for (const move of game.legal) {
    if (move.card !== selected || move.action !== "play") continue;
    if (move.card === "door" && seat === game.seat) out.rooms.set(move.room, move);
    else if (move.card.startsWith("moose:") && move.target === seat) out.rooms.set(move.room, move);
    else if (move.target === seat && move.room === undefined) out.seat = move;
  }
  return out;
}

/**
 * What the page should tell the player, by comparing the table before and after.
 * @param {{mine: boolean, pending: any, low: boolean} | null} before
 * @param {TableModel} after
 * @returns {("turn" | "trap" | "low")[]}
 */
export function cues(before, after) {
  /** @type {("turn" | "trap" | "low")[]} */
  const out = [];
  const trap = after.mine && Boolean(after.pending);
  if (trap && !(before && before.mine && before.pending)) out.push("trap");
  else if (after.mine && !(before && before.mine)) out.push("turn");
  if (after.low && !(before && before.low)) out.push("low");
  return out;
}
