// @ts-check
// A question asked in the page (a modal <dialog>, not window.confirm): the browser keeps
// the focus in it, Escape answers no, and it lives outside the redrawn #app, so the
// page's redraws (a game's events keep coming) leave it alone.

import { h } from "./dom.js";

/**
 * Ask; resolves true when the player chooses `yes`.
 * @param {{ title: string, text: string, yes: string, no: string }} words
 * @returns {Promise<boolean>}
 */
export function confirmInPage(words) {
  return new Promise((resolve) => {
    /** @type {HTMLDialogElement} */
    const dialog = /** @type {any} */ (h(
      "dialog",
      { class: "panel confirm", testid: "confirm-dialog", "aria-labelledby": "confirm-title", "aria-describedby": "confirm-text" },
      h("h2", { id: "confirm-title" }, words.title),
      h("p", { id: "confirm-text" }, words.text),
      h(
        "p",
        { class: "actions" },
        h("button", { class: "primary", testid: "confirm-yes", onclick: () => dialog.close("yes") }, words.yes),
        h("button", { testid: "confirm-no", autofocus: true, onclick: () => dialog.close("no") }, words.no),
      ),
    ));
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue === "yes");
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
