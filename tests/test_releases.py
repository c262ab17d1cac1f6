"""The previous release (deploy/RELEASES) is in this checkout's history; every key and
channel name of it is the same here, and every message, field and code of its
protocol still means what it did (PROTOCOL.md, "Compatibility").

During a rolling upgrade both releases read and write the same Redis: a key the
previous release uses and this one named otherwise would be written by one and
never read by the other (deploy/README.md, "Upgrading"). Names this release adds
are free. The previous release's keys.py (standard library only) is read from git
and imported on its own, and every public name of it is compared with this one's:
constants by value, functions and key classes by what they give for sample
arguments.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
import typing
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from moose import protocol
from moose_server.storage import keys

from helpers import listed_releases, previous_source, release_is_ancestor

# Sample arguments by annotation: every key function takes ids, kinds or numbers.
SAMPLES = {"str": "x_1", "int": 7, "str | None": "x_2"}
GIVEN = {"mm_key": (keys.MM_KEY_KINDS[0],)}  # takes one of its kinds only
pytestmark = pytest.mark.slow  # git, a process


def load_previous(path: str, name: str) -> Iterator[types.ModuleType]:
    """A module of the previous release (standard library and installed packages only),
    imported from its source under `name` (in sys.modules while the tests use it:
    dataclasses look their module up there)."""
    source = previous_source(path)
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        exec(compile(source, f"previous {path}", "exec"), module.__dict__)
        yield module
    finally:
        del sys.modules[name]


@pytest.fixture(scope="module")
def previous() -> Iterator[types.ModuleType]:
    """The previous release's keys.py."""
    yield from load_previous("server/moose_server/storage/keys.py", "previous_keys")


@pytest.fixture(scope="module")
def previous_protocol() -> Iterator[types.ModuleType]:
    """The previous release's protocol.py: the messages, fields and codes it documents."""
    yield from load_previous("client/moose/protocol.py", "previous_protocol")


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


Fields = dict[str, tuple[set[Any], bool]]  # field -> (the types it takes, required)


def requests_now() -> dict[str, Fields]:
    """Each request this release takes: its fields, their types, whether required
    (protocol.CLIENT_MESSAGES, or the Structs of moose.messages where they replace it)."""
    table = getattr(protocol, "CLIENT_MESSAGES", None)
    if table is not None:
        return {t: {f: (set(ts), need) for f, (ts, need) in fs.items()} for t, fs in table.items()}
    structs = importlib.import_module("moose.messages").CLIENT_TYPES
    return {
        mtype: {
            f.encode_name: (types_of(f.type), f.required)
            for f in msgspec.structs.fields(struct)
            if f.name != "id"  # allowed on every request
        }
        for mtype, struct in structs.items()
    }


def server_types_now() -> frozenset[str]:
    """Every message type this release's server sends."""
    found = getattr(protocol, "SERVER_MESSAGES", None)
    return found if found is not None else importlib.import_module("moose.messages").SERVER_TYPES


def types_of(annotation: Any) -> set[Any]:
    """The Python types a Struct field's annotation takes (a map for a nested Struct)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return types_of(args[0])
    if origin in (typing.Union, types.UnionType):
        return set().union(*(types_of(a) for a in args))
    if origin is typing.Literal:
        return {type(a) for a in args}
    if annotation is typing.Any:
        return {int, str, bool, float, dict, list, type(None)}
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return {dict}
    return {origin or annotation}


def test_the_protocol_keeps_its_major_version(previous_protocol):
    assert protocol.PROTOCOL_VERSION == previous_protocol.PROTOCOL_VERSION, (
        "a new major version: say so in PROTOCOL.md and serve the old one meanwhile"
    )


def test_no_message_type_or_error_code_of_the_previous_release_is_gone(previous_protocol):
    before = previous_protocol
    for name, was, now in [
        ("server messages", before.SERVER_MESSAGES, server_types_now()),
        ("error codes", before.ERROR_CODES, protocol.ERROR_CODES),
        ("requests", before.CLIENT_MESSAGES, requests_now()),
    ]:
        gone = set(was) - set(now)
        assert not gone, f"{name} gone: {sorted(gone)}"


def test_a_request_the_previous_release_took_is_taken_here(previous_protocol):
    # Every field still taken, with every type it took; nothing optional made
    # required, no required field added to a request that was there.
    requests = requests_now()
    for mtype, before in previous_protocol.CLIENT_MESSAGES.items():
        now = requests[mtype]
        for field, (types_before, _) in before.items():
            assert field in now and set(types_before) <= now[field][0], (mtype, field, now)
        required = {f for f, (_, needed) in now.items() if needed}
        was = {f for f, (_, needed) in before.items() if needed}
        assert required <= was, (mtype, required - was)
