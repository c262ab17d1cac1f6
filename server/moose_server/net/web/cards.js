// @ts-check
// The card art, drawn for this project: one illustration per card kind of RULES.md, and
// the back. Pure data (no DOM): `art(code)` gives an SVG tree that dom.js's `svg` draws,
// so the drawings are tested without a browser.
//
// Colour-blind safe: each room type has an Okabe-Ito colour AND its own corner shape
// (kitchen circle, living room square, bedroom triangle, bathroom diamond) AND its own
// furniture; the card's name is written under the drawing by the page (board.js).

/** @typedef {[string, Record<string, string | number>, ...Node_[]]} Node_ */

export const ROOMS = ["kitchen", "living", "bedroom", "bathroom"];

/** Every card code of RULES.md, and "back" for a card whose face is hidden. */
export const CODES = [
  ...ROOMS.map((r) => `room:${r}`),
  ...ROOMS.map((r) => `moose:${r}`),
  "house", "door", "trap",
];

const INK = "#3b2a1a";
/** @type {Record<string, {strong: string, wall: string}>} */
export const ROOM_COLOURS = {
  kitchen: { strong: "#e69f00", wall: "#fbe7bd" },
  living: { strong: "#56b4e9", wall: "#dbeefa" },
  bedroom: { strong: "#009e73", wall: "#cdeee2" },
  bathroom: { strong: "#cc79a7", wall: "#f5e0ec" },
};

// The corner mark of each room type: a shape, so the type reads without its colour.
/** @type {Record<string, (x: number, y: number) => Node_>} */
const PIPS = {
  kitchen: (x, y) => ["circle", { cx: x, cy: y, r: 3.2 }],
  living: (x, y) => ["rect", { x: x - 3, y: y - 3, width: 6, height: 6 }],
  bedroom: (x, y) => ["path", { d: `M${x} ${y - 3.6}l3.6 6.4h-7.2z` }],
  bathroom: (x, y) => ["path", { d: `M${x} ${y - 3.8}l3.8 3.8-3.8 3.8-3.8-3.8z` }],
};

// Outlines: a shape that has a colour puts its `fill` after `...line`, or the
// outline's "none" wins and the drawing is left uncoloured.
const line = { fill: "none", stroke: INK, "stroke-width": 1.6, "stroke-linecap": "round", "stroke-linejoin": "round" };

/** @type {Record<string, (c: string) => Node_[]>} */
const FURNITURE = {
  kitchen: (c) => [
    ["rect", { x: 14, y: 40, width: 32, height: 26, rx: 2, ...line, fill: "#fff" }],
    ["rect", { x: 19, y: 50, width: 22, height: 12, rx: 1.5, ...line, fill: c }],
    ["circle", { cx: 21, cy: 45, r: 1.6, fill: INK }], ["circle", { cx: 39, cy: 45, r: 1.6, fill: INK }],
    ["path", { d: "M20 40v-7h20v7M17 33h26", ...line, fill: c }],
    ["path", { d: "M25 28c-2-3 2-4 0-7M31 28c-2-3 2-4 0-7M37 28c-2-3 2-4 0-7", ...line, "stroke-width": 1.2 }],
  ],
  living: (c) => [
    ["path", { d: "M12 62V48a4 4 0 0 1 4-4h28a4 4 0 0 1 4 4v14z", ...line, fill: c }],
    ["path", { d: "M8 66V52a3 3 0 0 1 6 0v6h32v-6a3 3 0 0 1 6 0v14z", ...line, fill: c }],
    ["path", { d: "M14 58h32M10 66v3M50 66v3", ...line }],
    ["path", { d: "M44 40V24M40 24h8l-2-6h-4z", ...line, fill: "#fff" }],
  ],
  bedroom: (c) => [
    ["path", { d: "M8 68V38M52 68V50M8 58h44", ...line }],
    ["rect", { x: 11, y: 44, width: 14, height: 8, rx: 3, ...line, fill: "#fff" }],
    ["path", { d: "M22 50h26a4 4 0 0 1 4 4v4H22z", ...line, fill: c }],
    ["path", { d: "M40 26a6 6 0 1 0 4 10a7 7 0 0 1-4-10z", ...line, fill: "#fff3b0", "stroke-width": 1.2 }],
  ],
  bathroom: (c) => [
    ["path", { d: "M8 50h44v4a10 10 0 0 1-10 10H18A10 10 0 0 1 8 54z", ...line, fill: c }],
    ["path", { d: "M16 64l-2 5M44 64l2 5M12 50V30a5 5 0 0 1 10 0v2", ...line }],
    ["path", { d: "M18 33h8", ...line }],
    ["circle", { cx: 32, cy: 46, r: 3, ...line, fill: "#fff", "stroke-width": 1 }],
    ["circle", { cx: 38, cy: 44, r: 2.2, ...line, fill: "#fff", "stroke-width": 1 }],
    ["circle", { cx: 43, cy: 46.5, r: 2.6, ...line, fill: "#fff", "stroke-width": 1 }],
  ],
};

// The moose: a head with broad antlers, drawn once and placed on moose and house cards.
/** @returns {Node_} */
export function mooseHead(x = 30, y = 44, scale = 1) {
  const fur = "#7a4b24";
  return ["g", { transform: `translate(${x} ${y}) scale(${scale})`, class: "moose" },
    ["path", { d: "M-7-10c-6 0-9-6-16-7 2 3 1 5 3 7-3 0-5-1-7-3 1 5 6 9 12 10 3 0 6-2 8-4zM7-10c6 0 9-6 16-7-2 3-1 5-3 7 3 0 5-1 7-3-1 5-6 9-12 10-3 0-6-2-8-4z", ...line, fill: "#e8cf9e" }],
    ["path", { d: "M-10-6l-5-3 1 5zM10-6l5-3-1 5z", ...line, fill: fur }],
    ["path", { d: "M-8-8c0-5 16-5 16 0l1 12c1 5-1 10-5 12h-8c-4-2-6-7-5-12z", ...line, fill: fur }],
    ["path", { d: "M-6 10c0 6 12 6 12 0", ...line, fill: "#5a3418" }],
    ["path", { d: "M-2 17c-1 4 1 6 2 6s3-2 2-6", ...line, fill: fur }],
    ["circle", { cx: -3.6, cy: -1, r: 1.3, fill: INK }], ["circle", { cx: 3.6, cy: -1, r: 1.3, fill: INK }],
    ["circle", { cx: -2.2, cy: 10.5, r: 0.9, fill: INK }], ["circle", { cx: 2.2, cy: 10.5, r: 0.9, fill: INK }],
  ];
}

/** @returns {Node_[]} */
function frame(fill, edge) {
  return [["rect", { x: 1, y: 1, width: 58, height: 82, rx: 5, fill, stroke: edge, "stroke-width": 2 }]];
}

/** @returns {Node_[]} */
function corners(type) {
  const c = ROOM_COLOURS[type].strong;
  return [
    ["g", { fill: c, stroke: INK, "stroke-width": 1 }, PIPS[type](7.5, 8), PIPS[type](52.5, 76)],
  ];
}

/** @returns {Node_[]} */
function roomFace(type) {
  const { strong, wall } = ROOM_COLOURS[type];
  return [
    ...frame(wall, strong),
    ["rect", { x: 4, y: 68, width: 52, height: 12, rx: 2, fill: "#c9a77c" }],
    ["path", { d: "M4 68h52", ...line, "stroke-width": 1 }],
    ...FURNITURE[type](strong),
    ...corners(type),
  ];
}

/** @returns {Node_[]} */
function doorFace() {
  return [
    ...frame("#efe6d8", "#4d4d4d"),
    ["path", { d: "M16 76V14h28v62", ...line, fill: "#8a5a32" }],
    ["path", { d: "M20 18h20v22H20zM20 46h20v26H20z", ...line, fill: "#a06c3e", "stroke-width": 1.2 }],
    ["circle", { cx: 38, cy: 44, r: 2.2, ...line, fill: "#f2c14e", "stroke-width": 1 }],
    ["path", { d: "M8 76h44", ...line, "stroke-width": 2.4 }],
    ["path", { d: "M6 6h8v8H6zM46 70h8v8h-8z", fill: "#4d4d4d" }],
  ];
}

/** @returns {Node_[]} */
function trapFace() {
  return [
    ...frame("#f1ece4", "#222"),
    ["path", { d: "M8 64h44", ...line, "stroke-width": 2.4 }],
    ["path", { d: "M12 64l6-26h24l6 26z", ...line, fill: "#9aa0a6" }],
    ["path", { d: "M20 38v26M26 38v26M34 38v26M40 38v26", ...line, "stroke-width": 1.2 }],
    ["path", { d: "M18 38l12-12 12 12", ...line, fill: "none" }],
    ["path", { d: "M14 24l4 4M46 24l-4 4M30 14v6", ...line, stroke: "#d55e00", "stroke-width": 2 }],
    ["path", { d: "M6 10l4-6 4 6zM46 80l4-6 4 6z", fill: "#222" }],
  ];
}

/** @returns {Node_[]} */
function houseFace() {
  return [
    ...frame("#fff8ec", "#5b3a1e"),
    mooseHead(30, 26, 0.9),
    ["path", { d: "M8 46l22-16 22 16", ...line, fill: "#b5533c" }],
    ["path", { d: "M13 44v30h34V44", ...line, fill: "#f4d9a8" }],
    ["path", { d: "M26 74V60h8v14", ...line, fill: "#8a5a32" }],
    ["rect", { x: 17, y: 50, width: 7, height: 7, ...line, fill: "#dbeefa", "stroke-width": 1.2 }],
    ["rect", { x: 36, y: 50, width: 7, height: 7, ...line, fill: "#dbeefa", "stroke-width": 1.2 }],
    ["path", { d: "M5 5h7l-3.5 6z", fill: "#5b3a1e" }],
  ];
}

/** @returns {Node_[]} */
function backFace() {
  return [
    ["rect", { x: 1, y: 1, width: 58, height: 82, rx: 5, fill: "#7b2f2a", stroke: "#f4e6c8", "stroke-width": 2 }],
    ["rect", { x: 5, y: 5, width: 50, height: 74, rx: 3, fill: "none", stroke: "#f4e6c8", "stroke-width": 1, "stroke-dasharray": "3 2" }],
    ["path", { d: "M30 12l14 30-14 30-14-30z", fill: "#5e211d", stroke: "#e3c27a", "stroke-width": 1.2 }],
    ["g", { transform: "translate(30 42) scale(0.55)", fill: "#e3c27a" },
      ["path", { d: "M-7-10c-6 0-9-6-16-7 2 3 1 5 3 7-3 0-5-1-7-3 1 5 6 9 12 10 3 0 6-2 8-4zM7-10c6 0 9-6 16-7-2 3-1 5-3 7 3 0 5-1 7-3-1 5-6 9-12 10-3 0-6-2-8-4z" }],
      ["path", { d: "M-8-8c0-5 16-5 16 0l1 12c1 5-1 10-5 12h-8c-4-2-6-7-5-12z" }],
    ],
  ];
}

/**
 * The drawing of a card: an `svg` tree (viewBox 60 x 84) for a code of RULES.md, or
 * "back". An unknown code draws the back (never a face it is not).
 * @param {string} code
 * @returns {Node_}
 */
export function art(code) {
  const [kind, type] = code.split(":");
  /** @type {Node_[]} */
  let body;
  if (kind === "room" && ROOMS.includes(type)) body = roomFace(type);
  else if (kind === "moose" && ROOMS.includes(type)) body = [...roomFace(type), mooseHead(30, 33, 1.1)];
  else if (code === "house") body = houseFace();
  else if (code === "door") body = doorFace();
  else if (code === "trap") body = trapFace();
  else body = backFace();
  return ["svg", { viewBox: "0 0 60 84", class: "art", "aria-hidden": "true", focusable: "false" }, ...body];
}

/**
 * What lies on a room of a house, drawn over its room card: the moose or the door.
 * @param {"moose" | "door"} cover
 * @returns {Node_}
 */
export function coverArt(cover) {
  const body = cover === "moose" ? [mooseHead(30, 42, 1.3)] : doorFace();
  return ["svg", { viewBox: "0 0 60 84", class: `art over-${cover}`, "aria-hidden": "true", focusable: "false" }, ...body];
}

/**
 * The lobby's welcome: a house with a moose looking out of its window (antlers too
 * broad for the frame), and a card back and a moose card at its side.
 * @returns {Node_}
 */
export function welcomeArt() {
  const card = (/** @type {string} */ at, /** @type {Node_[]} */ body) => /** @type {Node_} */ (["g", { transform: at }, ...body]);
  return ["svg", { viewBox: "0 0 180 100", class: "welcome-art", "aria-hidden": "true", focusable: "false" },
    ["path", { d: "M4 92h172", ...line, "stroke-width": 2 }],
    card("translate(6 38) rotate(-10) scale(0.6)", backFace()),
    card("translate(140 34) rotate(9) scale(0.6)", [...roomFace("bedroom"), mooseHead(30, 33, 1.1)]),
    ["rect", { x: 112, y: 22, width: 9, height: 16, ...line, fill: "#8a5a32" }],
    ["path", { d: "M38 52l52-36 52 36", ...line, fill: "#b5533c" }],
    ["path", { d: "M48 46v46h84V46", ...line, fill: "#f4d9a8" }],
    ["path", { d: "M58 92V70h16v22", ...line, fill: "#8a5a32" }],
    ["rect", { x: 58, y: 52, width: 16, height: 12, ...line, fill: "#dbeefa" }],
    ["rect", { x: 92, y: 56, width: 30, height: 24, ...line, fill: "#dbeefa" }],
    mooseHead(107, 70, 0.75),
  ];
}

/**
 * The card's class names: its kind and room type, for the CSS colours.
 * @param {string} code
 */
export function cardClass(code) {
  const [kind, room] = code.split(":");
  return room ? `k-${kind} r-${room}` : `k-${kind}`;
}
