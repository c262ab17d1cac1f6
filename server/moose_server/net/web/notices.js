// @ts-check
// Notices away from the page (PROTOCOL.md "Notices away from the page"): the account
// page's panel that turns Web Push on in this browser (the service worker at /sw.js,
// subscribed with the server's VAPID key from /notify/key), picks the kinds told, and
// sets the address mails go to (an account's; confirmed by a link first).

import { h } from "./dom.js";
import { t } from "./i18n.js";

export const KINDS = ["your_move", "time_running_out", "game_over", "challenge_received"];
// The kinds the page offers: every one (`challenge_received`: a correspondence
// challenge sent while we were away).
export const OFFERED = KINDS;

// The server's settings as last answered (`notify_settings`), and this browser's state.
const state = { of: null, settings: null, here: false, busy: false };

// A base64url key (no padding) as the bytes `applicationServerKey` takes.
export function keyBytes(key) {
  const b64 = key.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (key.length % 4)) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

export function pushSupported() {
  return typeof navigator !== "undefined" && "serviceWorker" in navigator && typeof PushManager !== "undefined" && typeof Notification !== "undefined";
}

async function subscription() {
  if (!pushSupported()) return null;
  const reg = await navigator.serviceWorker.getRegistration("/");
  return reg ? reg.pushManager.getSubscription() : null;
}

async function load(app) {
  const player = (app.net.welcome || {}).player;
  if (!player || state.of === player) return;
  state.of = player;
  try {
    state.settings = await app.net.request("notify_settings");
    state.here = (await subscription()) !== null;
  } catch {
    state.of = null; // asked again next time
    return;
  }
  app.render();
}

async function work(app, job) {
  state.busy = true;
  app.render();
  try {
    await job();
  } catch (err) {
    app.notice(err instanceof Error && !("code" in err) ? err.message : app.errorText(err));
  } finally {
    state.busy = false;
    app.render();
  }
}

// Ask for permission, register the service worker, subscribe, and tell the server.
export async function turnOn(net) {
  if ((await Notification.requestPermission()) !== "granted") throw new Error(t("notices_denied"));
  const reg = await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  await navigator.serviceWorker.ready;
  const { key } = await (await fetch("/notify/key")).json();
  const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) });
  await net.request("push_subscribe", { subscription: sub.toJSON() });
}

export async function turnOff(net) {
  const sub = await subscription();
  if (!sub) return;
  await net.request("push_unsubscribe", { endpoint: sub.endpoint });
  await sub.unsubscribe();
}

function pushRow(app) {
  if (!pushSupported()) return h("p", { class: "hint" }, t("notices_unsupported"));
  const toggle = state.here
    ? () => work(app, async () => { await turnOff(app.net); state.here = false; app.notice(t("notices_off")); })
    : () => work(app, async () => { await turnOn(app.net); state.here = true; app.notice(t("notices_on")); });
  return h(
    "p",
    { class: "row" },
    h("button", { testid: "push-toggle", disabled: state.busy, onclick: toggle }, t(state.here ? "notices_turn_off" : "notices_turn_on")),
  );
}

function kindsRow(app) {
  const s = state.settings;
  return h(
    "fieldset",
    { class: "row" },
    h("legend", {}, t("notices_kinds")),
    OFFERED.map((kind) =>
      h(
        "label",
        {},
        h("input", {
          type: "checkbox",
          testid: `notice-${kind}`,
          checked: s[kind],
          disabled: state.busy,
          onchange: (e) => {
            const on = e.target.checked; // read now: the box shows the settings until they are answered
            work(app, async () => { state.settings = await app.net.request("notify_settings", { [kind]: on }); });
          },
        }),
        " ",
        t(`notices_${kind}`),
      ),
    ),
  );
}

function mailForm(app) {
  const s = state.settings;
  const status = s.email ? t(s.email_confirmed ? "notices_mail_confirmed" : "notices_mail_waiting", { email: s.email }) : t("notices_mail_none");
  const save = (e) => {
    e.preventDefault();
    const email = e.target.email.value.trim();
    work(app, async () => { state.settings = await app.net.request("notify_settings", { email }); });
  };
  return h(
    "form",
    { onsubmit: save },
    h("p", { role: "status", testid: "mail-status" }, status),
    h("p", { class: "row" }, h("label", { for: "notice-email" }, t("notices_mail")), h("input", { id: "notice-email", name: "email", type: "email", maxlength: 254, autocomplete: "email", value: s.email || "" })),
    h("button", { type: "submit", disabled: state.busy }, t("notices_mail_save")),
  );
}

export function noticesPanel(app) {
  load(app);
  return h(
    "div",
    { class: "panel notices", testid: "notices-panel" },
    h("h3", {}, t("notices_title")),
    h("p", {}, t("notices_text")),
    pushRow(app),
    state.settings ? kindsRow(app) : null,
    state.settings && (app.net.welcome || {}).account ? mailForm(app) : null,
  );
}
