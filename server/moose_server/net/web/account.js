// @ts-check
// Accounts in the page (PROTOCOL.md "Accounts"): register the guest's name (the same
// player: rating and history stay), log in, log out here or everywhere, change the
// password. A name an account holds, typed in the lobby, opens the login form at once.
//
// Logging in and out is a new session on a fresh socket (`Net.switchTo`): the one in
// use stays until the new hello is welcomed, so a refused password changes nothing.

import { loadBlocks, renderBlocked, unblock } from "./chat.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { noticesPanel } from "./notices.js";
import { navLink, profilePath } from "./pages.js";

const MIN_PASSWORD = 10;

// The open form: null, "register" or "login"; `then` runs after a login.
export const auth = { mode: null, name: "", error: "", busy: false, then: null };
// What is typed in the forms: the page is redrawn whenever a message comes, and the
// fields must keep it (kept in memory only, and forgotten when the form closes).
const typed = {};

function field(id, attrs) {
  return h("input", { id, ...attrs, value: typed[id] ?? attrs.value ?? "", oninput: (e) => { typed[id] = e.target.value; } });
}

function forget() {
  for (const key of Object.keys(typed)) delete typed[key];
}
let app = null; // {net, render, session(welcome), prepare(), notice(text), errorText(err)}

export function initAccount(hooks) {
  app = hooks;
}

function me() {
  return app.net.welcome || {};
}

function open(mode, name = "", error = "", then = null) {
  forget();
  Object.assign(auth, { mode, name, error, then, busy: false });
  app.render();
  document.getElementById(mode === "login" && !name ? "login-name" : "password")?.focus();
}

function closeForm() {
  forget();
  Object.assign(auth, { mode: null, error: "", then: null, busy: false });
  app.render();
}

// The lobby's name is an account's: log in with its password, then do `then`.
export function offerLogin(name, then = null) {
  open("login", name, t("acct_taken", { name }), then);
}

async function busy(work) {
  auth.busy = true;
  auth.error = "";
  app.render();
  try {
    await work();
  } catch (err) {
    auth.error = app.errorText(err);
  } finally {
    auth.busy = false;
    app.render();
    if (auth.error) document.getElementById("password")?.focus();
  }
}

function tooShort(password) {
  if (password.length >= MIN_PASSWORD) return false;
  auth.error = t("acct_short", { n: MIN_PASSWORD });
  app.render();
  document.getElementById("password")?.focus();
  return true;
}

// A guest still under a placeholder name ("guest") takes the name typed in the lobby
// first; any other guest registers the name they play as (its rating and games).
async function startRegister() {
  if (!placeholder(me().name) || (await app.prepare())) open("register", me().name);
}

export function placeholder(name) {
  return /^guest(-[0-9a-f]+)?$/.test(name);
}

async function register(password) {
  if (tooShort(password)) return;
  await busy(async () => {
    const ans = await app.net.request("register", { password });
    app.net.keep(ans.token, { account: true, name: ans.name });
    closeForm();
    app.notice(t("acct_registered", { name: ans.name }));
  });
}

async function login(name, password) {
  const then = auth.then;
  await busy(async () => {
    const welcome = await app.net.switchTo({ name: name.trim(), password });
    closeForm();
    await app.session(welcome);
    app.notice(t("acct_logged_in", { name: welcome.name }));
    if (then) await then();
  });
}

export async function logout() {
  const welcome = await app.net.newGuest("guest");
  await app.session(welcome, { loggedOut: true });
  app.notice(t("acct_logged_out"));
}

async function logoutAll() {
  await busy(async () => {
    const ans = await app.net.request("logout_all");
    app.net.keep(ans.token);
    app.notice(t("acct_logged_out_all"));
  });
}

async function changePassword(old, fresh) {
  if (tooShort(fresh)) return;
  await busy(async () => {
    const ans = await app.net.request("change_password", { password: old, new_password: fresh });
    app.net.keep(ans.token);
    forget();
    app.notice(t("acct_password_changed"));
    auth.error = "";
  });
}

function passwordInput(label, attrs = {}) {
  return [
    h("label", { for: attrs.id || "password" }, label),
    field("password", { type: "password", testid: "password-input", required: true, maxlength: 128, ...attrs }),
  ];
}

// The header's part: who you are, and the way in or out.
export function accountBar() {
  const w = me();
  if (!w.player) return null;
  if (w.account) {
    return h(
      "div",
      { class: "account-bar" },
      navLink("/account", { testid: "account-name", title: t("acct_settings") }, w.name),
      h("button", { testid: "logout-button", onclick: () => logout().catch((err) => app.notice(app.errorText(err))) }, t("acct_logout")),
    );
  }
  return h(
    "div",
    { class: "account-bar" },
    h("span", { class: "guest", testid: "guest-as" }, placeholder(w.name) ? t("acct_guest_unnamed") : t("acct_guest_as", { name: w.name })),
    auth.mode ? null : h("button", { testid: "login-button", onclick: () => open("login") }, t("acct_login")),
    auth.mode ? null : h("button", { testid: "register-button", onclick: startRegister }, t("acct_register")),
  );
}

// The open form, under the header, on any screen.
export function accountPanel() {
  if (!auth.mode) return null;
  const error = auth.error ? h("p", { class: "banner error", role: "alert", testid: "account-error" }, auth.error) : null;
  const cancel = h("button", { type: "button", onclick: closeForm, disabled: auth.busy }, t("cancel"));
  if (auth.mode === "register") {
    return h(
      "form",
      { class: "panel account", "aria-label": t("acct_register_title", { name: me().name }), onsubmit: (e) => { e.preventDefault(); register(e.target.password.value); } },
      h("h2", {}, t("acct_register_title", { name: me().name })),
      h("p", {}, t("acct_register_text")),
      error,
      h("p", { class: "row" }, passwordInput(t("acct_new_password"), { autocomplete: "new-password", "aria-describedby": "pw-rules" })),
      h("p", { class: "hint", id: "pw-rules" }, t("acct_rules", { n: MIN_PASSWORD })),
      h("p", { class: "row" }, h("button", { class: "primary", type: "submit", testid: "register-button", disabled: auth.busy }, t("acct_register")), cancel),
    );
  }
  return h(
    "form",
    { class: "panel account", "aria-label": t("acct_login_title"), onsubmit: (e) => { e.preventDefault(); login(e.target.login.value, e.target.password.value); } },
    h("h2", {}, t("acct_login_title")),
    error,
    h(
      "p",
      { class: "row" },
      h("label", { for: "login-name" }, t("acct_name")),
      field("login-name", { name: "login", autocomplete: "username", required: true, maxlength: 24, value: auth.name }),
    ),
    h("p", { class: "row" }, passwordInput(t("acct_password"), { autocomplete: "current-password" })),
    h("p", { class: "row" }, h("button", { class: "primary", type: "submit", testid: "login-button", disabled: auth.busy }, t("acct_login")), cancel),
  );
}

// The players this player blocks, each with its way back (a guest may block too).
function blockedPanel() {
  loadBlocks(app.net, app.render); // asked once a session
  return renderBlocked((p) => unblock(app.net, p, app.notice).catch((err) => app.notice(app.errorText(err))));
}

// Who may challenge this player (PROTOCOL.md `challenge_setting`), kept on the server
// with the player: read once a session, changed by the select at once.
const CONSENT = ["everyone", "registered", "following", "nobody"];
const consent = { of: null, value: null, busy: false };

async function loadConsent() {
  const player = me().player;
  if (!player || consent.of === player) return;
  consent.of = player;
  try {
    consent.value = (await app.net.request("challenge_setting")).challenges;
  } catch {
    consent.of = null; // asked again next time
    return;
  }
  app.render();
}

async function changeConsent(value) {
  consent.busy = true;
  app.render();
  try {
    consent.value = (await app.net.request("challenge_setting", { challenges: value })).challenges;
    app.notice(t("consent_saved", { who: t(`consent_${consent.value}`) }));
  } catch (err) {
    app.notice(app.errorText(err));
  } finally {
    consent.busy = false;
    app.render();
  }
}

function consentPanel() {
  loadConsent();
  return h(
    "div",
    { class: "panel consent" },
    h("h3", {}, t("consent_title")),
    h("p", {}, t("consent_text")),
    h(
      "p",
      { class: "row" },
      h("label", { for: "challenge-setting" }, t("consent_label")),
      h(
        "select",
        { id: "challenge-setting", testid: "challenge-setting", disabled: consent.value === null || consent.busy, onchange: (e) => changeConsent(e.target.value) },
        CONSENT.map((v) => h("option", { value: v, selected: v === consent.value }, t(`consent_${v}`))),
      ),
    ),
  );
}

// /account: your account's settings, or a guest's way to one.
export function accountPage() {
  const w = me();
  if (!w.account) {
    return h(
      "section",
      { class: "site account-page" },
      h("h2", {}, t("acct_settings")),
      h("p", {}, t("acct_guest_note")),
      // The guest's profile is found by their player id, known once the socket says hello.
      w.player
        ? h("p", {}, navLink(profilePath({ player: w.player, name: w.name }), { testid: "profile-link" }, t("acct_my_profile")))
        : h("p", { role: "status" }, t("status_connecting")),
      w.player ? consentPanel() : null,
      w.player ? noticesPanel(app) : null,
      blockedPanel(),
    );
  }
  return h(
    "section",
    { class: "site account-page" },
    h("h2", {}, t("acct_settings")),
    h("p", {}, t("acct_signed_in", { name: w.name }), " ", navLink(profilePath({ account: true, name: w.name }), { testid: "profile-link" }, t("acct_my_profile"))),
    auth.error && !auth.mode ? h("p", { class: "banner error", role: "alert", testid: "account-error" }, auth.error) : null,
    h(
      "form",
      { class: "panel", "aria-label": t("acct_change_title"), onsubmit: (e) => { e.preventDefault(); changePassword(e.target.password.value, e.target.fresh.value); } },
      h("h3", {}, t("acct_change_title")),
      h("p", { class: "row" }, passwordInput(t("acct_password"), { autocomplete: "current-password" })),
      h(
        "p",
        { class: "row" },
        h("label", { for: "fresh" }, t("acct_new_password")),
        field("fresh", { name: "fresh", type: "password", testid: "new-password-input", autocomplete: "new-password", required: true, maxlength: 128, "aria-describedby": "pw-rules" }),
      ),
      h("p", { class: "hint", id: "pw-rules" }, t("acct_rules", { n: MIN_PASSWORD }), " ", t("acct_change_text")),
      h("button", { type: "submit", testid: "change-password-button", disabled: auth.busy }, t("acct_change")),
    ),
    h(
      "div",
      { class: "panel" },
      h("h3", {}, t("acct_sessions")),
      h("p", {}, t("acct_logout_all_text")),
      h("p", { class: "row" },
        h("button", { testid: "logout-all-button", disabled: auth.busy, onclick: logoutAll }, t("acct_logout_all")),
      ),
    ),
    consentPanel(),
    noticesPanel(app),
    blockedPanel(),
  );
}

// The lobby's word to a guest: a rating is kept only for a registered name, and a new
// name is a new player.
export function guestNote(typed) {
  const w = me();
  if (!w.player || w.account) return null;
  const renaming = typed.trim() && typed.trim() !== w.name && !placeholder(w.name);
  return h(
    "p",
    { class: renaming ? "hint warn" : "hint", testid: "guest-note", role: "status" },
    renaming ? t("acct_rename_warning", { old: w.name, name: typed.trim() }) : t("acct_guest_note"),
  );
}
