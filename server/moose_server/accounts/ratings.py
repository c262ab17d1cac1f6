"""Ratings: openskill's Plackett-Luce model, one rating per player and pool over every table size.

Pure (no I/O): `update` turns the seats' standings at the start of a game and
its result into each seat's new standing. A standing keeps openskill's whole
state (mu, sigma) and the games played; people see one number, `rating`: the
conservative estimate mu - 3 sigma on an Elo-like scale, where an established
average player (mu 25, sigma 5/3) is 1,500 and a newcomer (mu 25, sigma 25/3)
starts at 540 and climbs as games make the server sure of them. One mu point
is 48 rating points, since openskill's beta (25/6 mu) is about the 200 Elo
points by which one player beats another three times in four.

One rating over every table size rather than one per size: the skill of the
game carries from 2 to 6 seats, Plackett-Luce rates any number of seats with
ties, and one rating per size would split a player's games five ways, leaving
each provisional for longer and each leaderboard thin.

Two pools, though: a correspondence game (days a move, play/correspondence.py)
rates its players' correspondence rating and a real-time game their real-time
one, never the other. Thinking a day over a move is another game than a
20-second turn, and one bad habit should not cost the other rating. A profile
keeps both (the correspondence one in fields prefixed `c`: cmu, csigma, cgames,
crating), each pool has its own leaderboards.
"""

from __future__ import annotations

from dataclasses import dataclass

from openskill.models import PlackettLuce

from moose import rules

__all__ = ["MODEL", "POOLS", "Standing", "display", "field", "places", "pool_of", "skill", "update"]

MODEL = PlackettLuce()
MU, SIGMA = MODEL.mu, MODEL.sigma  # a newcomer's: 25 and 25/3
SCALE = 48.0  # rating points per mu point
BASE = 1500.0  # an established average player...
BASE_ORDINAL = 20.0  # ...whose mu - 3 sigma is 25 - 3 * 5/3
SPREAD = 3.0  # sigmas taken off mu: the conservative estimate


POOLS = ("realtime", "correspondence")
_PREFIX = {"realtime": "", "correspondence": "c"}


def pool_of(days: int | None) -> str:
    """The rating pool of a game of `days` a move (None: real time)."""
    return "realtime" if days is None else "correspondence"


def field(pool: str, name: str) -> str:
    """The profile field of a pool's `name` (mu, sigma, games, rating): `cmu`, ..."""
    return _PREFIX[pool] + name


def display(mu: float, sigma: float) -> int:
    """The rating a person sees: mu - 3 sigma on the Elo-like scale."""
    return round(BASE + SCALE * (mu - SPREAD * sigma - BASE_ORDINAL))


def skill(mu: float) -> int:
    """The best guess of a player's strength on the same scale (matchmaking compares it)."""
    return round(BASE + SCALE * (mu - MU))


@dataclass(frozen=True)
class Standing:
    """A player's rating state: openskill's mu and sigma, and the rated games played."""

    mu: float = MU
    sigma: float = SIGMA
    games: int = 0

    @property
    def rating(self) -> int:
        """The number shown (see `display`)."""
        return display(self.mu, self.sigma)

    def provisional(self, after: int) -> bool:
        """Whether fewer than `after` rated games are behind this rating."""
        return self.games < after


def places(state: rules.State) -> list[int]:
    """Each seat's place in a finished game (1 = won; equal results share a place).

    Lower score is better, then more doors, as `rules.winners` decides.
    """
    scores, doors = rules.scores(state), rules.doors(state)
    keys = [(s, -d) for s, d in zip(scores, doors, strict=True)]
    return [1 + sum(other < mine for other in keys) for mine in keys]


def update(standings: list[Standing | None], ranks: list[int]) -> list[Standing | None]:
    """The new standing of each rated seat (None: a seat that is not rated).

    Fewer than two rated seats: nothing to learn, every standing is returned as is.
    """
    rated = [k for k, s in enumerate(standings) if s is not None]
    if len(rated) < 2:
        return list(standings)
    teams = []
    for k in rated:
        s = standings[k]
        assert s is not None
        teams.append([MODEL.rating(mu=s.mu, sigma=s.sigma)])
    new = MODEL.rate(teams, ranks=[float(ranks[k]) for k in rated])
    out = list(standings)
    for k, team in zip(rated, new, strict=True):
        old = standings[k]
        assert old is not None
        out[k] = Standing(team[0].mu, team[0].sigma, old.games + 1)
    return out
