// The animation planner: which moves animate, and that a burst does not.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_EXPLAINED, TRAVEL_MS, burst, highlight, plan, spotKey } from "../../server/moose_server/net/web/motion.js";

const view = (rooms = [[], []], pending = null) => ({ houses: rooms.map((r) => ({ house: true, rooms: r })), pending });
const move = (seat, m, before = view()) => ({ event: { kind: "move", seat, move: m }, before, after: view() });

test("a discard travels from the mover's hand to the discard pile", () => {
  const out = plan([move(1, { action: "discard", card: "trap" })]);
  assert.deepEqual(out, [{ kind: "travel", card: "trap", from: { zone: "hand", seat: 1 }, to: { zone: "discard" }, delay: 0 }]);
});

test("a room card lands as the target's new last room", () => {
  const before = view([[], [{ type: "kitchen", cover: "open" }]]);
  const [a] = plan([move(0, { action: "play", card: "room:bedroom", target: 1 }, before)]);
  assert.equal(spotKey(a.to), "room-1-1");
});

test("a door travels to its room and then slams", () => {
  const out = plan([move(0, { action: "play", card: "door", room: 2 })]);
  assert.deepEqual(out.map((a) => a.kind), ["travel", "slam"]);
  assert.equal(out[1].delay, TRAVEL_MS);
});

test("a trap sends the moose and the trap to the discard pile", () => {
  const before = view([[], []], { seat: 1, attacker: 0, room: 0, card: "moose:kitchen" });
  const out = plan([move(1, { action: "trap" }, before)]);
  const toDiscard = out.filter((a) => a.kind === "travel" && a.to.zone === "discard").map((a) => a.card);
  assert.deepEqual(toDiscard.sort(), ["moose:kitchen", "trap"]);
});

test("two moves play one after the other", () => {
  const out = plan([move(0, { action: "discard", card: "door" }), move(1, { action: "discard", card: "house" })]);
  assert.deepEqual(out.map((a) => a.delay), [0, TRAVEL_MS]);
});

test("a burst, a state, reduced motion or a hidden tab animate nothing", () => {
  const one = move(0, { action: "discard", card: "door" });
  const burst = Array.from({ length: MAX_EXPLAINED + 1 }, () => one);
  assert.equal(plan([one]).length, 1);
  assert.deepEqual(plan(burst), []);
  assert.deepEqual(plan([{ event: { kind: "state" }, before: null, after: view() }]), []);
  assert.deepEqual(plan([one], { reduced: true }), []);
  assert.deepEqual(plan([one], { hidden: true }), []);
});

test("the last move is highlighted where its card went", () => {
  const h = highlight(move(0, { action: "play", card: "moose:living", target: 1, room: 0 }));
  assert.equal(h.seat, 0);
  assert.equal(spotKey(h.to), "room-1-0");
  assert.equal(highlight({ event: { kind: "state" }, before: null, after: null }), null);
});

test("a burst is too many events or a fresh state; a seat going away is not", () => {
  const one = move(0, { action: "discard", card: "door" });
  assert.equal(burst([one]), false);
  assert.equal(burst(Array.from({ length: MAX_EXPLAINED + 1 }, () => one)), true);
  assert.equal(burst([one, { event: { kind: "state" }, before: null, after: view() }]), true);
  const away = { event: { kind: "away", seat: 1 }, before: view(), after: view() };
  assert.equal(burst([away, one]), false);
  assert.equal(plan([away, one]).length, 1); // the move still travels
});
