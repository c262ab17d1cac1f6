// The card art: a drawing for every card kind, distinct, well formed and small.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CODES, ROOMS, art, coverArt, welcomeArt } from "../../server/moose_server/net/web/cards.js";

const text = (node) => JSON.stringify(node);

function walk(node, seen = []) {
  const [tag, attrs, ...children] = node;
  assert.equal(typeof tag, "string");
  assert.equal(typeof attrs, "object");
  seen.push(tag);
  for (const child of children) walk(child, seen);
  return seen;
}

test("every card code has its own drawing, and the back is none of them", () => {
  const drawn = new Set([...CODES, "back"].map((code) => text(art(code))));
  assert.equal(drawn.size, CODES.length + 1);
  assert.equal(text(art("nonsense")), text(art("back"))); // never a face it is not
});

test("each drawing is a well-formed svg tree on the card's grid", () => {
  for (const code of [...CODES, "back"]) {
    const tree = art(code);
    assert.equal(tree[0], "svg");
    assert.equal(tree[1].viewBox, "0 0 60 84");
    assert.equal(tree[1]["aria-hidden"], "true");
    assert.ok(walk(tree).length > 3);
  }
});

test("room types differ by shape, not only by colour", () => {
  // The corner marks (the first <g> with a fill) use a different element or path each.
  const mark = (room) => art(`room:${room}`).find((n) => Array.isArray(n) && n[0] === "g")[2];
  const shapes = ROOMS.map((room) => text(mark(room)).replace(/"fill":"[^"]*"/g, ""));
  assert.equal(new Set(shapes).size, ROOMS.length);
});

test("a moose card is its room with the moose on it", () => {
  for (const room of ROOMS) assert.ok(text(art(`moose:${room}`)).includes('"class":"moose"'));
  assert.ok(text(coverArt("moose")).includes('"class":"moose"'));
  assert.ok(!text(coverArt("door")).includes('"class":"moose"'));
});

function fills(node, out = []) {
  const [, attrs, ...children] = node;
  if (attrs.fill) out.push(attrs.fill);
  for (const child of children) fills(child, out);
  return out;
}

test("the drawings are coloured in under their outlines", () => {
  assert.ok(fills(art("moose:kitchen")).includes("#7a4b24")); // the moose's fur
  assert.ok(fills(art("door")).includes("#8a5a32")); // the door's wood
  assert.ok(fills(art("house")).includes("#b5533c")); // the roof
  assert.ok(fills(art("trap")).includes("#9aa0a6")); // the cage
});

test("the whole art is light", () => {
  const bytes = [...CODES, "back"].reduce((n, code) => n + text(art(code)).length, 0);
  assert.ok(bytes < 40000, `${bytes} bytes`);
});

test("the lobby's welcome has its moose and stays light", () => {
  const tree = welcomeArt();
  assert.equal(tree[1]["aria-hidden"], "true");
  assert.ok(text(tree).includes('"class":"moose"'));
  assert.ok(text(tree).length < 6000, `${text(tree).length} bytes`);
});
