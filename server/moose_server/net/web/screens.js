// @ts-check
// The start screen (name, queue, private tables, live games) and a private table's screen.

import { welcomeArt } from "./cards.js";
import { h, svg } from "./dom.js";
import { DAYS, botKind, botName, count, daysText, duration, t } from "./i18n.js";

const SIZES = [2, 3, 4, 5, 6];
const BOTS = ["greedy", "cautious", "random", "mcts"];
const OPPONENTS = [1, 2, 3, 4, 5];

// What the player chose or typed in the lobby's forms, by field: drawn again as it is.
/** @type {Record<string, string>} */
const typed = {};

/** @param {(v: any) => string} [shown] */
function select(id, chosen, values, label, shown = (v) => String(v)) {
  const value = typed[id] ?? String(chosen);
  return h(
    "select",
    { id, "aria-label": label, onchange: (e) => { typed[id] = e.target.value; } },
    values.map((v) => h("option", { value: v, selected: String(v) === value }, shown(v))),
  );
}

// ctx: {account, note, name, listing, queued, invited, busy, starting, now, yourMove, myGames, act: {...}}
export function renderLobby(ctx) {
  const { act } = ctx;
  return h(
    "section",
    { class: "lobby" },
    h(
      "div",
      { class: "welcome", testid: "welcome" },
      svg(welcomeArt()),
      h("p", {}, h("strong", {}, t("tagline")), h("br"), t("welcome_line")),
    ),
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
      ctx.yourMove,
    ),
    ctx.invited ? h("p", { class: "banner" }, t("invited", { code: ctx.invited })) : null,
    h(
      "div",
      { class: "choices" },
      // Waiting in the queue comes first: what is happening, and the offers, in view.
      ctx.queued ? [queuedPanel(ctx), computerPanel(ctx)] : [computerPanel(ctx), playPanel(ctx)],
      ctx.myGames,
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

// "Play the computer": a private table of bots, started in one click.
function computerPanel(ctx) {
  return h(
    "form",
    { class: "panel computer", onsubmit: (e) => { e.preventDefault(); ctx.act.playComputer(+e.target.opponents.value, e.target.kind.value); } },
    h("h2", {}, t("computer_title")),
    h("p", {}, t("computer_text")),
    h(
      "p",
      { class: "row" },
      h("span", { class: "field" }, h("label", { for: "opponents" }, t("computer_opponents")), select("opponents", 2, OPPONENTS, t("computer_opponents"))),
      h("span", { class: "field" }, h("label", { for: "kind" }, t("computer_kind")), select("kind", "greedy", BOTS, t("computer_kind"), botKind)),
    ),
    h("button", { class: "primary", type: "submit", testid: "play-computer", disabled: ctx.busy || ctx.starting || Boolean(ctx.queued) },
      ctx.starting ? t("computer_starting") : t("computer_button")),
  );
}

function queuedPanel(ctx) {
  const q = ctx.queued;
  return h(
    "div",
    { class: "panel waiting" },
    h("h2", {}, t("play_title")),
    h("p", { class: "status", role: "status", testid: "queue-status" }, queuedText(ctx)),
    h("p", { class: "hint", testid: "queue-others" }, othersText(ctx)),
    q.bots ? h("p", { class: "hint", role: "status" }, t("queue_bots_asked", { n: q.bots })) : q.offered ? offers(ctx) : h("p", { class: "hint" }, t("queued_soon", { time: duration(q.offerAfter) })),
    h("button", { testid: "cancel-button", onclick: ctx.act.cancelQueue }, t("cancel")),
  );
}

// Who else waits, by the lobby's live counts (the player is one of them).
function othersText(ctx) {
  const others = ctx.listing ? Math.max(0, ctx.listing.waiting - 1) : 0;
  return others ? count("queued_others_n", others) : t("queued_nobody");
}

// Nobody came within the wait: a wider range of sizes, or the empty seats to bots.
function offers(ctx) {
  const q = ctx.queued;
  return h(
    "div",
    { class: "offers" },
    h("p", {}, t("queue_offer_text")),
    h(
      "p",
      { class: "queue-offers" },
      h("button", { class: "primary", testid: "queue-offer-bots", onclick: ctx.act.queueBots }, t("queue_offer_bots", { n: q.min })),
      q.min > 2 || q.max < 6 ? h("button", { testid: "queue-widen", onclick: ctx.act.widen }, t("queue_widen")) : null,
    ),
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
      { class: "row", onsubmit: (e) => { e.preventDefault(); ctx.act.create(+e.target.seats.value, +e.target.days.value); } },
      h("span", { class: "field" }, h("label", { for: "seats" }, t("seats_label")), select("seats", 4, SIZES, t("seats_label"))),
      h("span", { class: "field" }, h("label", { for: "days" }, t("days_label")), select("days", 0, DAYS, t("days_label"), daysText)),
      h("button", { type: "submit", testid: "create-button", disabled: ctx.busy || Boolean(ctx.queued) }, t("create_button")),
    ),
    h(
      "form",
      { class: "row", onsubmit: (e) => { e.preventDefault(); ctx.act.join(e.target.code.value); } },
      h("label", { for: "code" }, t("join_label")),
      h("input", { id: "code", name: "code", testid: "join-code-input", maxlength: 8, autocomplete: "off", spellcheck: "false", class: "code", value: typed.code ?? (ctx.invited || ""),
        oninput: (e) => { typed.code = e.target.value; } }),
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
    table.days ? h("p", { testid: "table-days" }, count("days_move_n", table.days)) : null,
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
