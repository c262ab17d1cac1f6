"""moose.backoff: full-jitter delays within their bounds, and the order of instances to try."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from moose import backoff


def test_each_delay_is_within_its_window_and_the_window_doubles_up_to_the_cap() -> None:
    rng = random.Random(1)
    for attempt in range(12):
        window = min(backoff.CAP, backoff.BASE * 2**attempt)
        draws = [backoff.delay(attempt, rng=rng) for _ in range(2000)]
        assert all(0.0 <= d <= window for d in draws)
        # Full jitter: the draws cover the whole window, not its top end only.
        assert min(draws) < 0.02 * window and max(draws) > 0.98 * window
        assert 0.45 * window < sum(draws) / len(draws) < 0.55 * window
    assert backoff.BASE == 0.1 and backoff.CAP == 5.0


def test_the_window_stops_at_the_cap_however_many_attempts_failed() -> None:
    rng = random.Random(2)
    assert all(backoff.delay(n, rng=rng) <= backoff.CAP for n in (6, 7, 100, 5000))
    assert backoff.delay(3, base=1.0, cap=2.0, rng=rng) <= 2.0


def test_a_negative_attempt_is_refused() -> None:
    with pytest.raises(ValueError, match="attempt"):
        backoff.delay(-1)


def test_the_others_come_first_in_a_random_order_and_the_lost_one_last() -> None:
    urls = ["a", "b", "c", "d"]
    rng = random.Random(3)
    firsts: Counter[str] = Counter()
    for _ in range(3000):
        order = backoff.reconnect_order(urls, "b", rng=rng)
        assert sorted(order) == sorted(urls) and order[-1] == "b"
        firsts[order[0]] += 1
    # The players of a dead instance spread evenly over the others.
    assert set(firsts) == {"a", "c", "d"}
    assert all(800 < n < 1200 for n in firsts.values())
    assert urls == ["a", "b", "c", "d"]  # the caller's list is left as it was


def test_one_url_is_tried_again_and_an_unknown_current_is_not_added() -> None:
    assert backoff.reconnect_order(["a"], "a") == ["a"]
    assert sorted(backoff.reconnect_order(["a", "b"], "z")) == ["a", "b"]
