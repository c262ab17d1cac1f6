"""Arena points: what each seat of a finished arena game earns.

A seat earns, over its opponents, 2 for each it beat and 1 for each it tied
with, divided by the number of opponents and rounded half up: 0 to 2 points
whatever the table's size. Two players: a win 2, a tie 1, a loss 0. Four:
first 2, second 1, third 1, last 0; three tied first then one last: 1 each and
0. Places are those ratings use (fewer points, then more doors; equal results
share a place). No streak bonus: a seat's points depend on its game alone, so
the standings can be recomputed from the games' records.

A seat away at the game's end (its player timed out and the server's bot
played it on) forfeits: it earns 0 and counts as beaten by every seat that was
there, whatever the bot made of its cards, so walking away neither earns
points nor costs the opponents theirs.
"""

from __future__ import annotations

import json
from typing import Protocol

from moose import rules
from moose_server.accounts import ratings
from moose_server.arenas.calls import ArenaScoreCall

__all__ = ["ArenaScorer", "Scores", "forfeit_places", "points", "seat_points"]


def points(places: list[int]) -> list[int]:
    """Each seat's arena points, from its place (1 = first; ties share a place)."""
    n = len(places)
    if n < 2:
        return [0] * n
    out = []
    for k, mine in enumerate(places):
        beaten = sum(1 for j, p in enumerate(places) if j != k and p > mine)
        tied = sum(1 for j, p in enumerate(places) if j != k and p == mine)
        # round((2 * beaten + tied) / (n - 1)), halves up, in integers
        out.append((2 * (2 * beaten + tied) + (n - 1)) // (2 * (n - 1)))
    return out


def forfeit_places(places: list[int], away: list[bool]) -> list[int]:
    """The places with every away seat behind every seat that was there (tied last)."""
    if not any(away) or all(away):
        return list(places)
    last = max(p for p, gone in zip(places, away, strict=True) if not gone) + 1
    return [last if gone else p for p, gone in zip(places, away, strict=True)]


def seat_points(places: list[int], away: list[bool]) -> list[int]:
    """Each seat's arena points: `points` of the forfeit places, 0 for an away seat."""
    earned = points(forfeit_places(places, away))
    return [0 if gone else got for got, gone in zip(earned, away, strict=True)]


class Scores(Protocol):
    """Where the points go (storage.arenas.ArenaStore)."""

    async def score(self, call: ArenaScoreCall) -> bool:
        """Apply a game's points once; False when applied before."""


class ArenaScorer:
    """Applies a finished arena game's points (results.Results calls it, once or more)."""

    def __init__(self, scores: Scores, rest_ms: int = 0) -> None:
        self.scores = scores
        self.rest_ms = rest_ms  # a person's pause after a game before the next pairing

    async def apply(
        self,
        arena: str,
        game: str,
        players: list[str | None],
        state: rules.State,
        away: list[bool],
    ) -> bool:
        """Apply the points of a finished game of `arena`; False when done before."""
        places = ratings.places(state)
        result = {
            "players": players,
            "places": places,
            "points": seat_points(places, away),
            "away": away,
            "rest": self.rest_ms,
        }
        return await self.scores.score(ArenaScoreCall(arena, game, json.dumps(result)))
