// @ts-check
// Rematch and challenges: the offers a player sees, and what they send.
//
// createTogether(ctx) keeps its own state; app.js hands it every server message
// (`heard`), draws its panel on each render, and lets a seat's name challenge.
// ctx: {ask(type, fields), request(type, fields), render(), watch(gameId), me(), session(),
//       game(): the game shown}

import { h } from "./dom.js";
import { DAYS, count, daysText, t } from "./i18n.js";

const REASONS = ["later", "not_rated", "table_size", "generic"];

export function createTogether(ctx) {
  const s = {
    incoming: null, // the last open challenge sent to us
    rematch: null, // the last rematch_offer of our ended game
    moved: null, // a watched game's rematch: {next}
    note: "", // the news of our own challenge or rematch
    form: { name: "", players: 2, rated: false, days: 0 },
  };

  function heard(msg) {
    if (msg.type === "challenge_offer") onChallenge(msg);
    else if (msg.type === "rematch_offer") onRematch(msg);
    else if (msg.type === "rematch_started") s.moved = msg;
    else return false;
    return true;
  }

  function onChallenge(msg) {
    const mine = msg.to_player === ctx.me();
    if (mine && msg.status === "open") s.incoming = msg;
    else if (s.incoming && s.incoming.challenge === msg.challenge) s.incoming = null;
    if (!mine || msg.status !== "open") {
      const other = mine ? msg.from : msg.to;
      s.note = t(`tg_challenge_${msg.status}`, { name: other, reason: t(`tg_reason_${msg.reason || "generic"}`) });
    }
  }

  function onRematch(msg) {
    s.rematch = msg.status === "started" ? null : msg;
    if (msg.status === "declined") s.note = t("tg_rematch_declined", { name: msg.by });
    else if (msg.status === "expired") s.note = t("tg_rematch_expired");
    else s.note = "";
  }

  // `days`: a correspondence game's days a move (0: real time).
  async function challenge(name, players = 2, rated = false, days = 0) {
    if (!(await ctx.session())) return; // the name typed in the lobby is who challenges
    const sent = await ctx.ask("challenge", { name, players, rated, ...(days ? { days } : {}) });
    if (sent) s.note = t("tg_challenge_sent", { name: sent.to });
    ctx.render();
  }

  async function answer(decline, reason = "generic") {
    const offer = s.incoming;
    s.incoming = null;
    if (!offer) return;
    ctx.render(); // the offer goes at the click, not when the server's answer comes
    if (decline) await ctx.ask("challenge_decline", { challenge: offer.challenge, reason });
    else await ctx.ask("challenge_accept", { challenge: offer.challenge });
    ctx.render();
  }

  async function rematch(game, accept) {
    const type = accept === false ? "rematch_decline" : s.rematch ? "rematch_accept" : "rematch";
    const ans = await ctx.ask(type, { game });
    if (ans) onRematch(ans);
    if (accept === false) s.rematch = null;
    ctx.render();
  }

  // What this part shows above the screen: a challenge to answer, a rematch, news.
  function panel(screen, game) {
    const parts = [incomingPanel(), gamePanel(screen, game), s.note ? h("p", { class: "note", testid: "together-note" }, s.note) : null];
    return parts.some(Boolean) ? h("section", { class: "together" }, parts) : null;
  }

  // Below the lobby: the form that challenges a player by name.
  function form(screen) {
    return screen === "lobby" ? h("section", { class: "together" }, challengeForm()) : null;
  }

  function incomingPanel() {
    const c = s.incoming;
    if (!c) return null;
    let reason = "generic";
    const said = t(c.rated ? "tg_challenged_rated" : "tg_challenged", { name: c.from, n: c.players });
    const text = c.days ? `${said} · ${count("days_move_n", c.days)}` : said;
    return h(
      "div",
      { class: "panel prompt", role: "alert", testid: "challenge-offer" },
      h("p", {}, text),
      h("button", { class: "primary", testid: "challenge-accept", onclick: () => answer(false) }, t("tg_accept")),
      h("select", { testid: "challenge-reason", "aria-label": t("tg_reason"), onchange: (e) => { reason = e.target.value; } },
        REASONS.map((r) => h("option", { value: r, selected: r === "generic" }, t(`tg_reason_${r}`)))),
      h("button", { testid: "challenge-decline", onclick: () => answer(true, reason) }, t("tg_decline")),
    );
  }

  function gamePanel(screen, game) {
    // An arena game has no rematch: the arena pairs its players again (arena.js).
    if (screen !== "game" || !game || !game.over || game.arena) return null;
    if (game.seat === null) {
      return s.moved && s.moved.game === game.id
        ? h("div", { class: "panel" }, h("button", { testid: "rematch-follow", onclick: () => ctx.watch(s.moved.next) }, t("tg_follow")))
        : null;
    }
    const offer = s.rematch && s.rematch.game === game.id ? s.rematch : null;
    const waiting = offer && offer.status === "open" && !offer.waiting.includes(game.names[game.seat]);
    if (offer && offer.status === "open" && !waiting) {
      return h(
        "div",
        { class: "panel prompt", testid: "rematch-offer" },
        h("p", {}, t("tg_rematch_offered", { name: offer.from })),
        h("button", { class: "primary", testid: "rematch-accept", onclick: () => rematch(game.id, true) }, t("tg_accept")),
        h("button", { testid: "rematch-decline", onclick: () => rematch(game.id, false) }, t("tg_decline")),
      );
    }
    if (waiting) return h("p", { class: "note", testid: "rematch-waiting" }, t("tg_rematch_waiting", { names: offer.waiting.join(", ") }));
    return h("div", { class: "panel" }, h("button", { class: "primary", testid: "rematch-button", onclick: () => rematch(game.id) }, t("tg_rematch")));
  }

  function challengeForm() {
    const f = s.form;
    return h(
      "form",
      { class: "panel challenge", testid: "challenge-form", onsubmit: (e) => { e.preventDefault(); if (f.name.trim()) challenge(f.name.trim(), f.players, f.rated, f.days); } },
      h("h2", {}, t("tg_challenge_title")),
      h("label", { for: "challenge-name" }, t("tg_challenge_name")),
      h("input", { id: "challenge-name", testid: "challenge-name", maxlength: 64, value: f.name, oninput: (e) => { f.name = e.target.value; } }),
      h("span", { class: "field" },
        h("label", { for: "challenge-players" }, t("tg_players")),
        h("select", { id: "challenge-players", testid: "challenge-players", onchange: (e) => { f.players = Number(e.target.value); } },
          [2, 3, 4, 5, 6].map((n) => h("option", { value: n, selected: n === f.players }, String(n))))),
      h("span", { class: "field" },
        h("label", { for: "challenge-days" }, t("days_label")),
        h("select", { id: "challenge-days", testid: "challenge-days", onchange: (e) => { f.days = Number(e.target.value); } },
          DAYS.map((d) => h("option", { value: d, selected: d === f.days }, daysText(d))))),
      h("label", {}, h("input", { type: "checkbox", testid: "challenge-rated", checked: f.rated, onchange: (e) => { f.rated = e.target.checked; } }), t("tg_rated")),
      h("button", { type: "submit", testid: "challenge-button" }, t("tg_challenge")),
    );
  }

  // A button on a seat's name: challenge that player to a new game. Not on a server
  // bot's seat (no player to challenge: it has no rating); a guest, who has no name of
  // their own, is challenged by the player id the seat's profile gives.
  function seatButton(name) {
    const game = ctx.game ? ctx.game() : null;
    const seat = game ? game.names.indexOf(name) : -1;
    if (seat >= 0 && game.bots[seat] && !game.ratings[seat]) return null;
    const onclick = () => (seat >= 0 ? challengeSeat(game.id, seat, name) : challenge(name));
    return h("button", { class: "report", testid: "challenge-button", title: t("tg_challenge_seat", { name }), onclick }, t("tg_challenge"));
  }

  async function challengeSeat(game, seat, name) {
    let found = null;
    try {
      found = await ctx.request("profile", { game, seat });
    } catch {
      found = null; // no profile (yet): the name it plays with, as for an account
    }
    await challenge(found && !found.account ? found.player : name);
  }

  return { heard, panel, form, seatButton };
}
