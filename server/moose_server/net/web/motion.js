// @ts-check
// Which animations explain the events just taken: pure (events in, a list of
// animations out), so it is tested without a browser; board.js plays the list.
//
// Animations never hold anything up: the page draws the new state at once and the
// animation only shows how it got there. A burst of events (a reconnect, a replay,
// a hidden tab coming back) is not replayed: the table catches up at once.

/**
 * @typedef {{kind: string, seat?: number, move?: any, auto?: string}} GameEvent
 * @typedef {{event: GameEvent, before: any, after: any, seq?: number}} Taken
 *   one event with the views before and after it
 * @typedef {{zone: "hand", seat: number} | {zone: "room", seat: number, room: number}
 *   | {zone: "house", seat: number} | {zone: "discard"}} Spot
 * @typedef {{kind: "travel", card: string, from: Spot, to: Spot, delay: number}
 *   | {kind: "slam", seat: number, room: number, delay: number}} Animation
 */

/** At most this many moves (a round at the largest table: the server's bots answer at
 * once) are explained one after the other; more is a burst (a reconnect, a replay). */
export const MAX_EXPLAINED = 6;
/** How long one card takes to travel, in ms (board.js uses it too). */
export const TRAVEL_MS = 420;

/**
 * Whether these events are a burst to catch up with rather than moves to show: more
 * than MAX_EXPLAINED of them, or a `state` (a reconnect, the page opened mid-game).
 * @param {Taken[]} taken
 */
export function burst(taken) {
  return taken.length > MAX_EXPLAINED || taken.some((t) => !t.event || t.event.kind === "state");
}

/**
 * The animations for the events taken since the table was last drawn.
 * @param {Taken[]} taken
 * @param {{reduced?: boolean, hidden?: boolean}} [how]
 *   reduced: the person asked for less motion; hidden: the tab is not shown
 * @returns {Animation[]}
 */
export function plan(taken, how = {}) {
  if (how.reduced || how.hidden) return [];
  if (burst(taken)) return [];
  // Only moves travel (a seat going away or coming back, the start, the end do not).
  const moves = taken.filter((t) => t.event.kind === "move" && t.before);
  /** @type {Animation[]} */
  const out = [];
  let delay = 0;
  for (const t of moves) {
    const steps = explain(t);
    for (const step of steps) out.push({ ...step, delay: delay + step.delay });
    if (steps.length) delay += TRAVEL_MS;
  }
  return out;
}

/**
 * One move's animations, their delays from the move's start.
 * @param {Taken} taken
 * @returns {Animation[]}
 */
export function explain({ event, before }) {
  const move = event.move || {};
  const seat = /** @type {number} */ (event.seat);
  /** @type {Spot} */
  const hand = { zone: "hand", seat };
  switch (move.action) {
    case "discard":
      return [{ kind: "travel", card: move.card, from: hand, to: { zone: "discard" }, delay: 0 }];
    case "trap": {
      const pending = before.pending;
      if (!pending) return [];
      const room = { zone: "room", seat: pending.seat, room: pending.room };
      return [
        { kind: "travel", card: "trap", from: hand, to: /** @type {Spot} */ (room), delay: 0 },
        { kind: "travel", card: pending.card, from: /** @type {Spot} */ (room), to: { zone: "discard" }, delay: TRAVEL_MS },
        { kind: "travel", card: "trap", from: /** @type {Spot} */ (room), to: { zone: "discard" }, delay: TRAVEL_MS + 80 },
      ];
    }
    case "play":
      return played(move, seat, before);
    default:
      return []; // pass, allow: nothing travels
  }
}

/**
 * @param {any} move
 * @param {number} seat
 * @param {any} before
 * @returns {Animation[]}
 */
function played(move, seat, before) {
  /** @type {Spot} */
  const from = { zone: "hand", seat };
  const card = move.card;
  if (card === "door") {
    return [
      { kind: "travel", card, from, to: { zone: "room", seat, room: move.room }, delay: 0 },
      { kind: "slam", seat, room: move.room, delay: TRAVEL_MS },
    ];
  }
  if (card === "house") return [{ kind: "travel", card, from, to: { zone: "house", seat: move.target }, delay: 0 }];
  if (card.startsWith("room:")) {
    const room = before.houses[move.target].rooms.length; // the new room is the last
    return [{ kind: "travel", card, from, to: { zone: "room", seat: move.target, room }, delay: 0 }];
  }
  return [{ kind: "travel", card, from, to: { zone: "room", seat: move.target, room: move.room }, delay: 0 }];
}

/**
 * The move to keep highlighted: the last move event's seat and where its card went.
 * @param {Taken | null} last
 * @returns {{seat: number, to: Spot | null, card: string | null} | null}
 */
export function highlight(last) {
  if (!last || !last.event || last.event.kind !== "move") return null;
  const steps = last.before ? explain(last) : [];
  const travel = /** @type {any} */ (steps.find((s) => s.kind === "travel"));
  const move = last.event.move || {};
  return { seat: /** @type {number} */ (last.event.seat), to: travel ? travel.to : null, card: move.card || null };
}

/**
 * A spot as the data attribute board.js puts on what it draws there.
 * @param {Spot} spot
 */
export function spotKey(spot) {
  if (spot.zone === "discard") return "discard";
  if (spot.zone === "room") return `room-${spot.seat}-${spot.room}`;
  return `${spot.zone}-${spot.seat}`;
}
