"""The previous release (deploy/RELEASES) is in this checkout's history, and every key
and channel name of it is the same here.

During a rolling upgrade both releases read and write the same Redis: a key the
previous release uses and this one named otherwise would be written by one and
never read by the other (deploy/README.md, "Upgrading"). Names this release adds
are free. The previous release's keys.py (standard library only) is read from git
and imported on its own, and every public name of it is compared with this one's:
constants by value, functions and key classes by what they give for sample
arguments.
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from moose_server.storage import keys

from helpers import listed_releases, previous_source, release_is_ancestor

# Sample arguments by annotation: every key function takes ids, kinds or numbers.
SAMPLES = {"str": "x_1", "int": 7, "str | None": "x_2"}
GIVEN = {"mm_key": (keys.MM_KEY_KINDS[0],)}  # takes one of its kinds only
pytestmark = pytest.mark.slow  # git, a process


@pytest.fixture(scope="module")
def previous() -> Iterator[types.ModuleType]:
    """The previous release's keys.py, imported from its source as a module of its own
    (in sys.modules while the tests use it: dataclasses look their module up there)."""
    source = previous_source("server/moose_server/storage/keys.py")
    module = types.ModuleType("previous_keys")
    sys.modules[module.__name__] = module
    try:
        exec(compile(source, "previous keys.py", "exec"), module.__dict__)
        yield module
    finally:
        del sys.modules[module.__name__]


def call(fn: Any) -> Any:
    """`fn` called with a sample argument for each of its parameters."""
    if fn.__name__ in GIVEN:
        return fn(*GIVEN[fn.__name__])
    # A parameter with a default keeps it: a release may add one, and the call as
    # the previous release made it must name the same key.
    params = inspect.signature(fn).parameters.values()
    needed = [p for p in params if p.default is p.empty and p.name not in ("self", "cls")]
    return fn(*[SAMPLES[str(p.annotation)] for p in needed])


def named(value: Any) -> Any:
    """What a public name gives: its value, a function's result, or a key class's names
    for sample arguments (each public attribute of `of(...)`, by name)."""
    if inspect.isclass(value):
        made = call(value.of) if hasattr(value, "of") else value
        return {
            name: named(getattr(made, name))
            for name in dir(made)
            if not name.startswith("_") and name not in ("of", "loadtest")
        }
    if callable(value):
        return call(value)
    return value


def same(here: Any, before: Any) -> bool:
    """Whether `here` names every key `before` named the same (a class may add some)."""
    if isinstance(before, dict):
        return all(k in here and same(here[k], v) for k, v in before.items())
    return bool(here == before)


def test_the_releases_are_listed_oldest_first_each_in_this_history():
    releases = listed_releases()
    assert releases, "deploy/RELEASES lists no release"
    for version, commit in releases:
        assert len(commit) == 40 and release_is_ancestor(version, commit), (version, commit)
    versions = [tuple(int(n) for n in v.split(".")) for v, _ in releases]
    assert versions == sorted(set(versions))


def test_the_previous_release_has_key_names(previous):
    assert "GameKeys" in previous.__all__ and previous.PREFIX == keys.PREFIX


def test_no_key_name_of_the_previous_release_is_gone(previous):
    assert set(previous.__all__) <= set(keys.__all__)


def test_every_key_name_of_the_previous_release_is_the_same_here(previous):
    renamed = [
        name
        for name in previous.__all__
        if name in keys.__all__
        and not same(named(getattr(keys, name)), named(getattr(previous, name)))
    ]
    assert not renamed, (
        f"{renamed} name keys otherwise than the previous release: rename a key in two "
        "releases (deploy/README.md, Upgrading)"
    )
