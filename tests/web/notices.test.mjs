// Unit tests of the notices panel's pure part: the VAPID key as the browser takes it
// (node --test tests/web/; tests/test_web_modules.py runs them).

import assert from "node:assert/strict";
import { test } from "node:test";

globalThis.localStorage = { getItem: () => null, setItem: () => {} };
globalThis.navigator = { languages: ["en"] };
globalThis.document = { documentElement: {} };

const web = new URL("../../server/moose_server/net/web/", import.meta.url);
const { keyBytes, KINDS, pushSupported } = await import(new URL("notices.js", web));

test("a base64url key without padding becomes its bytes", () => {
  const bytes = Uint8Array.from({ length: 65 }, (_, i) => (i * 37 + 4) & 255);
  const key = Buffer.from(bytes).toString("base64url");
  assert.ok(!key.includes("=") && (key.includes("-") || key.includes("_")));
  assert.deepEqual(keyBytes(key), bytes);
});

test("the kinds are the server's, in its order", () => {
  assert.deepEqual(KINDS, ["your_move", "time_running_out", "game_over", "challenge_received"]);
});

test("a place without service workers has no push", () => {
  assert.equal(pushSupported(), false);
});
