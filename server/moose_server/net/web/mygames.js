// @ts-check
// The lobby's "Your move in N games" and the list of the player's unfinished games, from
// `my_games` (PROTOCOL.md), asked again as the lobby shows and now and then while it does.

import { h } from "./dom.js";
import { count, t } from "./i18n.js";

/**
 * @param {{request: (type: string, fields?: object) => Promise<any>, render: () => void}} deps
 */
export function createMyGames({ request, render }) {
  let waiting = 0; // games where it is our move, at the last answer
  /** @type {any[]} */
  let games = []; // the last answer's games, in its order (our move first)

  async function refresh() {
    let answer;
    try {
      answer = await request("my_games", {});
    } catch {
      return; // not connected, or refused: the last count stays until the next ask
    }
    const n = answer.games.filter((/** @type {{your_move: boolean}} */ g) => g.your_move).length;
    const changed = n !== waiting || JSON.stringify(answer.games) !== JSON.stringify(games);
    waiting = n;
    games = answer.games;
    if (changed) render();
  }

  // The line itself: nothing while no game waits for us.
  function line() {
    if (!waiting) return null;
    return h("p", { class: "your-move", testid: "your-move", role: "status" }, count("your_move_n", waiting));
  }

  // Every unfinished game: against whom, whose move, its days a move; each opens.
  /** @param {(id: string) => void} open */
  function panel(open) {
    if (!games.length) return null;
    return h(
      "section",
      { class: "panel my-games", testid: "my-games", "aria-labelledby": "my-games-title" },
      h("h2", { id: "my-games-title" }, t("my_games_title")),
      h("ul", {}, games.map((g) => h(
        "li",
        { testid: "my-game", "data-game": g.game },
        h("span", {}, t(g.your_move ? "my_game_yours" : "my_game_theirs", { names: g.opponents.join(", ") })),
        g.days ? h("span", { class: "days" }, " · ", count("days_move_n", g.days)) : null,
        " ",
        h("button", { testid: "my-game-open", onclick: () => open(g.game) }, t("my_game_open")),
      ))),
    );
  }

  return { refresh, line, panel };
}
