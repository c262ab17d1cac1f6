// @ts-check
// The page's controller: which screen shows, what each click sends, what each message changes.

import { renderGame, tickGame } from "./board.js";
import { mark } from "./cues.js";
import { chatActions, loadHistory, refreshFollowing, reloadAll, renderChat, renderFollowing, takeLine } from "./chat.js";
import { h, morphChildren } from "./dom.js";
import { randomSeed, verifyDeal } from "./fair.js";
import { arenaPages } from "./arena.js";
import { Game } from "./game.js";
import { duration, language, setLanguage, t } from "./i18n.js";
import { renderRules } from "./howto.js";
import { Net } from "./net.js";
import { makeReplays, renderReplay } from "./replay.js";
import { queuedText, renderLobby, renderTable } from "./screens.js";
import { createMyGames } from "./mygames.js";
import { accountBar, accountPage, accountPanel, guestNote, initAccount, offerLogin, placeholder } from "./account.js";
import { Router, isPageScreen, navLink, profilePath, renderPage, routeOf, screenOf } from "./pages.js";
import { createTogether } from "./together.js";
import { confirmInPage } from "./confirm.js";
import { backBar, barShown, barText, gamePath, knownPath, notFound } from "./flows.js";

const NAME = "moose.name";
const root = document.getElementById("app");
const state = {
  screen: "lobby", // lobby | table | game | site (a page of pages.js / account.js) | replay | rules | missing
  page: null, // the router's page shown: routeOf(location), with its data once loaded
  name: localStorage.getItem(NAME) || "", // as typed
  listing: null,
  queued: null, // {min, max, since, offerAfter, bots, offered}: the `queued` answer, and what the page offered
  range: [2, 4],
  table: null,
  game: null,
  selected: null,
  download: null,
  error: "",
  notice: "", // an account took this guest's name meanwhile (a fresh one given), a report sent
  busy: false,
  starting: false, // "Play the computer" is setting its table up
  moving: false,
  invited: null,
  status: "connecting",
  replay: null, // the finished game shown move by move (/g/GAME)
};

const net = new Net({ onMessage, onOpen: follow, onResume, onStatus, onWelcome });
const replays = makeReplays({ state, net, go, render, follow });
const router = new Router(state, () => render(), replays);
initAccount({
  net, render, session: startSession, errorText, prepare: () => session(),
  notice: (text) => { state.notice = text; render(); },
});
// Every seat the page takes adds a seed of its own to the deal (PROTOCOL.md, "Provably fair deals").
const FAIR = { fair: true };
// Rematch and challenges: their own state and panel.
const together = createTogether({
  ask, render, session, watch: (id) => act.watch(id), me: () => net.welcome && net.welcome.player,
  request: (type, fields) => net.request(type, fields), game: () => state.game,
});
// "Your move in N games" in the lobby (mygames.js).
const myGames = createMyGames({ request: (type, fields) => net.request(type, fields), render: () => render() });
// Arena tournaments: their screens are "arenas" and "arena".
const arenas = arenaPages({
  ask, send, go, render, session, watchGame: (game) => act.watch(game), now: () => net.now(),
  name: () => state.name, setName: (value) => act.setName(value),
  request: (type, fields) => net.request(type, fields), me: () => net.welcome && net.welcome.player,
  openMatch: (msg) => { takeMatch(msg); render(); },
});

// -- what the server says ---------------------------------------------------------

function onMessage(msg) {
  if (together.heard(msg)) {
    render();
    return;
  }
  switch (msg.type) {
    case "game_list":
      state.listing = msg;
      // Only the lobby shows it: elsewhere a redraw would only interrupt (a replay's slider).
      if (state.screen !== "lobby") return;
      break;
    case "match":
      if (state.game && state.game.id === msg.game) return;
      // Our seed for the provably fair deal (we ask for one: FAIR).
      if (msg.deal) send("seed", { game: msg.game, seed: randomSeed() });
      // The next arena game waits while the last one's end screen counts down (arena.js).
      if (!arenas.hold(msg, state.screen === "game" ? state.game : null)) takeMatch(msg);
      break;
    case "table":
      state.table = msg.host ? msg : null;
      if (!state.table && state.screen === "table") go("lobby", "/");
      break;
    case "event":
      onEvent(msg);
      break;
    case "deadline": // a turn goes on past its deadline: the countdown and the log say so
      if (!state.game || msg.game !== state.game.id || !state.game.told(msg)) return;
      break;
    case "arena":
      if (!arenas.onMessage(msg)) return;
      break;
    case "chat":
      if (!takeLine(msg)) return;
      break;
    case "error":
      state.error = errorText(msg);
      break;
    default:
      return;
  }
  render();
}

function takeMatch(msg) {
  state.queued = null;
  state.table = null;
  openGame(msg.game, msg.seat, msg);
}

function onEvent(msg) {
  const game = state.game;
  if (!game || msg.game !== game.id) return;
  const taken = game.take(msg);
  if (msg.event && msg.event.arena) game.arena = arenas.seen(msg.event.arena);
  loadHistory(net, { game: game.id }).then((got) => got && render()); // following it now: its chat's backlog
  if (taken === "gap") sync(game);
  if (taken !== "ok") return;
  state.moving = false;
  if (!game.legal || !game.legal.some((m) => m.card === state.selected)) state.selected = null;
  if (game.over && !game.record) fetchRecord(game);
}

// Every welcome: the correspondence challenges that waited for us while we were away.
function onWelcome(welcome) {
  if (!welcome.challenges || !welcome.challenges.length) return;
  for (const offer of welcome.challenges) together.heard(offer);
  render();
}

function noteRenamed(welcome) {
  if (!welcome.renamed_from) return;
  act.setName(welcome.name);
  state.notice = t("renamed", { old: welcome.renamed_from, name: welcome.name });
}

async function onResume(welcome) {
  // A new socket: carry on where we were.
  noteRenamed(welcome);
  if (state.account && !welcome.account) state.notice = t("acct_logged_out_elsewhere");
  state.account = welcome.account;
  const game = state.game;
  if (game && game.seat !== null && !game.over) sync(game);
  else if (game && !game.over) send("watch", { game: game.id });
  if (!game && welcome.games && welcome.games.length) resumeGame(welcome.games[0], !isPageScreen(state.screen));
  if (welcome.table) state.table = welcome.table;
  if (state.queued) send("queue", { min_players: state.queued.min, max_players: state.queued.max, ...FAIR });
  arenas.resume();
  reloadAll(net, render); // the chat lines said while we were away
  render();
}

function onStatus(status) {
  state.status = status;
  // What failed while the socket was down said "not connected": it is not true any more.
  if (status === "open" && state.error === t("err_lost")) {
    state.error = "";
    render();
  }
  renderStatus();
}

// -- what the player does ----------------------------------------------------------

const act = {
  setName(value) {
    state.name = value;
    localStorage.setItem(NAME, value.trim());
  },
  // The lobby's note follows the name as it is typed (without redrawing the input).
  typed() {
    const note = root.querySelector('[data-testid="guest-note"]');
    const fresh = guestNote(state.name);
    if (note && fresh) {
      note.className = fresh.className;
      note.textContent = fresh.textContent;
    }
  },
  async queue(low, high) {
    const [min, max] = [Math.min(low, high), Math.max(low, high)];
    state.range = [min, max];
    if (!(await session(() => act.queue(low, high))) || !(await secondGame())) return;
    const ans = await ask("queue", { min_players: min, max_players: max, ...FAIR });
    if (ans) state.queued = queuedOf(ans);
    render();
  },
  async cancelQueue() {
    state.queued = null;
    await ask("leave_queue");
  },
  // The queue's offers once nobody came (PROTOCOL.md `queue_range`, `queue_bots`).
  async widen() {
    const ans = await ask("queue_range", { min_players: 2, max_players: 6 });
    if (ans && state.queued) state.queued = { ...queuedOf(ans), offered: true };
    render();
  },
  async queueBots() {
    const ans = await ask("queue_bots", { players: state.queued ? state.queued.min : 2 });
    if (ans && state.queued) state.queued = { ...queuedOf(ans), offered: true };
    render();
  },
  // `days`: a correspondence table's days a move (0: real time).
  async create(players, days = 0) {
    if (!(await session(() => act.create(players, days))) || !(await secondGame())) return;
    const table = await ask("create_table", { players, ...FAIR, ...(days ? { days } : {}) });
    if (table) showTable(table);
  },
  async join(code) {
    if (!(await session(() => act.join(code))) || !(await secondGame())) return;
    const table = await ask("join_table", { code: code.trim().toUpperCase(), ...FAIR });
    if (table) showTable(table);
  },
  // "Play the computer": a private table, its other seats bots, started at once.
  async playComputer(opponents, bot) {
    if (!(await session(() => act.playComputer(opponents, bot))) || !(await secondGame())) return;
    state.starting = true;
    render();
    try {
      const table = await ask("create_table", { players: opponents + 1, ...FAIR });
      let ready = Boolean(table);
      for (let n = 0; ready && n < opponents; n += 1) ready = Boolean(await ask("add_bot", { code: table.code, bot }));
      if (ready) ready = Boolean(await ask("start_table", { code: table.code }));
      else if (table) send("leave_table", { code: table.code }); // what was set up goes
      if (!ready) state.table = null;
    } finally {
      state.starting = false;
      render();
    }
  },
  openProfile(game, seat) {
    return gameActions.openProfile(game, seat);
  },
  async addBot(bot) {
    const table = await ask("add_bot", { code: state.table.code, bot });
    if (table) state.table = table;
    render();
  },
  async start() {
    await ask("start_table", { code: state.table.code });
  },
  // Back to the lobby from anywhere (the logo): a game we sit in goes on behind the bar.
  home() {
    const game = state.game;
    if (state.screen === "table") return;
    if (game && (game.seat === null || game.over)) {
      gameActions.leave();
      return;
    }
    arenas.leavePage();
    state.page = null;
    state.replay = null;
    go("lobby", "/");
    follow();
    myGames.refresh();
  },
  // Back to the game we sit in (the bar, an address /play/GAME).
  toGame() {
    const game = state.game;
    if (!game) return;
    arenas.leavePage();
    state.page = null;
    state.replay = null;
    go("game", gamePath(game.id));
  },
  async leaveTable() {
    const code = state.table.code;
    state.table = null;
    go("lobby", "/");
    await ask("leave_table", { code });
  },
  async watch(id) {
    const game = openGame(id, null);
    if (location.pathname !== `/w/${id}`) history.pushState(null, "", `/w/${id}`);
    state.error = "";
    try {
      await net.request("watch", { game: id });
      rebuild(game);
    } catch (err) {
      // Not a game to show (none, or private): say so, with the way back (board.js).
      if (err.code === "lost") state.error = errorText(err);
      else if (state.game === game) game.missing = errorText(err);
    }
    render();
  },
};

const gameActions = {
  select(card) {
    state.selected = state.selected === card ? null : card;
    render();
    // The keyboard goes on from the card to where it can be played: one Tab-less step.
    if (state.selected) /** @type {HTMLElement | null} */ (root.querySelector('[data-testid="target"]'))?.focus();
  },
  async play(move) {
    const game = state.game;
    if (state.moving || !game || !game.legal) return;
    state.moving = true;
    state.selected = null;
    const moveId = `${Math.random().toString(36).slice(2, 10)}-${game.seq}`;
    try {
      await net.request("move", { game: game.id, seq: game.seq, move, move_id: moveId });
    } catch (err) {
      state.moving = false;
      // The game moved on meanwhile (a timeout): its next event is on its way.
      if (!["stale_seq", "not_your_turn", "game_over"].includes(err.code)) state.error = errorText(err);
      render();
    }
  },
  back() {
    send("ping"); // any message brings an away seat back
  },
  async openProfile(game, seat) {
    const found = await ask("profile", { game, seat });
    if (found) router.navigate(profilePath(found));
  },
  async report(seat) {
    const game = state.game;
    const name = game.names[seat];
    const reason = (window.prompt(t("report_prompt", { name })) || "").trim();
    if (!reason) return;
    const answer = await ask("report", { player: name, game: game.id, reason: reason.slice(0, 200) });
    if (answer) {
      state.notice = t("report_sent", { name });
      render();
    }
  },
  leave() {
    const game = state.game;
    if (game && game.seat === null && !game.over) send("unwatch", { game: game.id });
    state.game = null;
    state.download = null;
    arenas.leavePage();
    go("lobby", "/");
    follow();
    myGames.refresh();
  },
  replay() {
    const game = state.game;
    replays.open(game.id, game.recordData && game.recordData.deck ? game.recordData : null);
    router.navigate(`/g/${game.id}`);
  },
};

// The player's name is theirs: a new name (before playing) is a new session.
// `then`: what to do once logged in, when the name is an account's.
async function session(then = null) {
  const input = /** @type {HTMLInputElement | null} */ (document.getElementById("name"));
  const name = (input ? input.value : state.name).trim();
  if (!name || name.length > 24) {
    state.error = t("name_needed");
    render();
    document.getElementById("name")?.focus();
    return false;
  }
  act.setName(name);
  if (net.welcome && !net.welcome.account && net.welcome.name !== name) {
    state.busy = true;
    render();
    try {
      await startSession(await net.switchTo({ name }));
    } catch (err) {
      // An account's name: log in on the spot, then do what was asked.
      if (err.code === "name_taken") offerLogin(name, then);
      else state.error = errorText(err);
      return false;
    } finally {
      state.busy = false;
      render();
    }
  }
  return true;
}

// A new session (another name, a login, a logout): what the page showed of the old
// player goes; the new one's games, table and name come.
async function startSession(welcome, { loggedOut = false } = {}) {
  if (state.game && state.game.seat === null && !state.game.over) send("unwatch", { game: state.game.id });
  Object.assign(state, { game: null, table: null, queued: null, download: null, selected: null, error: "", notice: "" });
  state.account = welcome.account;
  if (loggedOut) act.setName("");
  else if (!placeholder(welcome.name)) act.setName(welcome.name);
  if (welcome.games && welcome.games.length) resumeGame(welcome.games[0]);
  else if (welcome.table) showTable(welcome.table);
  else if (!isPageScreen(state.screen) && !["arenas", "arena"].includes(state.screen)) state.screen = "lobby";
  arenas.resume(); // an arena page stays, watched by the new session
  if (state.page && state.page.screen === "profile") router.show();
  render();
}

async function ask(type, fields = {}) {
  state.error = "";
  state.notice = "";
  try {
    return await net.request(type, fields);
  } catch (err) {
    state.error = errorText(err);
    return null;
  } finally {
    render();
  }
}

function send(type, fields = {}) {
  net.request(type, fields).catch(() => {});
}

// A `queued` answer as the queue screen keeps it.
function queuedOf(ans) {
  return {
    min: ans.min_players, max: ans.max_players, since: ans.server_time,
    offerAfter: (ans.queue_offer_after ?? 20) * 1000, bots: ans.bots ?? null, offered: false,
  };
}

// Before a second game while one of ours runs: ask (its clock would run on unseen).
async function secondGame() {
  const game = state.game;
  if (!game || game.seat === null || !game.view || game.over) return true;
  return confirmInPage({ title: t("confirm_title"), text: t("confirm_text"), yes: t("confirm_yes"), no: t("confirm_no") });
}

function follow() {
  refreshFollowing(net, render);
  net.request("games", { follow: true }).then((list) => {
    state.listing = list;
    render();
  }, () => {});
}

function sync(game) {
  const fields = game.seq > 0 ? { game: game.id, since: game.seq } : { game: game.id };
  // `synced` tells the deadline as it is now (PROTOCOL.md): the countdown takes it.
  net.request("sync", fields).then((answer) => {
    if (state.game !== game) return;
    game.synced(answer);
    render();
  }, () => {});
}

// The game's events from the first (PROTOCOL.md `sync` since 0), after the `state` the
// page began with: its move log shows the game so far, not "following from here".
function rebuild(game) {
  send("sync", { game: game.id, since: 0 });
}

function openGame(id, seat, match = null, show = true) {
  const game = new Game(id, seat);
  if (match) {
    game.names = match.names || [];
    game.bots = match.bots || [];
    game.ratings = match.ratings || [];
    game.arena = arenas.seen(match.arena);
  }
  state.game = game;
  state.selected = null;
  state.download = null;
  if (!show) return game;
  state.screen = "game";
  if (seat !== null) showAddress(gamePath(id));
  return game;
}

// A game's own address: a new entry from the lobby (Back goes to it), else in place of
// the table's or the last game's address, which lead nowhere now.
function showAddress(path) {
  if (location.pathname === path) return;
  if (location.pathname === "/") history.pushState(null, "", path);
  else history.replaceState(null, "", path);
}

// A game of ours that went on while the page was away: its state, then its events;
// shown when `show`, else followed behind the bar.
function resumeGame(id, show = true) {
  const game = openGame(id, null, null, show);
  sync(game);
  rebuild(game);
  if (show) history.replaceState(null, "", gamePath(id));
}

function showTable(table) {
  loadHistory(net, { code: table.code }).then((got) => got && render());
  state.table = table;
  state.invited = null;
  go("table", `/t/${table.code}`);
}

function go(screen, path) {
  state.screen = screen;
  if (location.pathname !== path) history.pushState(null, "", path);
  render();
}

async function fetchRecord(game) {
  game.record = "asked";
  try {
    const ans = await net.request("record", { game: game.id });
    game.recordData = ans.record; // for its replay and the deal's check
    const blob = new Blob([JSON.stringify(ans.record, null, 1)], { type: "application/json" });
    if (state.game === game) state.download = URL.createObjectURL(blob);
  } catch {
    game.record = null;
  }
  render();
}

// The end screen's "verify this deal": the record alone, checked in this browser.
async function checkDeal() {
  const game = state.game;
  try {
    const differences = await verifyDeal(game.recordData);
    game.verdict = differences.length ? t("deal_differs", { what: differences.slice(0, 3).join("; ") }) : t("deal_fair");
  } catch (err) {
    game.verdict = t("deal_unchecked", { why: err.message });
  }
  render();
}

// A server error in the page's language, by its stable code (PROTOCOL.md "Errors");
// the server's own words only for a code this page does not know.
function errorText(err) {
  const key = `err_${err.code}`;
  const text = t(key, { message: err.message });
  return text === key ? err.message : text;
}

// -- drawing -----------------------------------------------------------------------

function render() {
  const focused = /** @type {HTMLElement | null} */ (document.activeElement);
  const key = focused && (focused.id || focused.dataset.key || focused.dataset.testid);
  const content = screenContent();
  const game = state.screen === "game" ? state.game : null;
  const mine = game && game.view && !game.over && game.legal && game.view.to_act === game.seat;
  mark(Boolean(mine), t("title"), t("turn_you"));
  if (game && game.over) game.seenOver = true; // its end seen: the bar has nothing more to say
  // Drawn again by changing only what changed: a button under the pointer, typed text
  // and a chosen option stay as they are while the lobby's list comes in.
  const fresh = h(
    "div",
    {},
    header(),
    h("div", { class: "conn", role: "status", id: "conn" }, connectionBanner()),
    state.screen !== "game" && barShown(state.game)
      ? backBar(state.game, { now: net.now(), connected: state.status === "open", open: act.toGame })
      : null,
    accountPanel(),
    state.error ? h("p", { class: "banner error", role: "alert", testid: "error" }, state.error) : null,
    state.notice ? h("p", { class: "banner", role: "status", testid: "notice" }, state.notice) : null,
    arenas.banner(),
    together.panel(state.screen, state.screen === "game" ? state.game : null),
    content,
    together.form(state.screen),
  );
  morphChildren(root, fresh);
  if (key) {
    const again = document.getElementById(key) || root.querySelector(`[data-key="${key}"], [data-testid="${key}"]`);
    if (again) again.focus({ preventScroll: true });
  }
  // The browser test reads this mark: the lobby with its live list, drawn for the first time.
  if (state.screen === "lobby" && state.listing && !performance.getEntriesByName("lobby-drawn").length) {
    performance.mark("lobby-drawn");
  }
}

function screenContent() {
  if (state.screen === "missing") return notFound(location.pathname, act.home);
  if (state.screen === "site" && state.page) {
    if (state.page.screen === "account") return accountPage();
    return renderPage(state.page, { me: net.welcome && net.welcome.player, provisionalGames: state.page.data ? state.page.data.provisional_games : 5 });
  }
  const me = net.welcome && net.welcome.player;
  if (state.screen === "game" && state.game) {
    return [arenas.gamePanel(state.game), renderGame({
      game: state.game, selected: state.selected, now: () => net.now(), online: state.status === "open", redraw: render,
      download: state.download, seatButton: together.seatButton, ...gameActions,
      verifyDeal: state.game.recordData && state.game.recordData.deal ? checkDeal : null,
    }), gameChat(state.game, me)];
  }
  if (state.screen === "arenas" || state.screen === "arena") return arenas.render(state.screen, net.welcome && net.welcome.player);
  if (state.screen === "replay" && state.replay) {
    return renderReplay({ replay: state.replay, go: replays.step, setFollow: replays.follow, leave: replays.back });
  }
  if (state.screen === "rules") return renderRules({ back: replays.back, game: Boolean(state.game && !state.game.over) });
  if (state.screen === "table" && state.table) {
    return [renderTable({ table: state.table, me, act: { ...act, leave: act.leaveTable } }), tableChat(state.table, me)];
  }
  state.screen = "lobby";
  return [renderLobby({
    account: net.welcome && net.welcome.account ? net.welcome.name : null,
    note: guestNote(state.name),
    name: state.name, listing: state.listing, queued: state.queued, range: state.range,
    invited: state.invited, busy: state.busy, starting: state.starting, now: () => net.now(), act,
    yourMove: myGames.line(),
    myGames: myGames.panel((id) => { resumeGame(id); render(); }),
  }), net.welcome ? renderFollowing({ act: { watch: act.watch, unfollow: chatAct.unfollow } }) : null];
}

// -- chat, blocks and follows (chat.js) -------------------------------------------------

const chatAct = chatActions({ net, ask, render, notice: (text) => { state.notice = text; render(); } });

function gameChat(game, me) {
  if (!game.view) return null;
  const seated = game.seat !== null;
  const people = (game.names || []).map((name, seat) => ({ name, seat }))
    .filter((p) => p.seat !== game.seat && !game.bots[p.seat] && p.name);
  return renderChat({
    place: { game: game.id }, room: seated ? "players" : "spectators", me, people, act: chatAct,
    title: t(seated ? "chat_players" : "chat_spectators"),
  });
}

function tableChat(table, me) {
  const people = table.seats.filter((s) => s && s.player && s.player !== me && !s.bot)
    .map((s) => ({ name: s.name, player: s.player }));
  return renderChat({ place: { code: table.code }, room: "table", me, people, act: chatAct, title: t("chat_table") });
}

function header() {
  return h(
    "header",
    { class: "top" },
    h("h1", {}, h("a", { href: "/", onclick: (e) => { e.preventDefault(); act.home(); } }, t("title"))),
    h(
      "nav",
      { class: "site-nav", "aria-label": t("site_nav") },
      navLink("/leaderboard", { testid: "leaderboard-link" }, t("site_leaderboard")),
      navLink("/rules", { class: "rules-link", testid: "rules-link", "aria-current": state.screen === "rules" ? "page" : null }, t("rules_link")),
      " ",
      h("a", { href: "/arenas", testid: "arena-link", onclick: (e) => { e.preventDefault(); arenas.openList(); } }, t("arenas_link")),
    ),
    accountBar(),
    // The other language, named in that language; on a phone only its short code shows.
    h(
      "button",
      { class: "lang", testid: "lang-button", lang: language() === "es" ? "en" : "es", onclick: toggleLanguage },
      h("span", { class: "long" }, t("switch_lang")),
      h("span", { class: "short", "aria-hidden": "true" }, t("switch_lang_short")),
    ),
  );
}

function statusText() {
  if (state.status === "lost") return t("status_lost", { time: duration(net.retryAt - Date.now() + 999) });
  if (state.status === "connecting") return t("status_connecting");
  return "";
}

// Present only while the page is not connected (test id `connection-banner`).
function connectionBanner() {
  const text = statusText();
  return text ? h("p", { class: "banner", testid: "connection-banner" }, text) : null;
}

function renderStatus() {
  const el = document.getElementById("conn");
  if (!el) return;
  const text = statusText();
  const banner = el.firstElementChild;
  if (banner && text) banner.textContent = text;
  else if (banner || text) el.replaceChildren(...[connectionBanner()].filter(Boolean));
}

function toggleLanguage() {
  setLanguage(language() === "es" ? "en" : "es");
  render();
}

// Clocks tick without redrawing the page (focus and selection stay put).
function tick() {
  renderStatus();
  if (state.game && state.screen === "game") tickGame(root, { game: state.game, now: () => net.now(), online: state.status === "open" });
  const bar = root.querySelector('[data-testid="back-to-game"]');
  if (bar && state.game) bar.textContent = barText(state.game, net.now(), state.status === "open");
  const q = state.queued;
  const queued = root.querySelector('[data-testid="queue-status"]');
  if (queued && q) queued.textContent = queuedText({ queued: q, now: () => net.now() });
  arenas.tick(root);
  // Nobody came within the wait: the queue screen offers what else there is.
  if (q && !q.offered && state.screen === "lobby" && net.now() - q.since >= q.offerAfter) {
    q.offered = true;
    render();
  }
}

// -- start -------------------------------------------------------------------------

// Back and forward through the arena pages; false: not one of them.
function arenaRoute() {
  const [, kind, arg] = location.pathname.split("/");
  if (kind === "arenas") arenas.openList();
  else if (kind === "arena" && arg) arenas.open(decodeURIComponent(arg));
  else if (state.screen === "arenas" || state.screen === "arena") {
    arenas.leavePage();
    state.screen = "lobby";
    return false;
  } else return false;
  return true;
}

async function boot() {
  setLanguage(language());
  const [, kind, arg] = location.pathname.split("/");
  if (kind === "t" && arg) state.invited = arg.toUpperCase();
  if (!routeOf(location) && !knownPath(location.pathname)) state.screen = "missing";
  render();
  setInterval(tick, 500);
  // Who of the players we follow is online: asked again now and then in the lobby.
  // And the games where it is our move (a correspondence player's may be many).
  setInterval(() => {
    if (state.screen !== "lobby" || !net.welcome) return;
    refreshFollowing(net, render);
    myGames.refresh();
  }, 5000);
  window.addEventListener("popstate", showPath);
  router.listen(root);
  document.addEventListener("keydown", replays.key);
  const opening = net.open(state.name.trim() || "guest");
  // The router's pages need no socket: shown at once (a private replay waits for it).
  if (routeOf(location)) router.show();
  let welcome;
  try {
    welcome = await opening;
  } catch (err) {
    state.error = errorText(err);
    render();
    return;
  }
  if (!state.name && welcome.name !== "guest") state.name = welcome.name;
  state.account = welcome.account;
  noteRenamed(welcome);
  // The name kept from last time is an account's now: offer to log in with it.
  if (net.taken) offerLogin(net.taken);
  await arrive(welcome, kind, arg ? decodeURIComponent(arg) : "");
  render();
  myGames.refresh();
}

// The first screen once connected, as the address says; a game of ours that the
// address does not show is followed behind the bar (flows.js).
async function arrive(welcome, kind, arg) {
  const games = welcome.games || [];
  const route = routeOf(location);
  if (kind === "play" && games.includes(arg)) return resumeGame(arg);
  if ((kind === "play" || kind === "w") && arg) return act.watch(arg);
  if (games.length) resumeGame(games[0], false);
  if (route) state.screen = screenOf(route);
  else if (state.screen === "missing") return;
  else if (welcome.table) showTable(welcome.table);
  else if (kind === "arenas") await arenas.openList();
  else if (kind === "arena" && arg) await arenas.open(arg);
  else if (state.invited && state.name) await act.join(state.invited);
}

// Back and forward: the screen the address names.
function showPath() {
  const [, kind, arg] = location.pathname.split("/");
  const game = state.game;
  if (routeOf(location) || arenaRoute()) {
    if (routeOf(location)) router.show();
    return;
  }
  state.page = null;
  state.replay = null;
  if (kind === "play" && game && game.id === decodeURIComponent(arg || "")) state.screen = "game";
  else if (location.pathname === "/" && game && state.screen === "game" && (game.seat === null || game.over)) {
    gameActions.leave();
    return;
  } else if (location.pathname === "/") state.screen = "lobby";
  else if (!knownPath(location.pathname)) state.screen = "missing";
  else {
    router.show();
    return;
  }
  render();
}

boot();
