"""Player names: invisible and empty-looking names are refused; look-alikes share a key
(UTS #39 skeletons, case, the i/l family) and get their seat number at a table."""

from __future__ import annotations

import pytest

from moose.protocol import ProtocolError
from moose_server.accounts.names import (
    MAX_NAME,
    clean,
    distinct,
    look_alike,
    renamings,
    skeleton,
)
from moose_server.accounts.store import PlayerStore, _rekeyed
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import NAMES_KEY, profile_key


@pytest.mark.parametrize(
    "name",
    [
        "\u3164",  # Hangul filler: a letter (Lo) that draws nothing
        "\u3164\u3164\u3164",
        "\uffa0",
        "\u115f\u1160",
        "\u2800",  # Braille blank
        "a\u3164b",  # a gap that is not a space
        "\u0301\u0301",  # combining marks only
        " \u0301",
        "x\u0301\u0302\u0303",  # three marks on one letter
        "\u200b",  # zero-width space (Cf)
        "bob\u200b",
        "\u202eevil",  # right-to-left override
        "a\u2028b",  # line separator
        "\u00a0\u3000 ",  # spaces only
        "",
        "x" * (MAX_NAME + 1),
        "\x07bell",
        "\ue000",  # private use
        5,
    ],
)
def test_invisible_empty_and_unprintable_names_are_refused(name):
    with pytest.raises(ProtocolError) as err:
        clean(name)
    assert err.value.code == "bad_message" and err.value.message


@pytest.mark.parametrize(
    ("name", "stored"),
    [
        ("alice", "alice"),
        ("  Zoë   Smith ", "Zoë Smith"),
        ("Zoe\u0308", "Zoë"),  # NFC
        ("ムース\u3000ハウス", "ムース ハウス"),  # any space becomes one ASCII space
        ("👍🏽 ok", "👍🏽 ok"),
        ("李小龍", "李小龍"),
        ("x" * MAX_NAME, "x" * MAX_NAME),
        ("résumé", "résumé"),
        ("...", "..."),
    ],
)
def test_visible_names_in_any_script_are_kept(name, stored):
    assert clean(name) == stored


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("alice", "ALICE"),
        ("alice", "\u0430lice"),  # Cyrillic a
        ("Ian", "lan"),  # capital I and small L
        ("bob", "b0b"),
        ("modern", "rnodern"),
        ("Paypal", "\u0420\u0430ypal"),  # Cyrillic capital er and small a
        ("alice", "\uff41\uff4c\uff49\uff43\uff45"),  # fullwidth
        ("Eve", "\u0395ve"),  # Greek capital epsilon
        ("zoe", "zoë"),
    ],
)
def test_names_that_differ_by_case_or_look_alike_letters_look_alike(a, b):
    assert look_alike(a, b) and look_alike(b, a)


@pytest.mark.parametrize(("a", "b"), [("alice", "alicia"), ("bob", "rob"), ("ann", "anne")])
def test_different_names_do_not_look_alike(a, b):
    assert not look_alike(a, b)


def test_look_alikes_at_a_table_get_their_seat_number():
    names = ["alice", "bob", "\u0430lice", "ALICE"]
    assert distinct(names) == ["alice #1", "bob", "\u0430lice #3", "ALICE #4"]
    assert distinct(["ann", "bob"]) == ["ann", "bob"]
    assert distinct(["ann", "Ann"], seats=[0, 3]) == ["ann #1", "Ann #4"]  # seats 1, 2 empty


def test_a_suffix_that_looks_like_another_name_is_told_apart_too():
    out = distinct(["bob", "bob", "bob #1"])
    assert not any(look_alike(a, b) for i, a in enumerate(out) for b in out[i + 1 :]), out


# Every look-alike of "alice" known to fool a reader, and more of each kind.
ALICES = [
    "alice",
    "ALICE",
    "Alice",
    "aIice",  # capital I
    "a1ice",  # digit one
    "a|ice",  # vertical bar
    "\u0251lice",  # Latin alpha
    "\u0430lice",  # Cyrillic a
    "\u0430l\u0456\u0441\u0435",  # Cyrillic a, i, es, ie
    "\u03b1lice",  # Greek alpha
    "\uff41\uff4c\uff49\uff43\uff45",  # fullwidth
    "al\u0131ce",  # dotless i
    "a\u217cice",  # Roman numeral fifty (small l)
    "alic\u0117",  # e with dot above: marks do not make a new name
    "alice\ufe0f",  # variation selector 16 (refused by `clean`; the key ignores it)
    "al\u200dice",  # zero-width joiner (the same)
]


@pytest.mark.parametrize("name", ALICES)
def test_every_look_alike_of_alice_has_alices_key(name):
    assert skeleton(name) == skeleton("alice"), (name, skeleton(name))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("bob", "B0B"),  # zero and O
        ("bob", "\u0184\u043e\u042c"),
        ("Eve", "\u0395\u03bde"),  # Greek capital epsilon, small nu
        ("paypal", "\u0440\u0430ypal"),
        ("modern", "rnodern"),  # UTS #39: m looks like r n
        ("x y", "x\u3000 y"),  # spaces
        ("zoe", "zo\u0308e\u0301"[:2] + "\u00eb"),
    ],
)
def test_other_look_alikes_share_a_key(a, b):
    assert skeleton(a) == skeleton(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Ann", "Anna"),
        ("alice", "alicia"),
        ("bob", "rob"),
        ("\u041c\u0430\u0440\u0438\u044f", "\u041c\u0430\u0440\u0438\u043d\u0430"),  # Мария, Марина
        ("\u674e\u96f7", "\u674e\u96f6"),  # 李雷, 李零
        ("\u674e\u96f7", "\u738b\u96f7"),  # 李雷, 王雷
        ("carol", "carol-2"),
    ],
)
def test_distinct_names_keep_distinct_keys(a, b):
    assert skeleton(a) != skeleton(b)


@pytest.mark.parametrize(
    "name",
    [
        "alice\ufe0f",  # variation selector 16: renders as alice
        "alice\ufe0e",  # variation selector 15
        "ali\U000e0100ce",  # variation selector 17 (supplement)
        "al\u200dice",  # zero-width joiner
        "al\u200cice",  # zero-width non-joiner
        "alice\u180e",  # Mongolian vowel separator
        "alice\U000e0041",  # tag latin capital A
        "al\u034fice",  # combining grapheme joiner
        "alice\u2060",  # word joiner
        "alice\u00ad",  # soft hyphen
        "\u3164alice",  # Hangul filler
    ],
)
def test_default_ignorable_code_points_are_refused_by_name(name):
    with pytest.raises(ProtocolError) as err:
        clean(name)
    assert err.value.code == "bad_message"
    ignorable = next(ch for ch in name if ch not in "alice")
    assert f"U+{ord(ignorable):04X}" in err.value.message, err.value.message


@pytest.mark.parametrize(
    "name",
    [
        "Ann",
        "Anna",
        "\u041c\u0430\u0440\u0438\u044f",
        "\u674e\u96f7",
        "Zo\u00eb",
        "\u0939\u093f\u0928\u094d\u0926\u0940",
    ],
)
def test_names_in_any_script_pass_clean(name):
    assert clean(name) == name


def test_renamings_are_fresh_names_of_any_length():
    assert list(renamings("carol"))[:3] == ["carol-2", "carol-3", "carol-4"]
    assert all(len(n) <= MAX_NAME for n in renamings("x" * MAX_NAME))
    assert len({skeleton(n) for n in renamings("carol")}) == len(list(renamings("carol")))
    assert all(skeleton(n) != skeleton("carol") for n in renamings("carol"))


def test_rekeying_moves_each_account_to_its_new_key():
    held = {"alice": "p_a", "aiice": "p_b", "bob": "p_c", "zed": "p_d"}
    new = {"p_a": "allce", "p_b": "allce", "p_c": "bob"}  # p_d has no name on record
    keep, clashes = _rekeyed(held, new)
    # p_b comes first by old field; p_a clashes and keeps its old entry, p_d too.
    assert keep == {"allce": "p_b", "alice": "p_a", "bob": "p_c", "zed": "p_d"}
    assert clashes == [("p_a", "p_b")]


def test_rekeying_keeps_the_account_already_under_the_new_key():
    keep, clashes = _rekeyed({"allce": "p_b", "alice": "p_a"}, {"p_a": "allce", "p_b": "allce"})
    assert keep == {"allce": "p_b", "alice": "p_a"} and clashes == [("p_a", "p_b")]


async def test_the_names_index_is_re_keyed_once_per_version(backend_url):
    """On one redis-server, then a Redis Cluster: old keys move to the new ones once."""
    backend = await open_redis(backend_url, 4)
    try:
        redis, players = backend, PlayerStore(backend)
        for player, old, name in [
            ("p_a", "alice", "alice"),
            ("p_b", "aiice", "aIice"),
            ("p_c", "bob", "B0B"),
        ]:
            await redis.hset(NAMES_KEY, {old: player})
            await redis.hset(profile_key(player), {"name": name})
        assert await players.rekey_names(skeleton, "v1") == [("p_a", "p_b")]
        assert await redis.hgetall(NAMES_KEY) == {
            b"allce": b"p_b",
            b"alice": b"p_a",
            b"bob": b"p_c",
        }
        assert await players.name_owner(skeleton("ALICE")) == "p_b"
        # The same version again: nothing is read or written.
        await redis.hset(NAMES_KEY, {"stale": "p_c"})
        assert await players.rekey_names(skeleton, "v1") == []
        assert await redis.hget(NAMES_KEY, "stale") == b"p_c"
    finally:
        await backend.aclose()
