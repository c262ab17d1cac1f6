// @ts-check
// Playing the animations motion.js planned: a copy of the card (a "ghost", in a layer
// over the page) flies from where it was to where it lands, while the card drawn there
// waits unseen; a door slams shut. The table is drawn at once: this only shows how it
// got there, so input and the server never wait for it.
//
// Events that arrive within one frame are planned together (a burst is not replayed).

import { h } from "./dom.js";
import { drawing } from "./felt.js";
import { TRAVEL_MS, burst, plan, spotKey } from "./motion.js";

/** @type {{taken: import("./motion.js").Taken[], rects: Map<string, DOMRect>, frame: number} | null} */
let batch = null;
/** @type {Animation[]} the animations of the last batch */
let playing = [];
let lastRun = -Infinity; // when the last batch came
let caughtUp = false; // a stream is being caught up with: no motion until it pauses
/** The most motion waiting to be shown, in ms; more and the table catches up at once. */
const MAX_BACKLOG_MS = 4 * TRAVEL_MS;

/** Whether the person asked for less motion. */
export function reducedMotion() {
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

/**
 * Before the table is redrawn: note the events just taken, and where things are now.
 * @param {Element} table the table element, as drawn before these events
 * @param {import("./motion.js").Taken[]} taken
 */
export function before(table, taken) {
  if (!taken.length) return;
  if (!batch) {
    batch = { taken: [], rects: measure(table), frame: requestAnimationFrame(() => run(table)) };
  }
  batch.taken.push(...taken);
}

/** Forget what was waiting (another game is shown). */
export function drop() {
  if (batch) cancelAnimationFrame(batch.frame);
  batch = null;
}

/** @param {Element} table */
function measure(table) {
  /** @type {Map<string, DOMRect>} */
  const rects = new Map();
  if (!table.isConnected) return rects;
  for (const el of table.querySelectorAll("[data-spot]")) rects.set(el.getAttribute("data-spot") || "", el.getBoundingClientRect());
  for (const el of table.querySelectorAll('[data-testid="hand-card"]')) {
    const key = `card:${el.getAttribute("data-card")}`;
    if (!rects.has(key)) rects.set(key, el.getBoundingClientRect());
  }
  return rects;
}

/** @param {Element} table */
function run(table) {
  const now = batch;
  batch = null;
  if (!now || !table.isConnected) return;
  // Events coming faster than they can be shown (a reconnect's or a replay's stream):
  // what is still moving lands at once, and the table catches up without motion until
  // the stream pauses. A few moves (a round of bots answering at once) queue up.
  const at = performance.now();
  const fast = at - lastRun < TRAVEL_MS;
  lastRun = at;
  if (fast && caughtUp) return;
  caughtUp = false;
  playing = playing.filter((a) => a.playState === "running" || a.pending);
  const backlog = Math.max(0, ...playing.map((a) => Number(a.effect?.getComputedTiming().endTime || 0) - Number(a.currentTime || 0)));
  const planned = plan(now.taken, { reduced: reducedMotion(), hidden: document.hidden });
  const span = Math.max(0, ...planned.map((s) => s.delay + TRAVEL_MS));
  if (burst(now.taken) || backlog + span > MAX_BACKLOG_MS) {
    for (const a of playing) a.finish();
    playing = [];
    caughtUp = true;
    return;
  }
  const steps = planned.map((s) => ({ ...s, delay: s.delay + backlog }));
  if (steps.length) {
    // How many animations this page played: tests and the benchmark read it.
    const el = layer();
    el.dataset.played = String(Number(el.dataset.played || 0) + steps.length);
  }
  for (const step of steps) {
    if (step.kind === "slam") slam(table, spotKey({ zone: "room", seat: step.seat, room: step.room }), step.delay);
    else travel(table, now.rects, step);
  }
}

/**
 * @param {Element} table
 * @param {Map<string, DOMRect>} rects
 * @param {Extract<import("./motion.js").Animation, {kind: "travel"}>} step
 */
function travel(table, rects, step) {
  const fromKey = spotKey(step.from);
  const from = rects.get(`card:${step.card}`) && step.from.zone === "hand" && table.querySelector(`.cards[data-spot="${fromKey}"]`)
    ? rects.get(`card:${step.card}`)
    : rects.get(fromKey);
  const dest = table.querySelector(`[data-spot="${spotKey(step.to)}"]`);
  if (!from || !dest) return;
  // A moose or a door lands on its room: the cover waits unseen, not the room card.
  const covers = step.card.startsWith("moose:") || step.card === "door";
  const face = (covers && dest.querySelector(".cover")) || dest.querySelector(".card-face") || dest;
  const to = face.getBoundingClientRect();
  const ghost = h("span", { class: "ghost", "aria-hidden": "true" }, drawing(step.card));
  layer().appendChild(ghost);
  const width = to.width || 60;
  const start = `translate(${from.left + from.width / 2 - width / 2}px, ${from.top + from.height / 2 - (width * 1.4) / 2}px) scale(1.1) rotate(-8deg)`;
  const end = `translate(${to.left}px, ${to.top}px) scale(1) rotate(0deg)`;
  ghost.style.width = `${width}px`;
  const flight = ghost.animate(
    [{ transform: start, opacity: 0.95 }, { transform: end, opacity: 1 }],
    // No fill: a ghost waiting for its turn stays unseen (its CSS opacity is 0).
    { duration: TRAVEL_MS, delay: step.delay, easing: "cubic-bezier(.2,.7,.3,1)" },
  );
  flight.finished.then(() => ghost.remove(), () => ghost.remove());
  playing.push(flight);
  // The card drawn where it lands waits unseen until its ghost arrives.
  if (step.to.zone !== "discard" || step.card === lastCardOf(dest)) {
    playing.push(face.animate([{ opacity: 0 }, { opacity: 0 }], { duration: TRAVEL_MS + step.delay, fill: "none" }));
  }
}

/** @param {Element} dest */
function lastCardOf(dest) {
  const top = dest.querySelector(".card-face");
  return top ? top.getAttribute("data-card") : null;
}

/**
 * A door swings shut on its hinge, and the room shakes a little.
 * @param {Element} table
 * @param {string} key
 * @param {number} delay
 */
function slam(table, key, delay) {
  const room = table.querySelector(`[data-spot="${key}"]`);
  const door = room && room.querySelector(".cover.door");
  if (!room || !door) return;
  playing.push(door.animate(
    [{ transform: "perspective(200px) rotateY(-75deg)", opacity: 0.3 }, { transform: "perspective(200px) rotateY(6deg)", opacity: 1, offset: 0.8 }, { transform: "none", opacity: 1 }],
    { duration: 260, delay, easing: "ease-in", fill: "backwards" },
  ));
  playing.push(room.animate(
    [{ transform: "none" }, { transform: "translateX(-3px)" }, { transform: "translateX(3px)" }, { transform: "none" }],
    { duration: 180, delay: delay + 260 },
  ));
}

function layer() {
  let el = document.getElementById("flying");
  if (!el) {
    el = h("div", { id: "flying", class: "flying", "aria-hidden": "true" });
    document.body.appendChild(el);
  }
  return el;
}
