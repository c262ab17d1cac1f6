// @ts-check
// The way back to a game of ours from any page: its address (/play/GAME), the bar every
// other screen shows while it runs ("Back to your game — your move, 12 s"), and the
// page for an address the site does not have.

import { h } from "./dom.js";
import { duration, t } from "./i18n.js";

/**
 * @typedef {{ id: string, seat: number | null, view: any, legal: any[] | null, over: boolean,
 *   seenOver?: boolean, name(seat: number): string, left(now: number): number | null }} SeatedGame
 */

/** @param {string} id */
export function gamePath(id) {
  return `/play/${encodeURIComponent(id)}`;
}

/**
 * Whether the bar shows for this game: ours (seated), and not ended unseen.
 * @param {SeatedGame | null} game
 */
export function barShown(game) {
  return Boolean(game && game.seat !== null && game.view && !(game.over && game.seenOver));
}

/**
 * The bar's words: whose move, and our time left when it is ours.
 * @param {SeatedGame} game
 * @param {number} now server time, ms
 * @param {boolean} connected
 */
export function barText(game, now, connected) {
  if (game.over) return t("back_bar_over");
  const view = game.view;
  if (view.to_act === game.seat && game.legal) {
    const left = game.left(now);
    const time = !connected ? t("clock_offline") : left === null ? "" : duration(left);
    return t("back_bar_you", { time }).replace(/, $/, "");
  }
  return t("back_bar_other", { name: game.name(view.to_act) });
}

/**
 * The bar itself (test id `back-to-game`): a link to the game's address.
 * @param {SeatedGame} game
 * @param {{ now: number, connected: boolean, open(): void }} ctx
 */
export function backBar(game, ctx) {
  const mine = !game.over && game.view.to_act === game.seat && game.legal;
  return h(
    "a",
    {
      class: mine ? "back-bar mine" : "back-bar", href: gamePath(game.id), testid: "back-to-game",
      onclick: (/** @type {MouseEvent} */ e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        ctx.open();
      },
    },
    barText(game, ctx.now, ctx.connected),
  );
}

/**
 * Whether the page itself knows this address (else it shows `notFound`). The site's
 * pages (pages.js's routeOf) are asked for apart.
 * @param {string} path
 */
export function knownPath(path) {
  const [, kind, arg, more] = path.split("/");
  if (more !== undefined) return false;
  if (kind === "" && arg === undefined) return true;
  if (kind === "arenas") return !arg;
  return ["t", "w", "play", "arena"].includes(kind) && Boolean(arg);
}

/**
 * The page of an address the site does not have, with the way back.
 * @param {string} path
 * @param {() => void} back
 */
export function notFound(path, back) {
  return h(
    "section",
    { class: "panel not-found", testid: "not-found", "aria-labelledby": "not-found-title" },
    h("h2", { id: "not-found-title" }, t("not_found_title")),
    h("p", {}, t("not_found_text", { path })),
    h(
      "p",
      { class: "actions" },
      h("a", { class: "button primary", href: "/", testid: "not-found-back", onclick: (/** @type {Event} */ e) => { e.preventDefault(); back(); } }, t("not_found_back")),
    ),
  );
}
