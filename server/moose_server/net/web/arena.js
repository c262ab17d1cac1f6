// Arena tournaments' pages (issue 26, arena): the list at /arenas, one arena at /arena/ID
// with its standings (pushed by `watch_arena`), its live games (watch links) and results.

import { h } from "./dom.js";
import { duration, t } from "./i18n.js";

// deps: {ask, send, go, render, session, watchGame, now, name, setName}
export function arenaPages(deps) {
  const s = { list: null, shown: null, watching: null, member: null };

  function unwatch() {
    if (s.watching) deps.send("unwatch_arena", { arena: s.watching });
    s.watching = null;
    s.shown = null;
    s.member = null;
  }

  async function change(type) {
    const arena = s.watching;
    if (type === "join_arena" && !(await deps.session())) return;
    const ans = await deps.ask(type, { arena });
    if (ans && arena === s.watching) s.member = ans.state;
    deps.render();
  }

  const act = {
    join: () => change("join_arena"),
    pause: () => change("pause_arena"),
    leave: () => change("leave_arena"),
    open: (id) => pages.open(id),
    watch: (game) => deps.watchGame(game),
    name: () => deps.name(),
    setName: (value) => deps.setName(value),
  };

  const pages = {
    async openList() {
      unwatch();
      deps.go("arenas", "/arenas");
      const ans = await deps.ask("arenas");
      if (ans) s.list = ans.arenas;
      deps.render();
    },
    async open(id) {
      if (s.watching !== id) unwatch();
      s.watching = id;
      deps.go("arena", `/arena/${encodeURIComponent(id)}`);
      const ans = await deps.ask("watch_arena", { arena: id });
      if (ans && s.watching === id) s.shown = ans;
      deps.render();
    },
    // A pushed `arena` message; true when it is the one shown.
    onMessage(msg) {
      if (msg.type !== "arena" || !s.watching || msg.arena.id !== s.watching) return false;
      s.shown = msg;
      return true;
    },
    resume() {
      if (s.watching) deps.send("watch_arena", { arena: s.watching });
    },
    leavePage: unwatch,
    render(screen, me) {
      if (screen === "arenas") return renderList(s.list, act, deps.now);
      return renderArena(s.shown, s.member, me, act, deps.now);
    },
  };
  return pages;
}

function when(arena, now) {
  if (arena.state === "upcoming") return t("arena_starts_in", { time: duration(arena.start - now()) });
  if (arena.state === "running") return t("arena_ends_in", { time: duration(arena.end - now()) });
  return t(`arena_${arena.state}`);
}

function renderList(list, act, now) {
  return h(
    "section",
    { class: "panel arenas" },
    h("h2", {}, t("arenas_title")),
    h("p", {}, t("arenas_text")),
    !list
      ? h("p", {}, t("status_connecting"))
      : list.length === 0
        ? h("p", { class: "none" }, t("arenas_none"))
        : h(
            "table",
            { class: "arena-list" },
            h("thead", {}, h("tr", {}, ["arena_name", "arena_state", "arena_sizes", "arena_for"].map((k) => h("th", { scope: "col" }, t(k))))),
            h(
              "tbody",
              {},
              list.map((a) =>
                h(
                  "tr",
                  { testid: "arena-row", "data-arena": a.id },
                  h("td", {}, h("a", { href: `/arena/${encodeURIComponent(a.id)}`, onclick: (e) => { e.preventDefault(); act.open(a.id); } }, a.name)),
                  h("td", {}, when(a, now)),
                  h("td", {}, `${a.min_players}–${a.max_players}`),
                  h("td", {}, t(`arena_for_${a.for}`)),
                ),
              ),
            ),
          ),
  );
}

function renderArena(shown, member, me, act, now) {
  if (!shown) return h("section", { class: "panel arena" }, h("p", {}, t("status_connecting")));
  const a = shown.arena;
  const mine = shown.standings.find((s) => s.player === me);
  const state = member || (mine ? mine.state : null);
  const open = a.state === "running" || a.state === "upcoming";
  const winners = shown.standings.filter((s) => a.winners.includes(s.player)).map((s) => s.name);
  return h(
    "section",
    { class: "panel arena" },
    h("h2", {}, a.name),
    h("p", { testid: "arena-state" }, when(a, now), " · ", t("arena_sizes"), ` ${a.min_players}–${a.max_players}`, " · ", t(`arena_for_${a.for}`)),
    winners.length ? h("p", { class: "banner", testid: "arena-winners" }, t("arena_won_by", { names: winners.join(", ") })) : null,
    h("p", { class: "hint" }, t("arena_points")),
    open
      ? h(
          "p",
          { class: "row" },
          state ? null : h("label", { for: "name" }, t("name_label")),
          // The name to join with (session() in app.js reads this input).
          state ? null : h("input", { id: "name", maxlength: 24, autocomplete: "nickname", value: act.name(), oninput: (e) => act.setName(e.target.value) }),
          state === "wait"
            ? h("button", { testid: "arena-pause", onclick: act.pause }, t("arena_pause"))
            : h("button", { class: "primary", testid: "arena-join", onclick: act.join }, state === "paused" || state === "left" ? t("arena_resume") : t("arena_join")),
          state && state !== "left" ? h("button", { testid: "arena-leave", onclick: act.leave }, t("arena_leave")) : null,
        )
      : null,
    h("h3", {}, t("arena_standings")),
    shown.standings.length === 0
      ? h("p", { class: "none" }, t("arena_nobody"))
      : h(
          "table",
          { class: "standings" },
          h("thead", {}, h("tr", {}, ["arena_rank", "arena_player", "arena_pts", "arena_games", "arena_now"].map((k) => h("th", { scope: "col" }, t(k))))),
          h("tbody", {}, shown.standings.map((s) => standing(s, me, act))),
        ),
    h("h3", {}, t("arena_games_title")),
    h("ul", { class: "live" }, shown.games.map((g) => gameLine(g, act))),
  );
}

function standing(s, me, act) {
  return h(
    "tr",
    { testid: "arena-standing", class: s.player === me ? "you" : null },
    h("td", {}, String(s.rank)),
    h("td", {}, s.name, s.bot ? h("span", { class: "badge bot" }, t("bot")) : null, s.player === me ? h("span", { class: "badge you" }, t("you")) : null),
    h("td", {}, String(s.points)),
    h("td", {}, String(s.games)),
    h("td", {}, s.game ? h("a", { href: `/w/${s.game}`, onclick: (e) => { e.preventDefault(); act.watch(s.game); } }, t("watch_link")) : t(`arena_member_${s.state}`)),
  );
}

function gameLine(g, act) {
  const names = g.names.map((name, i) => (g.points ? `${name} ${g.points[i]}` : name)).join(" · ");
  return h(
    "li",
    { "data-game": g.game },
    h("span", { class: "who" }, names),
    g.end ? h("span", { class: "ago" }, t("arena_finished")) : h("a", { href: `/w/${g.game}`, testid: "arena-watch", onclick: (e) => { e.preventDefault(); act.watch(g.game); } }, t("watch_link")),
  );
}
