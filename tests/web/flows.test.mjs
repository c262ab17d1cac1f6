// Unit tests of the page's pure parts for a game's way back, the tie-break and the
// move log's language (node --test tests/web/; tests/test_web_modules.py runs them).

import assert from "node:assert/strict";
import { test } from "node:test";

// What the modules read of a browser when imported.
globalThis.localStorage = { getItem: () => null, setItem: () => {} };
globalThis.navigator = { languages: ["en"] };
globalThis.document = { documentElement: {} };

const web = new URL("../../server/moose_server/net/web/", import.meta.url);
const { tieBreak, tieBreakText } = await import(new URL("ending.js", web));
const { barText, knownPath, gamePath } = await import(new URL("flows.js", web));
const { Game } = await import(new URL("game.js", web));
const { setLanguage } = await import(new URL("i18n.js", web));

const room = (cover) => ({ type: "kitchen", cover });
const house = (...covers) => ({ house: true, rooms: covers.map(room) });

function ended(scores, winners, houses) {
  return { over: true, scores, winners, houses, players: scores.length };
}

function game(view, seat, names = ["ann", "bob", "cat"]) {
  const g = new Game("g_1", seat);
  g.view = view;
  g.names = names;
  g.bots = names.map(() => false);
  return g;
}

test("no tie for the fewest moose: nothing to explain", () => {
  assert.equal(tieBreak(ended([1, 2], [0], [house(), house()])), null);
  assert.equal(tieBreak({ ...ended([1, 1], [], [house(), house()]), abandoned: true }), null);
  assert.equal(tieBreak(null), null);
});

test("a tie broken by doors names the doors of each tied seat", () => {
  const view = ended([2, 2, 5], [1], [house("door", null), house("door", "door"), house()]);
  assert.deepEqual(tieBreak(view), { tied: [0, 1], doors: [1, 2], moose: 2, winners: [1] });
  setLanguage("en");
  const lost = tieBreakText(game(view, 0));
  assert.match(lost, /^You had as many moose as bob \(2 moose\) but fewer doors/);
  assert.match(lost, /ann \(you\): 1 door, bob: 2 doors/);
  const watched = tieBreakText(game(view, null));
  assert.match(watched, /^ann, bob tied with 2 moose; a tie goes to the most doors, so the win goes to bob/);
  setLanguage("es");
  assert.match(tieBreakText(game(view, 0)), /menos puertas/);
  setLanguage("en");
});

test("a tie on moose and doors is shared", () => {
  const view = ended([0, 0], [0, 1], [house("door"), house("door")]);
  assert.equal(tieBreakText(game(view, 0, ["ann", "bob"])), "ann (you), bob tied with 0 moose and 1 door each: they win together.");
});

test("the page knows its own addresses and no others", () => {
  for (const path of ["/", "/t/ABCD2345", "/w/g_1", "/play/g_1", "/arenas", "/arena/a_1"]) assert.ok(knownPath(path), path);
  for (const path of ["/nothing", "/t/", "/play/", "/play/g_1/x", "/arenas/x", "/index.html"]) assert.ok(!knownPath(path), path);
  assert.equal(gamePath("g_1"), "/play/g_1");
});

test("the bar says whose move it is, our time, and when we cannot be heard", () => {
  setLanguage("en");
  const g = game({ to_act: 0, houses: [], players: 2 }, 0, ["ann", "bob"]);
  g.legal = [{ action: "pass" }];
  g.deadline = 12_000;
  assert.equal(barText(g, 0, true), "Back to your game — your move, 12 s");
  assert.equal(barText(g, 0, false), "Back to your game — your move, Not connected");
  g.view = { to_act: 1, houses: [], players: 2 };
  g.bots = [false, true];
  g.names = ["ann", "greedy-bot 1"];
  assert.equal(barText(g, 0, true), "Back to your game — greedy-bot 1's move");
  setLanguage("es");
  assert.equal(barText(g, 0, true), "Volver a tu partida — le toca a bot codicioso 1");
  setLanguage("en");
});

test("the move log says its events in the language of the moment", () => {
  setLanguage("en");
  const g = new Game("g_1", 0);
  const view = { players: 2, to_act: 1, houses: [house(), house()], hand_sizes: [4, 4], discard: [], draw_pile: 50 };
  g.take({ seq: 1, view, event: { kind: "start", players: 2, dealer: 1, names: ["ann", "greedy-bot 1"], bots: [false, true] } });
  g.take({ seq: 2, view, event: { kind: "move", seat: 1, move: { action: "discard", card: "trap" } } });
  assert.equal(g.log[1].text, "greedy-bot 1 discarded Moose Trap.");
  setLanguage("es");
  assert.equal(g.log[1].text, "bot codicioso 1 descartó Trampa para alces.");
  setLanguage("en");
});

test("a game lost by a banned seat's forfeit is over, says so, and explains no tie", () => {
  setLanguage("en");
  const g = new Game("g_1", 1);
  const view = { players: 2, over: false, to_act: 0, houses: [house(), house()], hand_sizes: [4, 4], discard: [], draw_pile: 50 };
  g.take({ seq: 1, view, event: { kind: "start", players: 2, dealer: 1, names: ["mallory", "ivan"], bots: [false, false] } });
  g.take({ seq: 2, view, event: { kind: "over", forfeit: [0], scores: [1, 1], winners: [1] } });
  assert.equal(g.view.over, true);
  assert.deepEqual(g.view.winners, [1]);
  assert.equal(tieBreak(g.view), null); // equal scores, but no doors decided it
  assert.equal(g.log[1].text, "Game over: mallory lost by forfeit (banned by a moderator). Won: ivan (you).");
});

test("a turn an outage made longer: the log says the server was briefly away", () => {
  setLanguage("en");
  const g = new Game("g_1", 0);
  const view = { players: 2, to_act: 1, houses: [house(), house()], hand_sizes: [4, 4], discard: [], draw_pile: 50 };
  g.take({ seq: 1, view, event: { kind: "start", players: 2, dealer: 0, names: ["ann", "bob"], bots: [false, false] } });
  const told = { type: "deadline", game: "g_1", seq: 1, to_act: 1, deadline: 16_000, server_time: 1_000 };
  assert.equal(g.told({ ...told, reason: "outage" }), true);
  assert.deepEqual(g.goesOn, { seat: 1, deadline: 16_000 });
  const line = g.log[g.log.length - 1];
  assert.equal(line.text, "The server was briefly away: bob's turn goes on, 15 s more.");
  setLanguage("es");
  assert.equal(line.text, "El servidor no respondió por un momento: el turno de bob sigue, 15 s más.");
  setLanguage("en");
  // Ours: the countdown takes the new deadline.
  const mine = new Game("g_1", 1);
  mine.take({ seq: 1, view, event: { kind: "start", players: 2, dealer: 0, names: ["ann", "bob"], bots: [false, false] } });
  mine.legal = [{ action: "pass" }];
  assert.equal(mine.told({ ...told, reason: "outage" }), true);
  assert.equal(mine.deadline, 16_000);
  assert.equal(mine.log[mine.log.length - 1].text, "The server was briefly away: your turn goes on, 15 s more.");
  // A reason the page does not know reads as a spared turn; one out of date is left.
  assert.equal(g.told({ ...told, reason: "later" }), true);
  assert.equal(g.log[g.log.length - 1].text, "bob lost their connection: their turn goes on, 15 s more.");
  assert.equal(g.told({ ...told, seq: 0, reason: "outage" }), false);
});
