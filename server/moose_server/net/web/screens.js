// The start screen (name, queue, private tables, live games) and a private table's screen.

import { h } from "./dom.js";
import { botKind, botName, count, duration, t } from "./i18n.js";

const SIZES = [2, 3, 4, 5, 6];
const BOTS = ["greedy", "cautious", "random", "mcts"];

/** @param {(v: any) => string} [shown] */
function select(id, chosen, values, label, shown = (v) => String(v)) {
  return h("select", { id, "aria-label": label }, values.map((v) => h("option", { value: v, selected: v === chosen }, shown(v))));
}

// ctx: {account, note, name, listing, queued, invited, busy, now, act: {...}}
export function renderLobby(ctx) {
  const { act } = ctx;
  return h(
    "section",
    { class: "lobby" },
    h(
      "div",
      { class: "panel who" },
      ctx.account
        ? h("p", { class: "playing-as" }, t("acct_playing_as", { name: ctx.account }))
        : [
            h("label", { for: "name" }, t("name_label")),
            h("input", {
              id: "name", testid: "name-input", maxlength: 24, autocomplete: "nickname",
              placeholder: t("name_placeholder"), value: ctx.name, disabled: ctx.busy,
              oninput: (e) => { act.setName(e.target.value); act.typed?.(); },
            }),
          ],
      ctx.note,
      h("p", { class: "counts", testid: "counts" }, counts(ctx.listing)),
    ),
    ctx.invited ? h("p", { class: "banner" }, t("invited", { code: ctx.invited })) : null,
    h(
      "div",
      { class: "choices" },
      ctx.queued ? queuedPanel(ctx) : playPanel(ctx),
      privatePanel(ctx),
      watchPanel(ctx),
    ),
  );
}

function counts(listing) {
  if (!listing) return "";
  return t("counts", {
    online: count("online_n", listing.online), waiting: count("waiting_n", listing.waiting),
    games: count("live_n", listing.games.length),
  });
}

function playPanel(ctx) {
  const range = ctx.range;
  return h(
    "form",
    { class: "panel", onsubmit: (e) => { e.preventDefault(); ctx.act.queue(+e.target.low.value, +e.target.high.value); } },
    h("h2", {}, t("play_title")),
    h("p", {}, t("play_text")),
    h("p", { class: "row" }, h("span", {}, t("players_range")), select("low", range[0], SIZES, t("players_range")), h("span", {}, t("to")), select("high", range[1], SIZES, t("to"))),
    h("button", { class: "primary", type: "submit", testid: "queue-button", disabled: ctx.busy }, t("queue_button")),
  );
}

function queuedPanel(ctx) {
  return h(
    "div",
    { class: "panel waiting" },
    h("h2", {}, t("play_title")),
    h("p", { class: "status", role: "status", testid: "queue-status" }, queuedText(ctx)),
    h("p", { class: "hint" }, t("queued_hint")),
    h("button", { testid: "cancel-button", onclick: ctx.act.cancelQueue }, t("cancel")),
  );
}

export function queuedText(ctx) {
  const q = ctx.queued;
  return t("queued", { min: q.min, max: q.max, time: duration(ctx.now() - q.since) });
}

function privatePanel(ctx) {
  return h(
    "div",
    { class: "panel" },
    h("h2", {}, t("private_title")),
    h("p", {}, t("private_text")),
    h(
      "form",
      { class: "row", onsubmit: (e) => { e.preventDefault(); ctx.act.create(+e.target.seats.value); } },
      h("label", { for: "seats" }, t("seats_label")),
      select("seats", 4, SIZES, t("seats_label")),
      h("button", { type: "submit", testid: "create-button", disabled: ctx.busy || Boolean(ctx.queued) }, t("create_button")),
    ),
    h(
      "form",
      { class: "row", onsubmit: (e) => { e.preventDefault(); ctx.act.join(e.target.code.value); } },
      h("label", { for: "code" }, t("join_label")),
      h("input", { id: "code", name: "code", testid: "join-code-input", maxlength: 8, autocomplete: "off", spellcheck: "false", class: "code", value: ctx.invited || "" }),
      h("button", { type: "submit", testid: "join-button", class: ctx.invited ? "primary" : "", disabled: ctx.busy || Boolean(ctx.queued) }, t("join_button")),
    ),
  );
}

function watchPanel(ctx) {
  const games = ctx.listing ? ctx.listing.games : [];
  return h(
    "div",
    { class: "panel" },
    h("h2", {}, t("watch_title")),
    h(
      "ul",
      { class: "live", testid: "live-games" },
      games.length
        ? games.map((g) =>
            h(
              "li",
              { "data-game": g.game },
              h("span", { class: "who" }, g.names.map((name, i) => h("span", { class: "pname" }, i ? "· " : "", liveName(ctx, g, i, g.bots[i] ? botName(name) : name), g.bots[i] ? h("span", { class: "badge bot" }, t("bot")) : null))),
              h("span", { class: "ago" }, t("started_ago", { time: duration(ctx.now() - g.started) })),
              h("a", { href: `/w/${g.game}`, testid: "watch-link", onclick: (e) => { e.preventDefault(); ctx.act.watch(g.game); } }, t("watch_link")),
            ),
          )
        : h("li", { class: "none" }, t("no_games")),
    ),
  );
}

// A rated seat's name opens its profile (site).
function liveName(ctx, g, seat, name) {
  if (!g.ratings || !g.ratings[seat] || !ctx.act.openProfile) return name;
  return h("button", { class: "linkish", testid: "profile-link", onclick: () => ctx.act.openProfile(g.game, seat) }, name);
}

// ctx: {table, me, act: {addBot, start, leave}}
export function renderTable(ctx) {
  const { table, me, act } = ctx;
  const isHost = table.host === me;
  const filled = table.seats.filter(Boolean).length;
  const link = `${location.origin}/t/${table.code}`;
  const hostSeat = table.seats.find((s) => s && s.player === table.host);
  return h(
    "section",
    { class: "panel table" },
    h("h2", {}, t("table_title", { code: "" }), h("span", { class: "code big", testid: "table-code" }, table.code)),
    h("p", {}, t("share"), " ", h("a", { href: link, testid: "table-link" }, link)),
    h(
      "ol",
      { class: "table-seats" },
      table.seats.map((seat) =>
        h(
          "li",
          { testid: "seat", class: seat ? "filled" : "empty" },
          seat ? h("span", { class: "name" }, seat.bot ? botName(seat.name) : seat.name) : t("seat_empty"),
          seat && seat.bot ? h("span", { class: "badge bot" }, t("bot")) : null,
          seat && seat.player === table.host ? h("span", { class: "badge" }, t("host")) : null,
          seat && seat.player === me ? h("span", { class: "badge you" }, t("you")) : null,
          seat ? h("span", { class: "rating", testid: "rating" }) : null,
        ),
      ),
    ),
    isHost
      ? h(
          "div",
          { class: "row" },
          select("bot", "greedy", BOTS, t("add_bot"), botKind),
          h("button", { testid: "add-bot-button", disabled: filled >= table.players, onclick: () => act.addBot(/** @type {HTMLSelectElement} */ (document.getElementById("bot")).value) }, t("add_bot")),
          h("button", { class: "primary", testid: "start-button", disabled: filled < 2, onclick: act.start }, t("start")),
        )
      : null,
    h("p", { class: "hint" }, isHost ? (filled < 2 ? t("start_needs") : t("start_ready", { n: filled })) : t("wait_host", { host: hostSeat ? hostSeat.name : "", n: filled, seats: table.players })),
    h("button", { onclick: act.leave, testid: "leave-button" }, t("leave")),
  );
}
