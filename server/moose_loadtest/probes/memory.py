"""Redis memory per game: every key of a sample of games, measured by a `RedisProbe`."""

from __future__ import annotations

from typing import Any

from moose_loadtest import deployment
from moose_loadtest.probes.window import RedisProbe

__all__ = ["game_memory"]


async def game_memory(
    probe: RedisProbe, games: list[str], sample: int = 20
) -> dict[str, Any] | None:
    """Redis memory of a sample of games (every key of each): mean and largest, in bytes."""
    import random

    buckets = deployment.buckets()
    picked = random.sample(games, min(sample, len(games)))
    measured = [await probe.memory(deployment.game_keys(g, buckets)) for g in picked]
    sizes = [alive for alive, _ in measured if alive > 0]
    if not sizes:
        return None
    stale = [expired for _, expired in measured if expired > 0]
    expired = {"games": len(stale), "mean_bytes": round(sum(stale) / max(1, len(stale)))}
    return {
        "games": len(sizes),
        "mean_bytes": round(sum(sizes) / len(sizes)),
        "max_bytes": max(sizes),
        "expired_not_reclaimed": expired,
    }
