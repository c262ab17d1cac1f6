// The page's reconnect delays: full jitter, within their window, the window doubling up to its cap.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BACKOFF_BASE, BACKOFF_CAP, RESTART, backoff } from "../../server/moose_server/net/web/net.js";

test("each delay is drawn from the whole window, which doubles up to the cap", () => {
  for (let attempt = 0; attempt < 10; attempt++) {
    const window = Math.min(BACKOFF_CAP, BACKOFF_BASE * 2 ** attempt);
    assert.equal(backoff(attempt, BACKOFF_CAP, () => 0), 0);
    assert.equal(backoff(attempt, BACKOFF_CAP, () => 0.5), window / 2);
    const draws = Array.from({ length: 2000 }, () => backoff(attempt));
    assert.ok(draws.every((d) => d >= 0 && d < window));
    assert.ok(Math.min(...draws) < 0.02 * window && Math.max(...draws) > 0.98 * window);
  }
  assert.equal(BACKOFF_BASE, 100);
  assert.equal(BACKOFF_CAP, 5000);
});

test("while the service restarts the window stops at RESTART", () => {
  assert.ok(Array.from({ length: 500 }, () => backoff(9, RESTART)).every((d) => d < RESTART));
  assert.ok(backoff(50, BACKOFF_CAP, () => 0.999) < BACKOFF_CAP);
});
