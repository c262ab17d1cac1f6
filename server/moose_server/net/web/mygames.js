// @ts-check
// The lobby's "Your move in N games": counted from `my_games` (PROTOCOL.md), the player's
// unfinished games, asked again as the lobby shows and now and then while it does.

import { h } from "./dom.js";
import { count } from "./i18n.js";

/**
 * @param {{request: (type: string, fields?: object) => Promise<any>, render: () => void}} deps
 */
export function createMyGames({ request, render }) {
  let waiting = 0; // games where it is our move, at the last answer

  async function refresh() {
    let answer;
    try {
      answer = await request("my_games", {});
    } catch {
      return; // not connected, or refused: the last count stays until the next ask
    }
    const n = answer.games.filter((/** @type {{your_move: boolean}} */ g) => g.your_move).length;
    if (n !== waiting) {
      waiting = n;
      render();
    }
  }

  // The line itself: nothing while no game waits for us.
  function line() {
    if (!waiting) return null;
    return h("p", { class: "your-move", testid: "your-move", role: "status" }, count("your_move_n", waiting));
  }

  return { refresh, line };
}
