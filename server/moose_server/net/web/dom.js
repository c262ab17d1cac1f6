// @ts-check
// Building the page: elements from data, with every string set as text, never as HTML.

const SVG = "http://www.w3.org/2000/svg";

/**
 * h("button", {class: "x", onclick: f, testid: "queue-button"}, "text", child, ...)
 * Handlers are set as the element's `on…` properties, so `morph` can hand them over.
 * @param {string} tag
 * @param {Record<string, any>} [attrs]
 * @param {...any} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) setHandler(el, key, value);
    else if (key === "testid") el.dataset.testid = value;
    else if (key === "class") el.className = value;
    else if (key === "value") /** @type {HTMLInputElement} */ (el).value = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  add(el, children);
  return el;
}

/** @param {Element} el @param {string} key @param {Function | null} fn */
function setHandler(el, key, fn) {
  /** @type {any} */ (el)[key] = fn;
  const keys = /** @type {any} */ (el).__on || (/** @type {any} */ (el).__on = new Set());
  keys.add(key);
}

/** @param {Node} el @param {any[]} children */
function add(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) add(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

// Line drawings on a 24 x 24 grid, in the text colour: cards carry them beside their names.
const PATHS = {
  kitchen: "M4 10h16v7a3 3 0 0 1-3 3H7a3 3 0 0 1-3-3zM2 10h2M20 10h2M9 7c0-1 1-1 1-3M14 7c0-1 1-1 1-3",
  living: "M3 11v6h18v-6M5 11V8a2 2 0 0 1 2-2h10a2 2 0 0 1 2 2v3M7 14h10M4 17v2M20 17v2",
  bedroom: "M3 19V6M3 14h18v5M21 14v-1a3 3 0 0 0-3-3h-8v4M6.5 10.5a1.5 1.5 0 1 0 .01 0",
  bathroom: "M3 12h18v1a6 6 0 0 1-6 6H9a6 6 0 0 1-6-6zM6 12V6a2 2 0 0 1 4 0M7 19l-1 2M17 19l1 2",
  moose: "M9 13c0 4 1.5 7 3 7s3-3 3-7M9 13c-1-2 0-4 3-4s4 2 3 4M9 10C6 10 3 8 3 4M3 7h3M6 9V5M15 10c3 0 6-2 6-6M18 7h3M18 9V5",
  door: "M6 21V3h12v18M3 21h18M14 12h1",
  trap: "M3 18h18M5 18l2-9h10l2 9M9 9l1 5M12 9v5M15 9l-1 5",
  house: "M3 11l9-7 9 7M5 10v10h14V10M10 20v-6h4v6",
  sound: "M4 9h4l5-4v14l-5-4H4zM16 9a4 4 0 0 1 0 6M18.5 6.5a7.5 7.5 0 0 1 0 11",
  mute: "M4 9h4l5-4v14l-5-4H4zM16 9l5 6M21 9l-5 6",
};

/** @param {string} name */
export function icon(name) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", PATHS[name] || PATHS.house);
  svg.appendChild(path);
  return svg;
}

/**
 * An SVG element from a tree of cards.js: [tag, attrs, ...children].
 * @param {import("./cards.js").Node_} tree
 * @returns {SVGElement}
 */
export function svg(tree) {
  const [tag, attrs, ...children] = tree;
  const el = /** @type {SVGElement} */ (document.createElementNS(SVG, tag));
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children) el.appendChild(svg(child));
  return el;
}

/**
 * Make `old` look like `fresh` by changing only what differs, so the elements that
 * stay stay (their running animations, focus, typed text and scroll with them).
 * Children pair by `data-key` when they have one, else by tag in order.
 * @param {Element} old
 * @param {Element} fresh
 */
export function morph(old, fresh) {
  syncAttributes(old, fresh);
  syncHandlers(old, fresh);
  morphChildren(old, fresh);
}

/**
 * Make `old`'s children look like `fresh`'s (the page's root: its own attributes stay).
 * A keyed node of `fresh` that `old` lacks is moved in as it is, so a drawing kept
 * from one draw to the next (the game's table) is not compared with itself.
 * @param {Element} old
 * @param {Element} fresh
 */
export function morphChildren(old, fresh) {
  const kept = new Map();
  for (const child of Array.from(old.childNodes)) {
    const key = keyOf(child);
    if (key) kept.set(key, child);
  }
  let at = old.firstChild;
  for (const next of Array.from(fresh.childNodes)) {
    const key = keyOf(next);
    /** @type {ChildNode | null} */
    let match = key ? kept.get(key) || null : null;
    if (!key) {
      // The next unkeyed old node of the same kind, if it is right here.
      if (at && !keyOf(at) && same(at, next)) match = at;
    }
    if (match && same(match, next)) {
      if (match !== at) old.insertBefore(match, at);
      else at = at.nextSibling;
      if (key) kept.delete(key);
      // A drawing that never changes for its key (`data-fixed`): nothing to compare.
      if (key && match instanceof Element && match.hasAttribute("data-fixed")) continue;
      if (match.nodeType === Node.TEXT_NODE) {
        if (match.nodeValue !== next.nodeValue) match.nodeValue = next.nodeValue;
      } else if (match instanceof Element && next instanceof Element) morph(match, next);
    } else {
      old.insertBefore(next, at);
    }
  }
  while (at) {
    const gone = at;
    at = at.nextSibling;
    gone.remove();
  }
}

/** @param {Node} node */
function keyOf(node) {
  return node instanceof Element ? node.getAttribute("data-key") : null;
}

/** @param {Node} a @param {Node} b */
function same(a, b) {
  if (a.nodeType !== b.nodeType) return false;
  return !(a instanceof Element) || (b instanceof Element && a.tagName === b.tagName && a.namespaceURI === b.namespaceURI);
}

/** @param {Element} old @param {Element} fresh */
function syncAttributes(old, fresh) {
  // Asked first: an attribute set below (disabled while its change is sent) takes the focus.
  const focused = document.activeElement === old;
  for (const attr of Array.from(old.attributes)) {
    if (!fresh.hasAttribute(attr.name)) old.removeAttribute(attr.name);
  }
  for (const attr of Array.from(fresh.attributes)) {
    if (old.getAttribute(attr.name) !== attr.value) old.setAttribute(attr.name, attr.value);
  }
  const input = /** @type {any} */ (old);
  const next = /** @type {any} */ (fresh);
  if (focused) return; // what is being typed or chosen stays
  if ("value" in input && input.value !== next.value) input.value = next.value;
  if ("checked" in input && input.checked !== next.checked) input.checked = next.checked;
}

/** @param {Element} old @param {Element} fresh */
function syncHandlers(old, fresh) {
  const had = /** @type {any} */ (old).__on;
  const has = /** @type {any} */ (fresh).__on;
  if (had) for (const key of had) if (!has || !has.has(key)) setHandler(old, key, null);
  if (has) for (const key of has) setHandler(old, key, /** @type {any} */ (fresh)[key]);
}
