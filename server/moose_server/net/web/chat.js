// @ts-check
// Table chat, mute, block, report and follows: the page's side.
//
// Every line is shown as text (dom.js's h() sets text nodes, never HTML). A room's
// lines are kept in `line` order, once each; after a reconnect the page asks
// `chat_history` since the last line it has. Muting is the page's own (for this
// game, nothing is sent); blocking, reporting and following go to the server.

import { h } from "./dom.js";
import { t } from "./i18n.js";

const KEPT = 200; // lines a room keeps on the page
const MAX = 200; // characters of a line (PROTOCOL.md)

export const chat = {
  rooms: new Map(), // "game:room" or "code:table" -> [lines]
  loaded: new Set(), // places whose history was asked
  muted: new Set(), // "game:seat"
  draft: "",
  following: null, // the last `following` answer
  blocks: null, // the players we block: [{player, name}] (the `blocks` answer), once asked
  blocksOf: null, // whose blocks those are (a new session asks again)
  peopleOf: null, // whose blocks and follows a chat's buttons asked for
};

// A person at a game or a table among `list` ([{player, name}]): by id when the place
// gives one (a table's seats, a chat line), else by the name shown at the game.
function among(list, p) {
  return Boolean(list && list.some((x) => (p.player ? x.player === p.player : x.name === p.name)));
}

function order(id) {
  const [ms, n] = String(id).split("-");
  return [Number(ms), Number(n || 0)];
}

function before(a, b) {
  const [x, y] = [order(a), order(b)];
  return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]);
}

function placeOf(msg) {
  return msg.code ? `${msg.code}:table` : `${msg.game}:${msg.room}`;
}

// A `chat` line (live, or from a history): kept in order, once.
export function takeLine(msg) {
  const key = placeOf(msg);
  const lines = chat.rooms.get(key) || [];
  if (lines.some((l) => l.line === msg.line)) return false;
  let at = lines.length;
  while (at > 0 && before(msg.line, lines[at - 1].line)) at -= 1;
  lines.splice(at, 0, msg);
  if (lines.length > KEPT) lines.splice(0, lines.length - KEPT);
  chat.rooms.set(key, lines);
  return true;
}

// The lines kept of our room at a place, after the last we have: on opening a game
// or a table, and after every reconnect (`again`).
export async function loadHistory(net, place, again = false) {
  const id = place.game || place.code;
  if (chat.loaded.has(id) && !again) return false;
  chat.loaded.add(id);
  const room = [...chat.rooms.entries()].find(([k]) => k.startsWith(`${id}:`));
  const last = room && room[1].length ? room[1][room[1].length - 1].line : null;
  try {
    const ans = await net.request("chat_history", last ? { ...place, since: last } : place);
    for (const line of ans.lines) takeLine({ ...line, type: "chat" });
    return true;
  } catch {
    chat.loaded.delete(id); // not following it yet: asked again at its next event
    return false;
  }
}

// Every place whose history was asked, asked again since its last line.
export function reloadAll(net, render) {
  const places = [...chat.loaded];
  chat.loaded.clear();
  for (const id of places) {
    const place = id.startsWith("g_") ? { game: id } : { code: id };
    loadHistory(net, place, true).then(render);
  }
}

// ctx: {place: {game} | {code}, room, title, people: [{name, seat, player}], me,
//       act: {say, mute, block, follow, report, known}}
export function renderChat(ctx) {
  const id = ctx.place.game || ctx.place.code;
  const all = chat.rooms.get(`${id}:${ctx.room}`) || [];
  const lines = all.filter((l) => !chat.muted.has(`${id}:${l.seat}`));
  const hidden = all.length - lines.length;
  if (ctx.people.length) ctx.act.known();
  return h(
    "section",
    { class: "panel chat", testid: "chat-panel", "aria-label": ctx.title },
    h("h2", {}, ctx.title),
    ctx.people.length ? h("ul", { class: "people" }, ctx.people.map((p) => person(ctx, id, p))) : null,
    h(
      "ol",
      { class: "lines", testid: "chat-lines", "aria-live": "polite" },
      lines.length || hidden ? lines.map((l) => line(ctx, l)) : h("li", { class: "none" }, t("chat_empty")),
      hidden ? h("li", { class: "none", testid: "chat-hidden" }, t("chat_hidden", { n: hidden })) : null,
    ),
    h(
      "form",
      { class: "row say", onsubmit: (e) => { e.preventDefault(); ctx.act.say(ctx.place); } },
      h("input", {
        id: "chat-input", testid: "chat-input", maxlength: MAX, autocomplete: "off",
        placeholder: t("chat_placeholder"), "aria-label": t("chat_placeholder"), value: chat.draft,
        oninput: (e) => { chat.draft = e.target.value; },
      }),
      h("button", { type: "submit", testid: "chat-send" }, t("chat_send")),
    ),
  );
}

function person(ctx, id, p) {
  const muted = chat.muted.has(`${id}:${p.seat}`);
  return h(
    "li",
    { "data-seat": p.seat },
    h("span", { class: "name" }, p.name),
    p.seat !== undefined && p.seat !== null
      ? h("button", { class: "small", testid: "mute-button", "aria-pressed": muted ? "true" : "false",
          onclick: () => ctx.act.mute(id, p.seat) }, muted ? t("chat_unmute") : t("chat_mute"))
      : null,
    stateButton("block-button", chat.blocks && among(chat.blocks, p), ["chat_block", "people_unblock"], () => ctx.act.block(ctx.place, p)),
    stateButton("follow-button", chat.following && among(chat.following.players, p), ["follow", "unfollow"], () => ctx.act.follow(ctx.place, p)),
  );
}

// A button that says its state: pressed (blocked, followed) it offers the way back.
// Until the server has said whom we block and follow (null), it waits, disabled.
function stateButton(testid, on, [off, undo], onclick) {
  const known = on !== null;
  return h("button", { class: "small", testid, "aria-pressed": on ? "true" : "false", disabled: !known, "aria-busy": known ? null : "true", onclick }, t(on ? undo : off));
}

function line(ctx, l) {
  const mine = l.player === ctx.me;
  return h(
    "li",
    { testid: "chat-message", "data-line": l.line, "data-seat": l.seat ?? "" },
    h("span", { class: "name" }, l.name),
    ": ",
    h("span", { class: "text" }, l.text),
    mine ? null : h("button", { class: "report", testid: "report-button", title: t("chat_report_title"), onclick: () => ctx.act.report(l) }, t("report_button")),
  );
}

// The players we follow, in the lobby: online or not, and the games to watch.
// ctx: {act: {watch, unfollow}}
export function renderFollowing(ctx) {
  const players = chat.following ? chat.following.players : [];
  return h(
    "section",
    { class: "panel following" },
    h("h2", {}, t("following_title")),
    h(
      "ul",
      { class: "live", testid: "following-list" },
      players.length
        ? players.map((p) =>
            h(
              "li",
              { "data-player": p.player, "data-online": p.online ? "1" : "0" },
              h("span", { class: "pname" }, p.name),
              h("span", { class: p.online ? "badge you" : "badge" }, p.online ? t("online") : t("offline")),
              p.games.length ? h("span", { class: "ago" }, t("playing_now")) : null,
              p.games.map((g) => h("a", { href: `/w/${g}`, testid: "watch-followed", onclick: (e) => { e.preventDefault(); ctx.act.watch(g); } }, t("watch_link"))),
              // Their private tables' games: only their players may watch them.
              p.private ? h("span", { class: "ago", testid: "private-table" }, t("people_private_table")) : null,
              h("button", { class: "small", testid: "unfollow-button", onclick: () => ctx.act.unfollow(p) }, t("unfollow")),
            ),
          )
        : h("li", { class: "none" }, t("following_none")),
    ),
  );
}

// What the chat's buttons do; `ask(type, fields)` answers or shows the error.
export function chatActions({ net, ask, render, notice }) {
  return {
    // Whom we block and follow, for the buttons beside each person: asked once a
    // session, when a chat first shows someone (a page opened at its game asks here).
    known() {
      const player = net.welcome && net.welcome.player;
      if (!player || chat.peopleOf === player) return;
      chat.peopleOf = player;
      refreshFollowing(net, render).then(() => {
        if (!chat.following) chat.peopleOf = null; // not answered: asked at the next draw
      });
    },
    async say(place) {
      const text = chat.draft.trim();
      if (!text) return;
      // Cleared as it goes: the next line may be typed before this one's answer.
      chat.draft = "";
      render();
      const ans = await ask("say", { ...place, text });
      if (!ans && !chat.draft) chat.draft = text; // refused: the text comes back
      render();
    },
    mute(id, seat) {
      const key = `${id}:${seat}`;
      if (chat.muted.has(key)) chat.muted.delete(key);
      else chat.muted.add(key);
      render();
    },
    // Block, or unblock one blocked already (the button says which).
    async block(place, p) {
      if (among(chat.blocks, p)) {
        const ans = await ask("unblock", who(place, p));
        if (ans) unlisted(ans, t("unblocked_note", { name: ans.name }), notice);
        return;
      }
      const ans = await ask("block", who(place, p));
      if (ans) {
        for (const [key, lines] of chat.rooms) chat.rooms.set(key, lines.filter((l) => l.player !== ans.player));
        chat.blocks = [...(chat.blocks || []), { player: ans.player, name: ans.name }];
        notice(t("blocked_note", { name: ans.name }));
      }
    },
    // Follow, or unfollow one followed already.
    async follow(place, p) {
      const followed = among(chat.following && chat.following.players, p);
      const ans = await ask(followed ? "unfollow" : "follow", who(place, p));
      if (!ans) return;
      await refreshFollowing(net, render);
      notice(t(followed ? "unfollowed_note" : "followed_note", { name: ans.name }));
    },
    async unfollow(p) {
      if (await ask("unfollow", { player: p.player })) await refreshFollowing(net, render);
    },
    async report(l) {
      const reason = (window.prompt(t("report_prompt", { name: l.name })) || "").trim();
      if (!reason) return;
      const place = l.code ? { code: l.code } : { game: l.game, room: l.room };
      const ans = await ask("report", { ...place, player: l.player, chat: l.line, reason: reason.slice(0, 200) });
      if (ans) notice(t("report_sent", { name: l.name }));
    },
  };
}

// A person at a game is named as the table shows them; at a table, by id.
function who(place, p) {
  return p.player ? { player: p.player } : { player: p.name, game: place.game };
}

// An `unblocked` answer: off the list, and the player told.
function unlisted(ans, text, notice) {
  chat.blocks = (chat.blocks || []).filter((b) => b.player !== ans.player);
  notice(text);
}

// The players we block (`blocks`), for the buttons and the account page; asked once a
// session, then kept up to date by our own blocks and unblocks.
export async function loadBlocks(net, render) {
  const player = net.welcome && net.welcome.player;
  if (!player || chat.blocksOf === player) return;
  chat.blocksOf = player;
  try {
    chat.blocks = (await net.request("blocks")).players;
  } catch {
    chat.blocksOf = null; // asked again next time
    return;
  }
  render();
}

// Unblock a player from the account page's list (a refusal is thrown to the caller).
export async function unblock(net, p, notice) {
  const ans = await net.request("unblock", { player: p.player });
  unlisted(ans, t("unblocked_note", { name: ans.name }), notice);
}

// The account page's list of the players we block, each with its Unblock button.
export function renderBlocked(unblockOne) {
  const list = chat.blocks;
  return h(
    "div",
    { class: "panel blocked" },
    h("h3", {}, t("people_blocked_title")),
    h("p", { class: "hint" }, t("people_blocked_text")),
    h(
      "ul",
      { class: "live", testid: "blocked-list" },
      !list
        ? h("li", { class: "none" }, t("status_connecting"))
        : list.length
          ? list.map((b) => h("li", { "data-player": b.player }, h("span", { class: "pname" }, b.name),
              h("button", { class: "small", testid: "unblock-button", "aria-label": t("people_unblock_who", { name: b.name }), onclick: () => unblockOne(b) }, t("people_unblock"))))
          : h("li", { class: "none" }, t("people_blocked_none")),
    ),
  );
}

// Asked again every few seconds in the lobby: the page is drawn again only when the
// list changed (a redraw under a click would lose it).
export async function refreshFollowing(net, render) {
  loadBlocks(net, render);
  let answer;
  try {
    answer = await net.request("following");
  } catch {
    return;
  }
  delete answer.id;
  if (JSON.stringify(answer) === JSON.stringify(chat.following)) return;
  chat.following = answer;
  render();
}
