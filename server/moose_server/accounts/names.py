"""Player names: what a name may hold, and telling apart names that look alike.

Players read each other's names, so a name must show something: `clean`
refuses control and format characters (bidi overrides, zero-width spaces),
characters that render as nothing (the Hangul fillers, the Braille blank, ...),
combining marks with no letter under them, and names with nothing visible left.
Any space becomes one ASCII space.

Names need not be unique, but at one table two names that look the same
(equal after case folding, or after mapping look-alike letters: UTS #39's idea
of a skeleton, with a small table of the common Latin, Cyrillic and Greek
look-alikes instead of its 6,000 lines) would leave players guessing who is
who: `distinct` adds the seat number to each of them ("alice #1", "ALICE #3").
"""

from __future__ import annotations

import unicodedata

from moose.protocol import ProtocolError

__all__ = ["MAX_NAME", "clean", "distinct", "look_alike", "skeleton"]

MAX_NAME = 24
MAX_MARKS = 2  # combining marks on one letter: more stack into unreadable "zalgo" text

# Characters that take up no ink but are not of a category refused outright
# (those are Cc, Cf, Co, Cs, Cn, Zl, Zp): fillers and blanks of category Lo, So,
# Mn, from Unicode's Default_Ignorable_Code_Point list and the Braille blank.
BLANKS = frozenset(
    "\u034f"  # combining grapheme joiner
    "\u115f\u1160\u3164\uffa0"  # Hangul choseong/jungseong/compatibility/halfwidth fillers
    "\u17b4\u17b5"  # Khmer inherent vowels
    "\u180b\u180c\u180d\u180f"  # Mongolian free variation selectors
    "\u2800"  # Braille pattern blank
    "\ufffc"  # object replacement character
)
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})

# The Latin letter -> the characters mistaken for it (after NFKC, accents
# stripped). Capitals count where they differ from their small letter: "I"
# looks like "l", and the Greek capital eta like "h" (its small letter like "n").
_LOOK_ALIKE = {
    "a": "\u0430\u03b1",  # Cyrillic a, Greek alpha
    "b": "\u0432\u044c\u03b2",  # Cyrillic ve, soft sign; Greek beta
    "c": "\u0441\u03f2",  # Cyrillic es, Greek lunate sigma
    "d": "\u0501",  # Cyrillic komi de
    "e": "\u0435\u0451\u03b5",  # Cyrillic ie, io; Greek epsilon
    "g": "\u0261",  # Latin script g
    "h": "\u04bb\u043d\u0397",  # Cyrillic shha, en; Greek capital eta
    "i": "\u0456\u0457\u0131\u03b9",  # Cyrillic i, yi; dotless i; Greek iota
    "j": "\u0458",  # Cyrillic je
    "k": "\u043a\u03ba",  # Cyrillic ka, Greek kappa
    "l": "I1|\u01c0\u04cf",  # capital I, one, bar, dental click, Cyrillic palochka
    "m": "\u043c",  # Cyrillic em
    "n": "\u03b7",  # Greek eta
    "o": "0\u043e\u03bf",  # zero, Cyrillic o, Greek omicron
    "p": "\u0440\u03c1",  # Cyrillic er, Greek rho
    "q": "\u051b",  # Cyrillic qa
    "s": "\u0455",  # Cyrillic dze
    "t": "\u0442\u03c4",  # Cyrillic te, Greek tau
    "u": "\u03bc\u03c5",  # Greek mu, upsilon
    "v": "\u03bd",  # Greek nu
    "w": "\u051d",  # Cyrillic we
    "x": "\u0445\u03c7",  # Cyrillic ha, Greek chi
    "y": "\u0443\u028f",  # Cyrillic u, Latin small capital y
    "z": "\u03b6",  # Greek zeta
}
_TABLE = str.maketrans({c: latin for latin, chars in _LOOK_ALIKE.items() for c in chars})
_DIGRAPHS = (("rn", "m"), ("vv", "w"))


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
    """What `name` looks like, whatever its case: "ALICE" or "\u0430lice" -> "alice"."""
    return _key(unicodedata.normalize("NFKC", name).casefold())


def _key(text: str) -> str:
    bare = "".join(
        ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)
    )
    text = bare.translate(_TABLE)
    for pair, single in _DIGRAPHS:
        text = text.replace(pair, single)
    return " ".join(text.split())


def look_alike(a: str, b: str) -> bool:
    """Whether a reader may take one name for the other: equal skeletons, or equal
    look-alike letters with case kept ("Ian" and "lan": capital I is small L)."""
    return skeleton(a) == skeleton(b) or _key(a) == _key(b)


def distinct(names: list[str], seats: list[int] | None = None) -> list[str]:
    """The names of one table's seats, with the seat number added to look-alikes.

    `seats` are the names' seat indexes when some seats are left out (empty).
    """
    numbers = list(range(len(names))) if seats is None else seats
    out = list(names)
    for _ in range(len(names)):  # "bob #2" may itself look like a name there
        clash = {
            seat
            for seat in range(len(out))
            for other in range(len(out))
            if seat != other and look_alike(out[seat], out[other])
        }
        if not clash:
            break
        for seat in clash:
            out[seat] = f"{out[seat]} #{numbers[seat] + 1}"
    return out
