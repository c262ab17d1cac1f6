// @ts-check
// Knowing it is your move: a short sound (synthesised with Web Audio, no audio file),
// a desktop notification while the tab is hidden, the title and a badge on the icon.
// The sound can be muted (remembered); notifications are asked for only after a click.

const MUTED = "moose.muted";

/** @type {Record<string, [number, number][]>} notes as [frequency Hz, start s] */
export const TUNES = {
  turn: [[660, 0], [880, 0.12]],
  trap: [[440, 0], [440, 0.16], [330, 0.32]],
  low: [[988, 0], [988, 0.2]],
};

/** @type {AudioContext | null} */
let audio = null;
let asked = false; // notifications asked for once a page, not at every click

export function muted() {
  return localStorage.getItem(MUTED) === "1";
}

/** @param {boolean} value */
export function setMuted(value) {
  localStorage.setItem(MUTED, value ? "1" : "0");
}

/**
 * Play a cue's tune, unless muted. The audio context starts on the first click (the
 * browser allows sound only after one), so a cue before any click stays silent.
 * @param {keyof typeof TUNES} name
 */
export function sound(name) {
  if (muted() || !audio) return;
  const start = audio.currentTime + 0.02;
  for (const [freq, at] of TUNES[name]) {
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.type = name === "trap" ? "square" : "triangle";
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, start + at);
    gain.gain.exponentialRampToValueAtTime(0.18, start + at + 0.01);
    gain.gain.exponentialRampToValueAtTime(0.0001, start + at + 0.14);
    osc.connect(gain).connect(audio.destination);
    osc.start(start + at);
    osc.stop(start + at + 0.16);
  }
}

/**
 * On a click: the audio may start, and notifications may be asked for (never on load).
 */
export function armed() {
  const Ctx = window.AudioContext || /** @type {any} */ (window).webkitAudioContext;
  if (!audio && Ctx) audio = new Ctx();
  if (audio && audio.state === "suspended") audio.resume().catch(() => {});
  if (!asked && "Notification" in window && Notification.permission === "default") {
    asked = true;
    Notification.requestPermission().catch(() => {});
  }
}

/**
 * A desktop notification, only while the tab is hidden and it is allowed.
 * @param {string} title
 * @param {string} body
 */
export function notify(title, body) {
  if (!document.hidden || !("Notification" in window) || Notification.permission !== "granted") return;
  try {
    const note = new Notification(title, { body, tag: "moose-turn", icon: iconHref(false) });
    note.onclick = () => {
      window.focus();
      note.close();
    };
  } catch {
    // Some browsers allow notifications only from a service worker: the title still says it.
  }
}

/** @param {boolean} badge */
function iconHref(badge) {
  const link = /** @type {HTMLLinkElement | null} */ (document.querySelector('link[rel="icon"]'));
  const base = link ? link.href.replace(/icon(-turn)?\.svg$/, "") : "/";
  return `${base}${badge ? "icon-turn.svg" : "icon.svg"}`;
}

/**
 * The title and the icon say whether it is your move (a badge: a red dot on the icon,
 * a file of its own since the page's policy allows no data: images).
 * @param {boolean} yours
 * @param {string} title the page's name
 * @param {string} move "Your move" in the page's language
 */
export function mark(yours, title, move) {
  const want = yours ? `● ${move} — ${title}` : title;
  if (document.title !== want) document.title = want;
  const link = /** @type {HTMLLinkElement | null} */ (document.querySelector('link[rel="icon"]'));
  if (!link) return;
  const href = iconHref(yours);
  if (link.href !== href) link.href = href;
  link.dataset.badge = yours ? "turn" : "";
}
