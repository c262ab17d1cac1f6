// Building the page: elements from data, with every string set as text, never as HTML.

const SVG = "http://www.w3.org/2000/svg";

// h("button", {class: "x", onclick: f, testid: "queue-button"}, "text", child, ...)
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "testid") el.dataset.testid = value;
    else if (key === "class") el.className = value;
    else if (key === "value") el.value = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  add(el, children);
  return el;
}

function add(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) add(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

export function replace(el, ...children) {
  el.replaceChildren();
  add(el, children);
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
};

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
