// @ts-check
// Arena tournaments' pages: the list at /arenas, one arena at /arena/ID
// with its standings (pushed by `watch_arena`), its live games (watch links) and results;
// and the arena around an arena game: its name, the player's points and place in the
// game, the end screen's points and countdown to the next pairing (PROTOCOL.md: a
// person rests `next`), a pause, and the arena's end with the player's final place.

import { h } from "./dom.js";
import { count, duration, t } from "./i18n.js";

// deps: {ask, send, request, go, render, session, watchGame, now, name, setName, openMatch}
export function arenaPages(deps) {
  const s = { list: null, shown: null, watching: null, member: null };
  // The arena of the player's arena games: its id, the last `arena` message, a `match`
  // held while the end screen counts down, and whether its end was put away.
  const mine = { id: null, msg: null, held: null, closed: false };

  function unwatch() {
    if (s.watching && s.watching !== mine.id) deps.send("unwatch_arena", { arena: s.watching });
    s.watching = null;
    s.shown = null;
    s.member = null;
  }

  async function change(type, arena = s.watching) {
    if (type === "join_arena" && !(await deps.session())) return;
    const ans = await deps.ask(type, { arena });
    if (ans && arena === s.watching) s.member = ans.state;
    if (ans && arena === mine.id && mine.msg) mine.msg = withState(mine.msg, deps.me(), ans.state);
    deps.render();
  }

  // The arena of an arena game of ours: followed (watched) from now on.
  function follow(id) {
    if (!id || mine.id === id) return;
    if (mine.id && mine.id !== s.watching) deps.send("unwatch_arena", { arena: mine.id });
    Object.assign(mine, { id, msg: null, held: null, closed: false });
    deps.request("watch_arena", { arena: id }).then((ans) => {
      if (mine.id === id) mine.msg = ans;
      deps.render();
    }, () => {});
  }

  // Until when the end screen counts down: our standing's `next`, while in the future.
  function nextAt() {
    const me = myLine(mine.msg, deps.me());
    if (!me || mine.msg.arena.state !== "running") return null;
    return me.state === "wait" && me.next && me.next > deps.now() ? me.next : null;
  }

  const act = {
    join: () => change("join_arena"),
    pause: () => change("pause_arena"),
    leave: () => change("leave_arena"),
    open: (id) => pages.open(id),
    watch: (game) => deps.watchGame(game),
    name: () => deps.name(),
    setName: (value) => deps.setName(value),
    leavePage: () => unwatch(),
  };
  const gameAct = {
    open: (id) => pages.open(id),
    pause: () => change("pause_arena", mine.id),
    resume: () => change("join_arena", mine.id),
    next: () => pages.release(),
    close: () => {
      mine.closed = true;
      deps.render();
    },
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
    // A pushed `arena` message; true when the page shows it (the arena's page, or ours).
    onMessage(msg) {
      if (msg.type !== "arena") return false;
      let shown = false;
      if (mine.id && msg.arena.id === mine.id) {
        mine.msg = msg;
        shown = true;
      }
      if (s.watching && msg.arena.id === s.watching) {
        s.shown = msg;
        shown = true;
      }
      return shown;
    },
    // A game of ours began or came back (`match`, or a `start` or `state` event): an
    // arena game's arena is followed. Returns the arena id, or null.
    seen(arenaId) {
      if (arenaId) follow(arenaId);
      return arenaId || null;
    },
    // A `match` of our arena while the end screen still counts down: held until the
    // countdown ends or the player moves on (the seat is the player's meanwhile).
    hold(msg, game) {
      if (!msg.arena || msg.arena !== mine.id || !game || !game.over || game.seat === null) return false;
      if (!nextAt()) return false;
      mine.held = msg;
      return true;
    },
    // The held `match`, shown now.
    release() {
      const held = mine.held;
      mine.held = null;
      if (held) deps.openMatch(held);
    },
    resume() {
      if (s.watching) deps.send("watch_arena", { arena: s.watching });
      if (mine.id && mine.id !== s.watching) deps.send("watch_arena", { arena: mine.id });
    },
    leavePage: unwatch,
    render(screen, me) {
      if (screen === "arenas") return renderList(s.list, act, deps.now);
      return renderArena(s.shown, s.member, me, act, deps.now);
    },
    // Above an arena game: its arena, our points and place; at its end, what it earned
    // and the countdown to the next pairing.
    gamePanel(game) {
      if (!game || !game.arena || game.arena !== mine.id || game.seat === null) return null;
      return arenaBar(mine.msg, game, deps.me(), { next: nextAt(), held: mine.held, now: deps.now }, gameAct);
    },
    // On every screen once our arena is over: where the player finished.
    banner() {
      const msg = mine.msg;
      if (!msg || msg.arena.state !== "over" || mine.closed) return null;
      return overBanner(msg, deps.me(), gameAct);
    },
    // Every half second (app.js's tick): the countdown's text, and the held game once due.
    tick(root) {
      const el = root.querySelector('[data-testid="arena-next"]');
      const at = nextAt();
      if (el && at) el.textContent = t("arena_next_in", { time: duration(at - deps.now()) });
      if (mine.held && !at) pages.release();
      else if (el && !at && el.dataset.counting) deps.render();
    },
  };
  return pages;
}

function myLine(msg, me) {
  return msg ? msg.standings.find((l) => l.player === me) || null : null;
}

// The standings with our own state changed at once (before the next push says so).
function withState(msg, me, state) {
  return { ...msg, standings: msg.standings.map((l) => (l.player === me ? { ...l, state } : l)) };
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
          h("thead", {}, h("tr", {}, columns(a).map((k) => h("th", { scope: "col" }, t(k))))),
          h("tbody", {}, shown.standings.map((s) => standing(s, me, act, a.state !== "over"))),
        ),
    h("h3", {}, t("arena_games_title")),
    h("ul", { class: "live" }, shown.games.map((g) => gameLine(g, act))),
  );
}

// The final standings have no "Now" column: nobody plays any more.
function columns(arena) {
  const all = ["arena_rank", "arena_player", "arena_pts", "arena_games", "arena_now"];
  return arena.state === "over" ? all.slice(0, -1) : all;
}

function standing(s, me, act, now) {
  return h(
    "tr",
    { testid: "arena-standing", class: s.player === me ? "you" : null },
    h("td", {}, String(s.rank)),
    h("td", {}, s.name, s.bot ? h("span", { class: "badge bot" }, t("bot")) : null, s.player === me ? h("span", { class: "badge you" }, t("you")) : null),
    h("td", {}, String(s.points)),
    h("td", {}, String(s.games)),
    now ? h("td", {}, s.game ? h("a", { href: `/w/${s.game}`, onclick: (e) => { e.preventDefault(); act.watch(s.game); } }, t("watch_link")) : t(`arena_member_${s.state}`)) : null,
  );
}

function gameLine(g, act) {
  const names = g.names.map((name, i) => (g.points ? `${name} ${g.points[i]}` : name)).join(" · ");
  return h(
    "li",
    { "data-game": g.game },
    h("span", { class: "who" }, names),
    g.end
      // A finished game's replay: the router (pages.js) opens links marked data-nav.
      ? h("a", { href: `/g/${encodeURIComponent(g.game)}`, "data-nav": "", testid: "arena-replay", onclick: act.leavePage }, t("arena_replay"))
      : h("a", { href: `/w/${g.game}`, testid: "arena-watch", onclick: (e) => { e.preventDefault(); act.watch(g.game); } }, t("watch_link")),
  );
}

// -- the arena around an arena game -------------------------------------------------

function arenaLink(arena, act) {
  return h("a", { href: `/arena/${encodeURIComponent(arena.id)}`, onclick: (e) => { e.preventDefault(); act.open(arena.id); } }, arena.name);
}

// The best three and the player: "1. alice 6 · 2. bob 5 · … 7. ann 2".
function compact(msg, me) {
  const lines = msg.standings;
  const shown = lines.filter((l, k) => k < 3 || l.player === me);
  return h(
    "ol",
    { class: "arena-compact", testid: "arena-standing", "aria-label": t("arena_standings") },
    shown.map((l) => h("li", { class: l.player === me ? "you" : null, value: l.rank }, `${l.name} `, h("strong", {}, String(l.points)))),
  );
}

function arenaBar(msg, game, me, clock, act) {
  if (!msg) return h("section", { class: "panel arena-bar", testid: "arena-bar" }, h("p", {}, t("status_connecting")));
  const line = myLine(msg, me);
  return h(
    "section",
    { class: "panel arena-bar", testid: "arena-bar", "aria-label": t("arena_name") },
    h(
      "p",
      { class: "row" },
      h("strong", {}, arenaLink(msg.arena, act)),
      line ? h("span", { testid: "arena-points" }, count("arena_points_n", line.points)) : null,
      line ? h("span", { testid: "arena-place" }, t("arena_place", { place: line.rank, n: msg.standings.length })) : null,
    ),
    compact(msg, me),
    game.over ? afterGame(msg, game, line, clock, act) : null,
  );
}

// The end screen's part: what this game earned, and what comes next.
function afterGame(msg, game, line, clock, act) {
  const played = msg.games.find((g) => g.game === game.id);
  const earned = played && played.points ? played.points[game.seat] : null;
  return h(
    "div",
    { class: "arena-after" },
    h("p", { testid: "arena-earned" }, earned === null ? t("arena_counting") : t("arena_earned", { n: earned })),
    nextPart(msg, line, clock, act),
  );
}

function nextPart(msg, line, clock, act) {
  if (msg.arena.state === "closing" || msg.arena.state === "over") {
    return h("p", { testid: "arena-next" }, t(msg.arena.state === "over" ? "arena_over_short" : "arena_no_more"));
  }
  if (!line || line.state === "left") return h("p", { testid: "arena-next" }, t("arena_left_note"));
  if (line.state === "paused") {
    return h("p", { class: "row" }, h("span", { testid: "arena-next" }, t("arena_paused_note")),
      h("button", { class: "primary", testid: "arena-game-resume", onclick: act.resume }, t("arena_resume")));
  }
  const text = clock.next ? t("arena_next_in", { time: duration(clock.next - clock.now()) }) : t("arena_next_wait");
  return h(
    "p",
    { class: "row" },
    h("span", { testid: "arena-next", role: "timer", "data-counting": clock.next ? "1" : null }, text),
    clock.held ? h("button", { class: "primary", testid: "arena-next-now", onclick: act.next }, t("arena_next_now")) : null,
    h("button", { testid: "arena-game-pause", onclick: act.pause }, t("arena_pause")),
  );
}

function overBanner(msg, me, act) {
  const line = myLine(msg, me);
  const params = { name: msg.arena.name, place: line ? line.rank : 0, n: msg.standings.length, points: line ? count("arena_points_n", line.points) : "" };
  return h(
    "section",
    { class: "banner arena-over", role: "status", testid: "arena-over" },
    h("p", {}, line ? t("arena_over_place", params) : t("arena_over_plain", params), " ", arenaLink({ ...msg.arena, name: t("arena_final_link") }, act)),
    h("button", { testid: "arena-over-close", onclick: act.close }, t("arena_close")),
  );
}
