"""The page's text tables (web/i18n.js), read by node as the browser reads them.

Every language has exactly the same keys (a key missing in one would show the
English text, or the key itself, in the middle of the other), and a translation
fills no placeholder its English text does not have. Needs `node`: without it
the test is skipped, except in CI (CI set), where that is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a node process

WEB = Path(__file__).resolve().parent.parent / "server" / "moose_server" / "net" / "web"
I18N = WEB / "i18n.js"
# The module reads the browser's storage and language when imported: a stand-in for each.
LOAD = """
globalThis.localStorage = { getItem() { return null; }, setItem() {} };
globalThis.navigator = { languages: ["en"] };
globalThis.document = { documentElement: {} };
const { TABLES } = await import(process.argv[1]);
console.log(JSON.stringify(TABLES));
"""


def tables() -> dict[str, dict[str, str]]:
    """Every language's table, as the page builds it (its blocks merged)."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but node is not installed")
        pytest.skip("node is not installed")
    out = subprocess.run(
        [node, "--input-type=module", "-e", LOAD, I18N.as_uri()],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    found: dict[str, dict[str, str]] = json.loads(out.stdout)
    return found


def placeholders(text: str) -> set[str]:
    """The {name} placeholders of a text."""
    return set(re.findall(r"\{(\w+)\}", text))


def test_every_language_has_exactly_the_keys_of_english() -> None:
    found = tables()
    english = found["en"]
    assert set(found) == {"en", "es"} and len(english) > 400  # the tables were read
    for language, table in found.items():
        assert sorted(set(english) - set(table)) == [], f"{language} lacks these keys"
        assert sorted(set(table) - set(english)) == [], f"{language} has keys English lacks"


def test_no_translation_fills_a_placeholder_english_does_not_have() -> None:
    found = tables()
    for language, table in found.items():
        english = found["en"]
        extra = {k: placeholders(v) - placeholders(english[k]) for k, v in table.items()}
        assert {k: v for k, v in extra.items() if v} == {}, language


def test_spanish_says_rating_and_score_in_different_words() -> None:
    es = tables()["es"]
    # A rating is a "puntuación"; a game's score is the moose counted, never a "puntuación".
    for key in ("left_col", "score_is", "score_col", "score_parts"):
        assert "puntuaci" not in es[key].lower(), key
    for key in ("site_rating", "site_col_rating", "rating"):
        assert "puntuaci" in es[key].lower(), key
