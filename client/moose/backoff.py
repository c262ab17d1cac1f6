"""Reconnect delays: exponential backoff with full jitter, and the order to try instances in.

When an instance dies, every player it held loses its socket at the same moment.
Were each to wait the same delay (plain exponential backoff), they would all
come back in the same instant, again and again: a thundering herd on the
instances left. With *full jitter* (the AWS Architecture Blog's name) attempt
``n`` (from 0) sleeps a time drawn evenly from ``[0, min(cap, base * 2**n))``,
so the players of the dead instance spread over the whole window and the load
on the others stays flat. With several instances to choose from, each client
tries the others in an order of its own (`reconnect_order`), so that they share
the dead instance's players between them.

Any client, in any language, should do the same (PROTOCOL.md, "Reconnecting"):

    delay(n) = uniform(0, min(5 s, 0.1 s * 2**n))
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

__all__ = ["BASE", "CAP", "delay", "reconnect_order"]

BASE = 0.1  # seconds: the window of the first attempt
CAP = 5.0  # seconds: the widest window, however many attempts failed

T = TypeVar("T")


def delay(
    attempt: int, base: float = BASE, cap: float = CAP, rng: random.Random | None = None
) -> float:
    """Seconds to sleep before reconnect attempt `attempt` (0 for the first): full jitter,
    uniform in [0, min(cap, base * 2**attempt))."""
    if attempt < 0:
        raise ValueError("attempt counts from 0")
    # 2**attempt overflows a float past ~1023: the window is the cap long before that.
    window = cap if attempt >= 64 else min(cap, base * 2.0**attempt)
    return (rng or random).uniform(0.0, window)


def reconnect_order(urls: Sequence[T], current: T, rng: random.Random | None = None) -> list[T]:
    """The instances to try after losing `current`: the others in a random order of this
    client's, then `current` (it may be back by then, as after a restart)."""
    others = [u for u in urls if u != current]
    (rng or random).shuffle(others)
    return [*others, current] if current in urls else others
