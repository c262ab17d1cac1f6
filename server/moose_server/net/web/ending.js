// @ts-check
// The end of a game in words: how a tie for the fewest moose was broken (RULES.md:
// the most doors in the house win it; if those tie too, the tied seats win together).

import { count, t } from "./i18n.js";

/**
 * @typedef {{ cover?: string | null }} Room
 * @typedef {{ over?: boolean, abandoned?: boolean, forfeit?: number[], scores?: number[], winners?: number[],
 *   houses: { rooms: Room[] }[] }} EndView
 * @typedef {{ tied: number[], doors: number[], moose: number, winners: number[] }} Tie
 */

/**
 * The seats tied for the fewest moose with their doors, or null when nobody tied.
 * @param {EndView | null} view
 * @returns {Tie | null}
 */
export function tieBreak(view) {
  if (!view || !view.over || view.abandoned || view.forfeit || !view.scores) return null;
  const scores = view.scores;
  const moose = Math.min(...scores);
  const tied = scores.map((_, seat) => seat).filter((seat) => scores[seat] === moose);
  if (tied.length < 2) return null;
  const doors = tied.map((seat) => view.houses[seat].rooms.filter((room) => room.cover === "door").length);
  return { tied, doors, moose, winners: view.winners || [] };
}

/**
 * The tie-break said to this game's player, or null when there was none.
 * @param {{ view: EndView | null, seat: number | null, name(seat: number): string }} game
 * @returns {string | null}
 */
export function tieBreakText(game) {
  const tie = tieBreak(game.view);
  if (!tie) return null;
  const names = (/** @type {number[]} */ seats) => seats.map((seat) => game.name(seat)).join(", ");
  const moose = count("moose_n", tie.moose);
  const doors = tie.tied.map((seat, i) => `${game.name(seat)}: ${count("door_n", tie.doors[i])}`).join(", ");
  if (tie.winners.length === tie.tied.length) {
    return t("tie_shared", { names: names(tie.tied), moose, doors: count("door_n", tie.doors[0]) });
  }
  const mine = game.seat !== null && tie.tied.includes(game.seat) && !tie.winners.includes(game.seat);
  if (mine) return t("tie_you_lost", { winners: names(tie.winners), moose, doors });
  return t("tie_doors", { names: names(tie.tied), moose, winners: names(tie.winners), doors });
}
