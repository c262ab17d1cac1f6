// @ts-check
// How to play (/rules): the goal, the cards, a turn, the trap, the end, in the
// player's language. RULES.md is the contract; this is it told to a new player.

import { h, icon } from "./dom.js";
import { cardName, t } from "./i18n.js";

const CARDS = [
  ["room", "room:kitchen", "kitchen"],
  ["moose", "moose:kitchen", "moose"],
  ["house", "house", "house"],
  ["door", "door", "door"],
  ["trap", "trap", "trap"],
];

// ctx: {back(), game: whether a game of ours is being played}
export function renderRules(ctx) {
  const part = (key, ...body) => h("section", { "aria-labelledby": `how-${key}` }, h("h3", { id: `how-${key}` }, t(`how_${key}_h`)), body);
  const list = (...keys) => h("ul", {}, keys.map((key) => h("li", {}, t(key))));
  return h(
    "article",
    { class: "panel howto", "aria-labelledby": "how-title", testid: "rules" },
    h("h2", { id: "how-title" }, t("how_title")),
    h("p", {}, t("how_intro")),
    part("goal", h("p", {}, t("how_goal")), h("p", {}, t("how_tie"))),
    part(
      "cards",
      h("ul", { class: "howto-cards" }, CARDS.map(([kind, code, drawing]) =>
        h("li", {}, icon(drawing), h("span", {}, h("strong", {}, kind === "room" ? t("how_rooms") : kind === "moose" ? t("how_moose") : cardName(code)), " ", t(`how_card_${kind}`))))),
    ),
    part("turn", h("p", {}, t("how_turn")), list("how_turn_play", "how_turn_discard"), h("p", {}, t("how_turn_must"))),
    part("trap", h("p", {}, t("how_trap")), list("how_trap_yes", "how_trap_no"), h("p", {}, t("how_trap_after"))),
    part("end", h("p", {}, t("how_end_phase")), h("p", {}, t("how_end")), h("p", {}, t("how_score"))),
    h("p", { class: "actions" }, h("button", { class: "primary", testid: "rules-back", onclick: ctx.back }, ctx.game ? t("back_game") : t("back"))),
  );
}
