"""A private table's join code: its alphabet and the form it is stored in."""

from __future__ import annotations

__all__ = ["CODE_ALPHABET", "CODE_LENGTH", "clean_code"]

# No 0/O, 1/I/L: a join code is read aloud and typed by hand. 31**8 = 8.5e11
# codes: with the guess limit (limits.CodeGuard) finding any one of the tables
# waiting takes far longer than a table waits (deploy/README.md has the sums).
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 8


def clean_code(code: object) -> str:
    """A join code as typed (any case, spaces, dashes) in the form it is stored in;
    "" for what is not text."""
    return code.strip().upper().replace(" ", "").replace("-", "") if isinstance(code, str) else ""
