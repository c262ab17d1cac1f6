// @ts-check
// The site around the table: a player's profile (/p/NAME or /p/PLAYER_ID) and the
// leaderboards (/leaderboard, /leaderboard/bots, ?page=N, ?pool=correspondence for
// the correspondence games' own ratings), read from the public HTTP
// API (PROTOCOL.md "Ratings, leaderboards and history"). A finished game's row opens
// its replay at /g/GAME. The router serves those, /account, and the replays' pages
// (/g/GAME, /rules: replay.js, howto.js).

import { h } from "./dom.js";
import { botName, count, language, t } from "./i18n.js";

const PAGE_SIZE = 20;
const CHART = { width: 560, height: 180, pad: 36 };

// The page a path shows, or null for the lobby's, a table's and a game's paths.
export function routeOf(loc) {
  const parts = loc.pathname.split("/").filter(Boolean);
  const query = new URLSearchParams(loc.search);
  const page = Math.max(1, parseInt(query.get("page") || "1", 10) || 1);
  if (parts[0] === "p" && parts[1]) return { screen: "profile", key: decoded(parts[1]) };
  if (parts[0] === "leaderboard") {
    const pool = query.get("pool") === "correspondence" ? "correspondence" : "realtime";
    return { screen: "leaderboard", kind: parts[1] === "bots" ? "bots" : "humans", page, pool };
  }
  if (parts[0] === "account") return { screen: "account" };
  if (parts[0] === "g" && parts[1]) return { screen: "replay", id: parts[1] };
  if (parts[0] === "rules") return { screen: "rules" };
  return null;
}

// The page's `state.screen` for a route: the replays' pages are screens of their own.
export function screenOf(route) {
  return route.screen === "replay" || route.screen === "rules" ? route.screen : "site";
}

// Whether a screen is one of the router's pages (else the lobby, a table or a game).
export function isPageScreen(screen) {
  return screen === "site" || screen === "replay" || screen === "rules";
}

function decoded(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part; // a malformed %-escape: looked up as typed, and not found
  }
}

// Where a player's profile is: an account by its name, anyone else by their id.
export function profilePath(p) {
  return p.account ? `/p/${encodeURIComponent(p.name)}` : `/p/${encodeURIComponent(p.player)}`;
}

export function leaderboardPath(kind, page = 1, pool = "realtime") {
  const query = new URLSearchParams();
  if (pool === "correspondence") query.set("pool", pool);
  if (page > 1) query.set("page", String(page));
  const rest = query.toString();
  return `/leaderboard${kind === "bots" ? "/bots" : ""}${rest ? `?${rest}` : ""}`;
}

// A link the page follows itself (app.js: any a[data-nav]), keeping the history.
export function navLink(href, attrs, ...children) {
  return h("a", { href, "data-nav": "", ...attrs }, ...children);
}

// Fetch what a route shows into `route.data` (or `route.error`), then `done()`.
export async function loadPage(route, done) {
  route.data = null;
  route.error = "";
  try {
    const url = route.screen === "profile"
      ? `/api/players/${encodeURIComponent(route.key)}`
      : `/api/leaderboard?kind=${route.kind}&pool=${route.pool}&limit=${PAGE_SIZE}&offset=${(route.page - 1) * PAGE_SIZE}`;
    const answer = await fetch(url, { headers: { Accept: "application/json" } });
    const body = await answer.json();
    if (!answer.ok) throw Object.assign(new Error(body.message), { code: body.error });
    route.data = body;
  } catch (err) {
    route.error = err.code === "no_such_player" ? t("people_no_player", { name: route.key }) : t("site_load_failed");
  }
  done(route);
}

// The router's pages in the page's `state` (app.js): `state.screen` screenOf(route)
// and `state.page` the route shown, with its data once loaded. A replay is opened by
// `replays` (replay.js's makeReplays), which keeps it in `state.replay`.
export class Router {
  constructor(state, render, replays) {
    this.state = state;
    this.render = render;
    this.replays = replays;
  }

  // Go to a page of the site, as a new entry of the browser's history.
  navigate(path) {
    if (location.pathname + location.search !== path) history.pushState(null, "", path);
    this.show();
  }

  // Show what the address says: a site page (loaded anew), else the lobby or our game.
  show() {
    const state = this.state;
    const route = routeOf(location);
    state.error = "";
    if (!route) {
      state.page = null;
      state.replay = null;
      if (isPageScreen(state.screen)) state.screen = state.game ? "game" : state.table ? "table" : "lobby";
      this.render();
      return;
    }
    state.screen = screenOf(route);
    state.page = route;
    if (route.screen === "replay") this.replays.open(route.id);
    else if (route.screen === "profile" || route.screen === "leaderboard") {
      loadPage(route, (done) => {
        if (state.page !== done) return;
        // An account's profile has its name in the address.
        if (done.data && done.data.account && done.screen === "profile") history.replaceState(null, "", profilePath(done.data) + location.search);
        this.render();
      });
    }
    this.render();
    window.scrollTo(0, 0);
  }

  // The site's own links (a[data-nav]) change the page without loading it again.
  listen(root) {
    root.addEventListener("click", (e) => {
      const link = e.target.closest && e.target.closest("a[data-nav]");
      if (!link || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      this.navigate(link.getAttribute("href"));
    });
  }
}

export function renderPage(route, ctx) {
  if (route.screen === "profile") return profilePage(route, ctx);
  return leaderboardPage(route);
}

function frame(title, ...children) {
  return h("section", { class: "site" }, h("h2", {}, title), ...children);
}

function waiting(route, title) {
  if (route.error) return frame(title, h("p", { class: "banner error", role: "alert" }, route.error));
  return frame(title, h("p", { role: "status" }, t("site_loading")));
}

// -- leaderboards -------------------------------------------------------------------

function leaderboardPage(route) {
  const title = t("site_board_title");
  const tab = (on, href, testid, label) => navLink(href, { class: on ? "tab on" : "tab", "aria-current": on ? "page" : null, testid }, label);
  const pools = h(
    "nav",
    { class: "tabs", "aria-label": t("site_board_pools") },
    ["realtime", "correspondence"].map((pool) => tab(pool === route.pool, leaderboardPath(route.kind, 1, pool), `board-pool-${pool}`, t(`site_board_${pool}`))),
  );
  const tabs = h(
    "nav",
    { class: "tabs", "aria-label": t("site_board_kinds") },
    ["humans", "bots"].map((kind) => tab(kind === route.kind, leaderboardPath(kind, 1, route.pool), `board-kind-${kind}`, t(`site_board_${kind}`))),
  );
  if (!route.data) return waiting(route, title);
  const { players, total, offset } = route.data;
  const caption = [t(`site_board_${route.kind}`), " · ", t(`site_board_${route.pool}`), " · ", count("site_players_n", total)];
  const rows = players.map((p, i) =>
    h(
      "tr",
      { testid: "leaderboard-row", "data-player": p.player },
      h("td", { class: "num" }, String(offset + i + 1)),
      h("td", {}, navLink(profilePath(p), { testid: "profile-link" }, p.name), p.bot ? h("span", { class: "badge bot" }, t("bot")) : null),
      h("td", { class: "num" }, String(p.rating)),
      h("td", { class: "num" }, String(p.games)),
    ),
  );
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  return frame(
    title,
    pools,
    tabs,
    h("p", { class: "hint" }, t("site_board_note", { n: route.data.provisional_games ?? 5 })),
    players.length
      ? h(
          "table",
          { class: "board" },
          h("caption", {}, ...caption),
          h("thead", {}, h("tr", {}, ["site_col_rank", "site_col_player", "site_col_rating", "site_col_games"].map((k) => h("th", { scope: "col" }, t(k))))),
          h("tbody", {}, rows),
        )
      : h("p", {}, t("site_board_empty")),
    pages > 1
      ? h(
          "nav",
          { class: "pager", "aria-label": t("site_pages") },
          route.page > 1 ? navLink(leaderboardPath(route.kind, route.page - 1, route.pool), { rel: "prev" }, t("site_prev")) : null,
          h("span", {}, t("site_page_of", { page: route.page, pages })),
          route.page < pages ? navLink(leaderboardPath(route.kind, route.page + 1, route.pool), { rel: "next" }, t("site_next")) : null,
        )
      : null,
  );
}

// -- profiles -----------------------------------------------------------------------

function profilePage(route, ctx) {
  if (!route.data) return waiting(route, t("site_profile"));
  const p = route.data;
  const mine = ctx.me === p.player;
  const history = p.history || [];
  const won = history.filter((g) => g.place === 1).length;
  const rated = history.filter((g) => g.rating !== null); // the chart's: unrated games change none
  return h(
    "section",
    { class: "site profile", "data-player": p.player },
    h(
      "h2",
      {},
      p.name || t("site_unnamed"),
      p.bot ? h("span", { class: "badge bot" }, t("bot")) : null,
      h("span", { class: "badge" }, p.account ? t("site_account") : t("site_guest")),
      mine ? h("span", { class: "badge you" }, t("you")) : null,
    ),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, t("site_rating")),
      p.rating === null
        ? h("dd", {}, h("strong", { testid: "profile-rating" }, t("people_no_rating")))
        : h("dd", {}, h("strong", { testid: "profile-rating" }, String(p.rating)), p.provisional ? ` ${t("site_provisional")}` : ""),
      h("dt", {}, t("site_rank")),
      h("dd", { testid: "profile-rank" }, p.rank ? t(p.bot ? "site_rank_bots" : "site_rank_humans", { rank: p.rank }) : t("site_unranked")),
      h("dt", {}, t("site_games")),
      h("dd", { testid: "profile-games" }, count("site_games_n", p.games), " · ", t("site_won_of", { won, n: history.length })),
      ...correspondenceFacts(p),
    ),
    p.provisional ? h("p", { class: "hint" }, t("site_provisional_note", { n: ctx.provisionalGames })) : null,
    !p.account && !p.bot ? h("p", { class: "hint" }, t("site_guest_note")) : null,
    rated.length ? chart(rated) : null,
    h("h3", {}, t("site_last_games")),
    history.length ? h("ol", { class: "history" }, history.map((g) => historyRow(g))) : h("p", {}, t("people_no_games")),
  );
}

// The correspondence games' rating (a pool of its own), once one changed it.
function correspondenceFacts(p) {
  const c = p.correspondence;
  if (!c || c.rating === null) return [];
  const rank = c.rank ? t(p.bot ? "site_rank_bots" : "site_rank_humans", { rank: c.rank }) : t("site_unranked");
  return [
    h("dt", {}, t("site_correspondence_rating")),
    h(
      "dd",
      { testid: "profile-correspondence" },
      h("strong", { testid: "profile-correspondence-rating" }, String(c.rating)),
      c.provisional ? ` ${t("site_provisional")}` : "",
      " · ",
      rank,
      " · ",
      count("site_games_n", c.games),
    ),
  ];
}

function historyRow(g) {
  const when = new Date(g.time).toLocaleString(language(), { dateStyle: "medium", timeStyle: "short" });
  const change = g.change > 0 ? `+${g.change}` : String(g.change);
  const names = g.names.map((name, seat) => {
    const player = g.players ? g.players[seat] : null;
    const label = [name, g.bots[seat] ? h("span", { class: "badge bot" }, t("bot")) : null, `: ${count("site_moose_n", g.scores[seat])}`];
    if (seat === g.seat || !player) return h("li", { class: seat === g.seat ? "self" : "" }, label);
    return h("li", {}, navLink(`/p/${encodeURIComponent(player)}`, { testid: "profile-link" }, name), label.slice(1));
  });
  return h(
    "li",
    { class: g.place === 1 ? "won" : "" },
    navLink(
      `/g/${encodeURIComponent(g.game)}`,
      { testid: "history-row", "data-game": g.game },
      t(g.place === 1 ? "site_place_won" : "site_place_n", { place: g.place, n: g.names.length }),
      " · ",
      g.rating === null ? t("people_unrated") : t("site_rating_after", { rating: g.rating, change }),
      " · ",
      h("time", { datetime: new Date(g.time).toISOString() }, when),
    ),
    h("ul", { class: "table-names", "aria-label": t("site_scores") }, names),
  );
}

// The rating over the history, oldest first, as a line: inline SVG, no library.
function chart(history) {
  const games = history.slice().reverse();
  const points = [games[0].rating - games[0].change, ...games.map((g) => g.rating)];
  const low = Math.min(...points);
  const high = Math.max(...points, low + 1);
  const { width, height, pad } = CHART;
  const x = (i) => pad + (i * (width - 2 * pad)) / Math.max(1, points.length - 1);
  const y = (r) => height - pad / 2 - ((r - low) * (height - pad)) / (high - low);
  const svg = (tag, attrs, ...kids) => {
    const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    for (const kid of kids) el.append(kid);
    return el;
  };
  const line = points.map((r, i) => `${x(i).toFixed(1)},${y(r).toFixed(1)}`).join(" ");
  const label = t("site_chart_label", { n: games.length, from: points[0], to: points[points.length - 1], low, high });
  const figure = svg(
    "svg",
    { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label, "data-testid": "profile-chart", class: "chart", "data-points": points.join(",") },
    svg("title", {}, label),
    svg("line", { x1: pad, y1: y(high), x2: width - pad / 2, y2: y(high), class: "grid" }),
    svg("line", { x1: pad, y1: y(low), x2: width - pad / 2, y2: y(low), class: "grid" }),
    svg("text", { x: pad - 4, y: y(high) + 4, "text-anchor": "end" }, String(high)),
    svg("text", { x: pad - 4, y: y(low) + 4, "text-anchor": "end" }, String(low)),
    svg("polyline", { points: line, class: "line" }),
    ...points.map((r, i) => svg("circle", { cx: x(i).toFixed(1), cy: y(r).toFixed(1), r: 3 })),
  );
  return h("figure", { class: "chart-box" }, figure, h("figcaption", {}, label));
}

// -- in the game ----------------------------------------------------------------------

// A seat's name; a rated seat's opens its profile (ctx.openProfile: app.js).
export function seatName(ctx, seat) {
  const { game } = ctx;
  const name = (game.bots[seat] ? botName(game.names[seat]) : game.names[seat]) || t("seat_n", { n: seat + 1 });
  if (!ctx.openProfile || !game.ratings[seat]) return h("span", { class: "name" }, name);
  return h(
    "button",
    { class: "name linkish", testid: "profile-link", title: t("site_profile_of", { name }), onclick: () => ctx.openProfile(game.id, seat) },
    name,
  );
}

// The end screen's word on our new rating (a rated game's `over` event carries it).
export function ratingChange(game) {
  const mine = game.seat !== null ? game.ratings[game.seat] : null;
  if (!mine || mine.change === undefined) return null;
  const change = mine.change > 0 ? `+${mine.change}` : String(mine.change);
  return h(
    "p",
    { class: "rating-change", testid: "rating-change", "data-rating": mine.rating, "data-change": mine.change },
    t("site_rating_change", { rating: mine.rating, change }),
    mine.provisional ? ` · ${t("site_rating_provisional")}` : "",
  );
}
