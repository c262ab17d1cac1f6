"""keys.py names every Redis key and channel, in one form; nobody else formats one."""

from __future__ import annotations

import ast
import concurrent.futures
import re
from pathlib import Path

import pytest
from redis.crc import key_slot

from moose_server.storage import keys

ROOT = Path(__file__).resolve().parent.parent
KEYS_MODULE = ROOT / "server" / "moose_server" / "storage" / "keys.py"
# The load test may not import the server: it copies the few keys it reads from
# deploy/README.md ("Keys read from outside"), and tests/test_loadtest.py checks
# that copy against keys.py.
DOCUMENTED_COPY = ROOT / "server" / "moose_loadtest" / "deployment.py"
# Reads the key forms written in deploy/README.md, to hold them against keys.py.
DOCS_CHECK = ROOT / "tests" / "test_documented_facts.py"
SCANNED = [
    ROOT / "server" / "moose_server",
    ROOT / "server" / "moose_loadtest",
    ROOT / "tests",
    ROOT / "bench",
]
HOLE = "\x00"  # where an f-string puts a value

# What a key or channel name looks like once written out: a hash tag (followed by
# a colon, or alone), "moose:<kind>:" or "moose:{", a kind of key after a tag or a
# value, or a channel's name.
KINDS = "|".join(
    [
        "game",
        "events",
        "moves",
        "record",
        "deadlines",
        "unrated",
        "polled",
        "names",
        "guests",
        "top",
        "challenged",
        "looking",
        "ctop",
        "rated",
        "games",
        "heartbeat",
        "limit",
        "secret",
        "hold",
        "sessions",
        "deal",
        "chat",
        "blocks",
        "follows",
        "followers",
        *keys.MM_KEY_KINDS,
    ]
)
LOOKS_LIKE_A_KEY = [
    re.compile(r"\{[^{}\s]*\}:"),
    re.compile(r"^\{(b\d*|pl|mm|live|lt|tokens)\}$"),  # keys.py's tags
    re.compile(r"^moose:([\w-]+:|\{)"),
    re.compile(rf"(^|[}}\x00*]):({KINDS})(:|$)"),
]
NAMES = {
    keys.GAMES_CHANNEL.decode(),
    keys.PLAYERS_CHANNEL.decode(),
    keys.LOADTEST_CHANNEL.decode(),
    keys.MODERATION_CHANNEL.decode(),
    keys.CHAT_CHANNEL.decode(),
    "moose:secret",
}

ONE_FORM = re.compile(r"^moose:\{[^{}]+\}:[a-z_]+(:.+)?$")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(id(value))
    return found


def _texts(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string the code holds (f-strings with a hole per value), but docstrings."""
    skip = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = [p.value if isinstance(p, ast.Constant) else HOLE for p in node.values]
            out.append((node.lineno, "".join(str(p) for p in parts)))
        elif isinstance(node, ast.Constant) and id(node) not in skip:
            if isinstance(node.value, bytes):
                out.append((node.lineno, node.value.decode(errors="replace")))
            elif isinstance(node.value, str):
                out.append((node.lineno, node.value))
    return out


def _parse(source: str) -> ast.Module:
    """`ast.parse` in a thread of its own.

    In a long pytest session CPython 3.11 can raise "SystemError: AST constructor
    recursion depth mismatch" (its per-thread recursion count, left off by an
    earlier RecursionError, CPython gh-106905): a new thread starts from zero.
    """
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(ast.parse, source).result()


def key_like(source: str) -> list[tuple[int, str]]:
    """The strings of a module's code that spell out (part of) a key or channel name."""
    return [
        (line, text)
        for line, text in _texts(_parse(source))
        if text in NAMES or any(p.search(text) for p in LOOKS_LIKE_A_KEY)
    ]


@pytest.mark.parametrize(
    "code",
    [
        'k = f"{{b{n}}}:game:{gid}"',
        'k = f"moose:{{b{n}}}:events:{gid}"',
        'k = "moose:player:" + player + ":games"',
        'k = f"moose:instance:{instance}"',
        'TAG = "moose:{pl}"',
        'HASH_TAG = "{mm}"',
        'k = f"{prefix}:{HASH_TAG}:queue"',
        'k = "{mm}:queue"',
        "k = b'moose:games'",
        'k = f"*:events:{game}"',
        'k = "moose:secret"',
    ],
)
def test_the_scan_finds_a_key_written_by_hand(code):
    assert key_like(code)


@pytest.mark.parametrize(
    "code",
    [
        '"""A docstring may show moose:{b7}:game:<id>."""',
        'card = "moose:kitchen"',
        'field = f"m:{player}:{move_id}"',
        'source = f"table:{code}"',
        'url = f"redis://{host}:{port}/0"',
    ],
)
def test_the_scan_leaves_other_strings_alone(code):
    assert not key_like(code)


def test_no_module_but_keys_py_formats_a_key():
    found = []
    for folder in SCANNED:
        for path in sorted(folder.rglob("*.py")):
            if path in (KEYS_MODULE, DOCUMENTED_COPY, DOCS_CHECK, Path(__file__).resolve()):
                continue
            for line, text in key_like(path.read_text()):
                found.append(f"{path.relative_to(ROOT)}:{line}: {text!r}")
    assert not found, "keys written outside storage/keys.py:\n" + "\n".join(found)


def test_every_key_has_the_one_form():
    game = keys.GameKeys.of("g_1", 16)
    names = [
        *game.held(),
        game.deadlines,
        game.unrated,
        keys.polled_key(3),
        keys.profile_key("p_1"),
        keys.history_key("p_1"),
        keys.top_key("bots"),
        keys.top_key("humans", "correspondence"),
        keys.rated_key("g_1"),
        keys.NAMES_KEY,
        keys.GUESTS_KEY,
        *keys.mm_keys(),
        keys.mm_done_key("n"),
        keys.LIVE_GAMES_KEY,
        keys.LIVE_INFO_KEY,
        keys.ONLINE_KEY,
        keys.ONLINE_COUNTS_KEY,
        keys.player_games_key("p_1"),
        keys.instance_key("i_1"),
        keys.limit_key("code", "address", "10.0.0.0"),
        keys.SECRET_KEY,
        *vars(keys.ModerationKeys()).values(),
        keys.ModerationKeys.heavy(493000, "rate_limited:x"),
        keys.ModerationKeys.limits(493000),
    ]
    assert [n for n in names if not ONE_FORM.match(n)] == []
    assert len(set(names)) == len(names)


def test_keys_that_stand_alone_spread_over_the_slots():
    lone = [keys.player_games_key(f"p_{i}") for i in range(50)]
    lone += [keys.instance_key(f"i_{i}") for i in range(50)]
    assert len({key_slot(k.encode()) for k in lone}) > 50


def test_a_games_keys_are_in_its_buckets_slot_and_buckets_differ():
    slots = set()
    for game in ("g_a", "g_b", "g_c", "g_d"):
        names = keys.GameKeys.of(game, 16)
        bucket = keys.bucket(game, 16)
        mine = {key_slot(k.encode()) for k in [*names.held(), names.deadlines, names.unrated]}
        assert mine == {key_slot(keys.polled_key(bucket).encode())}
        slots |= mine
    assert len(slots) > 1


def test_an_unknown_matchmaking_key_is_refused():
    with pytest.raises(ValueError):
        keys.mm_key("queues")
