"""Player names: invisible and empty-looking names are refused; look-alikes at a table
get their seat number."""

from __future__ import annotations

import pytest

from moose.protocol import ProtocolError
from moose_server.accounts.names import MAX_NAME, clean, distinct, look_alike


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
