// The table's model: what is drawn for a seat, and the cues when it becomes its move.
import assert from "node:assert/strict";
import { test } from "node:test";
import { LOW_SECONDS, cues, order, tableModel } from "../../server/moose_server/net/web/table.js";

function game({ seat = 0, toAct = 0, legal = [], deadline = null, lastMove = null } = {}) {
  const view = {
    players: 3, dealer: 2, to_act: toAct, over: false, pending: null, draw_pile: 30,
    discard: ["trap", "door"], hand: ["door", "moose:kitchen", "room:bedroom"], hand_sizes: [3, 5, 4],
    houses: [
      { house: false, rooms: [] },
      { house: true, rooms: [{ type: "kitchen", cover: null }, { type: "living", cover: "moose" }] },
      { house: false, rooms: [{ type: "bathroom", cover: "door" }] },
    ],
  };
  return { id: "g1", seq: 7, seat, view, legal, bots: [false, true, true], away: [false, false, false],
    lastMove, left: (now) => (deadline === null ? null : Math.max(0, deadline - now)) };
}

const moose = { action: "play", card: "moose:kitchen", target: 1, room: 0 };
const bedroom = { action: "play", card: "room:bedroom", target: 2 };

test("the seats start from the viewer's own", () => {
  assert.deepEqual(order(4, 2), [2, 3, 0, 1]);
  assert.deepEqual(order(3, null), [0, 1, 2]);
});

test("another seat's hand is only a count; the own hand is its cards", () => {
  const m = tableModel(game(), null, 0);
  assert.deepEqual(m.seats.map((s) => s.handSize), [3, 5, 4]);
  assert.deepEqual(m.hand.map((c) => c.card), ["door", "moose:kitchen", "room:bedroom"]);
  assert.ok(!JSON.stringify(m.seats).includes("moose:kitchen"), "a hand card among the seats");
});

test("a chosen card's targets are the rooms or seats its legal moves name", () => {
  const m = tableModel(game({ legal: [moose, bedroom] }), "moose:kitchen", 0);
  const bob = m.seats.find((s) => s.seat === 1);
  assert.deepEqual(bob.rooms.map((r) => r.target), [moose, null]);
  assert.equal(m.seats.find((s) => s.seat === 2).target, null);
  const rooms = tableModel(game({ legal: [moose, bedroom] }), "room:bedroom", 0);
  assert.deepEqual(rooms.seats.find((s) => s.seat === 2).target, bedroom);
  assert.deepEqual(rooms.hand.filter((c) => c.playable).map((c) => c.card), ["moose:kitchen", "room:bedroom"]);
});

test("no targets and no chosen card when it is not the seat's move", () => {
  const m = tableModel(game({ toAct: 1, legal: null }), "moose:kitchen", 0);
  assert.equal(m.mine, false);
  assert.ok(m.seats.every((s) => s.target === null && s.rooms.every((r) => r.target === null)));
  assert.ok(m.hand.every((c) => !c.chosen && !c.playable));
});

test("the last move's card is marked where it landed, and its mover", () => {
  const before = game().view;
  const lastMove = { event: { kind: "move", seat: 2, move: { action: "play", card: "moose:living", target: 1, room: 1 } }, before };
  const m = tableModel(game({ lastMove }), null, 0);
  const bob = m.seats.find((s) => s.seat === 1);
  assert.deepEqual(bob.rooms.map((r) => r.last), [false, true]);
  assert.deepEqual(m.seats.map((s) => s.moved), [false, false, true]);
});

test("low time is the own move with little left", () => {
  const deadline = 100000;
  assert.equal(tableModel(game({ legal: [moose], deadline }), null, deadline - LOW_SECONDS * 1000 - 1).low, false);
  assert.equal(tableModel(game({ legal: [moose], deadline }), null, deadline - 5000).low, true);
  assert.equal(tableModel(game({ toAct: 1, deadline }), null, deadline - 5000).low, false);
});

test("cues: the turn once, a trap prompt, low time once", () => {
  const idle = { mine: false, pending: null, low: false };
  const turn = { mine: true, pending: null, low: false };
  assert.deepEqual(cues(idle, /** @type {any} */ (turn)), ["turn"]);
  assert.deepEqual(cues(turn, /** @type {any} */ (turn)), []);
  assert.deepEqual(cues(idle, /** @type {any} */ ({ mine: true, pending: { seat: 0 }, low: false })), ["trap"]);
  assert.deepEqual(cues(turn, /** @type {any} */ ({ mine: true, pending: null, low: true })), ["low"]);
  assert.deepEqual(cues(null, /** @type {any} */ (idle)), []);
});
