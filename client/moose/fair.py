"""Provably fair deals (PROTOCOL.md, "Provably fair deals"): the scheme moose-deal-v1.

The server commits to a secret `server_seed` (SHA-256 of it, sent before the
deal); seats may add seeds of their own; the dealer and the deck follow from
HMAC-SHA256 keyed with the server seed over the seeds. Once the game is over the
server seed is published, and anyone can recompute the deal from the record:
`verify(record)` does, and so does `moose verify RECORD`.

Pure and deterministic like the rules: standard library only, no I/O, no clock.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from moose.rules import CARDS, MAX_PLAYERS, MIN_PLAYERS

__all__ = [
    "SCHEME",
    "Draws",
    "check_seed",
    "commitment",
    "deal",
    "material",
    "public",
    "verify",
]

SCHEME = "moose-deal-v1"
SEED_MAX = 64
_WORD = 2**32


def check_seed(seed: object) -> str:
    """`seed` if it is 1 to 64 printable ASCII characters (space to `~`), else ValueError."""
    if not isinstance(seed, str) or not 1 <= len(seed) <= SEED_MAX:
        raise ValueError(f"a seed is 1 to {SEED_MAX} printable ASCII characters")
    bad = next((c for c in seed if not " " <= c <= "~"), None)
    if bad is not None:
        raise ValueError(f"a seed holds printable ASCII only (space to ~), not {bad!r}")
    return seed


def commitment(server_seed: bytes) -> str:
    """The commitment sent before the deal: lowercase hex SHA-256 of the server seed."""
    return hashlib.sha256(server_seed).hexdigest()


def material(seeds: Sequence[str]) -> bytes:
    """What the HMAC stream is computed over: the scheme and the seeds in seat order."""
    return (SCHEME + "\n" + "\n".join(seeds)).encode()


class Draws:
    """The byte stream HMAC(server_seed, material + k) for k = 0, 1, ..., read as numbers."""

    def __init__(self, server_seed: bytes, seeds: Sequence[str]) -> None:
        self._words = self._stream(server_seed, material(seeds))

    @staticmethod
    def _stream(key: bytes, msg: bytes) -> Iterator[int]:
        k = 0
        while True:
            block = hmac.new(key, msg + k.to_bytes(4, "big"), hashlib.sha256).digest()
            for i in range(0, len(block), 4):
                yield int.from_bytes(block[i : i + 4], "big")
            k += 1

    def draw(self, n: int) -> int:
        """A number from 0 to n - 1, with no bias: words past the last whole n are skipped."""
        limit = _WORD - _WORD % n
        while True:
            u = next(self._words)
            if u < limit:
                return u % n


def deal(server_seed: bytes, seeds: Sequence[str], players: int) -> tuple[int, list[str]]:
    """The dealer and the deck (top first) of a game of `players` seats."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS or len(seeds) != players:
        raise ValueError(f"{players} players need {players} seeds, not {len(seeds)}")
    draws = Draws(server_seed, seeds)
    dealer = draws.draw(players)
    deck = list(CARDS)  # the canonical order of RULES.md section 1
    for i in range(len(deck) - 1, 0, -1):
        j = draws.draw(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return dealer, deck


def public(server_seed: bytes) -> dict[str, str]:
    """The `deal` sent before the deal: the scheme and the commitment only."""
    return {"scheme": SCHEME, "commitment": commitment(server_seed)}


def verify(record: Mapping[str, Any]) -> list[str]:
    """What in a record's deal does not follow from its seeds; [] for a fair deal.

    Raises ValueError when the record holds no usable `deal`.
    """
    players, d = record.get("players"), record.get("deal")
    if not isinstance(d, Mapping):
        raise ValueError("the record has no 'deal' (a game dealt with a fixed deck for tests?)")
    if d.get("scheme") != SCHEME:
        raise ValueError(f"unknown deal scheme {d.get('scheme')!r} (this checks {SCHEME})")
    seeds, hex_seed = d.get("seeds"), d.get("server_seed")
    if not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError("'players' must be 2 to 6")
    if not isinstance(seeds, list) or not all(isinstance(s, str) for s in seeds):
        raise ValueError("'deal.seeds' must be a list of strings")
    if len(seeds) != players:
        return [f"deal.seeds has {len(seeds)} seeds for {players} seats"]
    try:
        server_seed = bytes.fromhex(hex_seed) if isinstance(hex_seed, str) else None
    except ValueError:
        server_seed = None
    if server_seed is None:
        raise ValueError("'deal.server_seed' must be hex")
    return _differences(record, d, server_seed, seeds)


def _differences(
    record: Mapping[str, Any], d: Mapping[str, Any], server_seed: bytes, seeds: list[str]
) -> list[str]:
    """Each part of the record that differs from the deal recomputed, in words."""
    out = []
    if d.get("commitment") != commitment(server_seed):
        out.append(
            f"the commitment {d.get('commitment')!r} is not SHA-256 of the server seed"
            f" ({commitment(server_seed)})"
        )
    dealer, deck = deal(server_seed, seeds, len(seeds))
    if record.get("dealer") != dealer:
        out.append(f"the dealer is seat {record.get('dealer')!r}, the seeds give seat {dealer}")
    written = record.get("deck")
    if not isinstance(written, list) or len(written) != len(deck):
        out.append(f"the deck is not {len(deck)} cards")
    else:
        for i, (got, want) in enumerate(zip(written, deck, strict=True)):
            if got != want:
                out.append(f"deck[{i}] is {got!r}, the seeds give {want!r}")
    return out
