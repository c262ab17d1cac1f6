// @ts-check
// A finished game, move by move (/g/GAME): every house, every hand, as it was.
//
// The record is public once the game is over (RULES.md 6), so every hand is shown;
// "Show" follows one seat's view instead. The states come from engine.js.

import { roomTile } from "./board.js";
import { h, icon } from "./dom.js";
import { replay as replayRecord, scores, toAct, winners } from "./engine.js";
import { gamePath } from "./flows.js";
import { Game } from "./game.js";
import { cardName, count, t } from "./i18n.js";

export class Replay {
  constructor(id) {
    this.id = id;
    this.record = null;
    this.states = null;
    this.actors = [];
    this.broken = null; // the first move that does not replay, or null
    this.step = 0; // moves applied
    this.follow = null; // a seat whose view is shown, or null: every hand
    this.error = "";
    this.words = new Game(id, null); // names and places in words, as the game's log says them
  }

  load(record) {
    const { states, actors, broken } = replayRecord(record);
    this.record = record;
    this.states = states;
    this.actors = actors;
    this.broken = broken;
    this.words.names = record.names || [];
  }

  get last() {
    return this.states ? this.states.length - 1 : 0;
  }

  go(step) {
    this.step = Math.max(0, Math.min(this.last, step));
  }
}

// The record of a public game over HTTP (GET /api/games/{game}/record): [record, null]
// or [null, error code].
export async function fetchRecord(id) {
  try {
    const answer = await fetch(`/api/games/${encodeURIComponent(id)}/record`);
    const body = await answer.json();
    return answer.ok ? [body, null] : [null, body.error || "unavailable"];
  } catch {
    return [null, "unavailable"];
  }
}

// ctx: {replay, go(step), setFollow(seat or null), leave()}
export function renderReplay(ctx) {
  const { replay } = ctx;
  const body = replay.states
    ? board(ctx)
    : h("p", { role: replay.error ? "alert" : "status", testid: "replay-status" }, replay.error || t("replay_loading"));
  return h(
    "section",
    { class: "replay", "aria-labelledby": "replay-title", "data-game": replay.id },
    h("h2", { id: "replay-title" }, replay.record ? t("replay_title", { names: (replay.record.names || []).join(", ") }) : t("replay")),
    body,
    h("p", { class: "actions" }, h("button", { testid: "replay-back", onclick: ctx.leave }, t("back"))),
  );
}

function board(ctx) {
  const { replay } = ctx;
  const s = replay.states[replay.step];
  return [
    h("p", { class: "hint" }, replay.follow === null ? t("replay_public") : t("replay_following", { name: replay.words.name(replay.follow) })),
    controls(ctx),
    h("p", { class: "status", role: "status", "aria-live": "polite", testid: "replay-move" }, said(replay)),
    replay.broken !== null ? h("p", { class: "banner error", role: "alert" }, t("replay_broken", { n: replay.broken + 1 })) : null,
    h("div", { class: "seats" }, [...Array(s.n).keys()].map((seat) => seatPanel(replay, s, seat))),
    h(
      "div",
      { class: "piles" },
      h("p", {}, h("strong", {}, t("draw_pile")), ` ${s.draw.length}`),
      h("p", {}, h("strong", {}, t("discard_pile")), ` ${s.discard.length}: `, s.discard.length ? cardName(s.discard[s.discard.length - 1]) : t("empty")),
    ),
  ];
}

function controls(ctx) {
  const { replay } = ctx;
  // The marks are drawn beside the words; the words alone are the name (narrow screens hide them).
  const button = (testid, to, [before, label, after], off) =>
    h("button", { testid, "aria-label": label, title: label, disabled: off, onclick: () => ctx.go(to) },
      before, h("span", { class: "label" }, label), after);
  const atStart = replay.step === 0;
  const atEnd = replay.step === replay.last;
  return h(
    "div",
    { class: "replay-controls", role: "group", "aria-label": t("replay_controls") },
    button("replay-first", 0, ["« ", t("replay_first"), ""], atStart),
    button("replay-prev", replay.step - 1, ["◀ ", t("replay_prev"), ""], atStart),
    h("input", {
      type: "range", id: "replay-slider", testid: "replay-slider", min: 0, max: replay.last, value: String(replay.step),
      "aria-label": t("replay_slider"), "aria-valuetext": t("replay_at", { step: replay.step, total: replay.last }),
      oninput: (e) => ctx.go(+e.target.value),
    }),
    button("replay-next", replay.step + 1, ["", t("replay_next"), " ▶"], atEnd),
    button("replay-last", replay.last, ["", t("replay_last"), " »"], atEnd),
    h("p", { class: "replay-at" }, t("replay_move_word"), " ", h("strong", { testid: "replay-step" }, String(replay.step)), " ", t("replay_of", { total: replay.last })),
    h("label", { for: "replay-follow" }, t("replay_show")),
    h(
      "select",
      { id: "replay-follow", testid: "replay-follow", onchange: (e) => ctx.setFollow(e.target.value === "" ? null : +e.target.value) },
      h("option", { value: "", selected: replay.follow === null }, t("replay_all")),
      (replay.record.names || []).map((name, seat) => h("option", { value: seat, selected: replay.follow === seat }, t("replay_as", { name }))),
    ),
    h("p", { class: "hint keys" }, t("replay_keys")),
  );
}

// What the step's move did, in the words of the game's log.
function said(replay) {
  const { step, states, words } = replay;
  if (step === 0) return t("replay_dealt", { dealer: words.name(states[0].dealer) });
  const move = replay.record.moves[step - 1];
  const text = words.describeMove(move, replay.actors[step - 1], states[step - 1]);
  const s = states[step];
  return s.over ? `${text} ${t("ev_over", { names: winners(s).map((k) => words.name(k)).join(", ") })}` : text;
}

function seatPanel(replay, s, seat) {
  const house = s.houses[seat];
  const acting = toAct(s) === seat;
  const shown = replay.follow === null || replay.follow === seat;
  const hand = s.hands[seat].slice().sort();
  return h(
    "article",
    { class: `seat${acting ? " acting" : ""}`, testid: "seat", "data-seat": seat },
    h(
      "header",
      {},
      acting ? h("span", { class: "turn-mark", "aria-hidden": "true" }, "▶") : null,
      h("span", { class: "name" }, replay.words.name(seat)),
      seat === s.dealer ? h("span", { class: "badge" }, t("dealer")) : null,
      h("span", { class: "count" }, s.over ? count("moose_n", scores(s)[seat]) : count("card_n", hand.length)),
    ),
    h("p", { class: house.house ? "house has" : "house" }, icon("house"), house.house ? t("house_yes") : t("house_no")),
    h("ul", { class: "rooms" }, house.rooms.length ? house.rooms.map((room, i) => roomTile(null, seat, i, room, null)) : h("li", { class: "none" }, t("no_rooms"))),
    shown ? h("p", { class: "hint in-hand" }, t("replay_in_hand")) : null,
    shown
      ? h("ul", { class: "chips", "aria-label": t("replay_hand", { name: replay.words.name(seat) }), testid: "replay-hand" },
          hand.length ? hand.map((card) => h("li", { class: `chip k-${card.split(":")[0]}`, "data-card": card }, cardName(card))) : h("li", { class: "none" }, t("hand_empty_other")))
      : null,
  );
}

// -- the controller -------------------------------------------------------------------

// The replay's actions for app.js; pages.js's router opens /g/GAME with `open`. `app`
// is the page's {state, net, go, render, follow}; these change only `state.screen`
// and `state.replay`.
export function makeReplays(app) {
  const { state, net } = app;
  const replays = {
    // Show game `id` (from `record` when the page has it), read once per replay shown.
    async open(id, record = null) {
      state.screen = "replay";
      const shown = state.replay;
      if (shown && shown.id === id && (shown.states || !record)) return; // loaded, or loading
      const replay = new Replay(id);
      state.replay = replay;
      const found = record || (await loadRecord(net, replay));
      if (state.replay !== replay) return;
      if (found) replay.load(found);
      app.render();
    },
    step(to) {
      state.replay.go(to);
      app.render();
    },
    follow(seat) {
      state.replay.follow = seat;
      app.render();
    },
    // Back where the player was: their game (its end too), their table, or the lobby.
    back() {
      state.replay = null;
      const game = state.game;
      if (game) app.go("game", game.seat === null && !game.over ? `/w/${game.id}` : gamePath(game.id));
      else if (state.table) app.go("table", `/t/${state.table.code}`);
      else {
        app.go("lobby", "/");
        app.follow();
      }
    },
    // Arrow keys step through a replay, Home and End go to its ends (the slider keeps its own).
    key(e) {
      const replay = state.replay;
      if (state.screen !== "replay" || !replay || !replay.states || e.altKey || e.ctrlKey || e.metaKey) return;
      if (e.target instanceof Element && e.target.closest("input, select, textarea")) return;
      const to = { ArrowLeft: replay.step - 1, ArrowRight: replay.step + 1, Home: 0, End: replay.last }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      replays.step(to);
    },
  };
  return replays;
}

// A finished game's record: over HTTP when it is public (a queue game's), else over
// the socket (a private table's, for its players).
async function loadRecord(net, replay) {
  const [record, code] = await fetchRecord(replay.id);
  if (record) return record;
  try {
    await net.opened;
    return (await net.request("record", { game: replay.id })).record;
  } catch (err) {
    replay.error = t(code === "not_over" || err.code === "not_over" ? "replay_not_over" : "replay_missing");
    return null;
  }
}
