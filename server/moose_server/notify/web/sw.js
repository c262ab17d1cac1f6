// @ts-check
/// <reference lib="webworker" />
// The page's service worker: shows a notice pushed while the page is not open,
// and opens (or focuses) the game when it is clicked. Served at /sw.js so that
// its scope is the whole site.

const sw = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));

sw.addEventListener("push", (event) => {
  /** @type {{kind?: string, game?: string, text?: string}} */
  let notice = {};
  try {
    notice = event.data ? event.data.json() : {};
  } catch {
    notice = { text: event.data ? event.data.text() : "" };
  }
  const title = notice.kind === "time_running_out" ? "Moose House: time is running out" : "Moose House";
  event.waitUntil(
    sw.registration.showNotification(title, {
      body: notice.text || "Something happened in your game.",
      tag: notice.game ? `moose-${notice.game}` : "moose",
      data: { game: notice.game || "" },
    }),
  );
});

sw.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const game = event.notification.data && event.notification.data.game;
  const url = game ? `/play/${encodeURIComponent(game)}` : "/";
  event.waitUntil(
    sw.clients.matchAll({ type: "window" }).then((windows) => {
      for (const client of windows) {
        if (new URL(client.url).pathname === url) return client.focus();
      }
      return sw.clients.openWindow(url);
    }),
  );
});
