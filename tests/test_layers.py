"""Nothing imports back up: the server's layers and features, read from its imports (ast).

From the bottom: the client package `moose` (the rules, the protocol); the base
modules of `moose_server` (settings, errors, addresses, origins, tasks); then
the shared layers, each knowing only those below it: storage/, limits/, ops/,
net/; then the features; then app.py and commands/, which compose them. A
feature uses another feature only through what that one exports (its
`__init__`'s `__all__`), and the features' own imports make no circle. Only
storage/ talks to redis-py: the others catch its errors as storage/failures.py
names them.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

import moose
import moose_server

PACKAGE = Path(moose_server.__file__).parent
BASE = {"settings", "errors", "addresses", "origins", "tasks"}
SHARED = ["storage", "limits", "ops", "net"]  # lowest first
FEATURES = {
    "play",
    "matchmaking",
    "tables",
    "arenas",
    "social",
    "moderation",
    "accounts",
    "deals",
    "notify",
}
TOP = {"app", "commands"}


def rank(part: str) -> int:
    """The layer of a top-level part of moose_server: a higher one may import a lower one."""
    if part in BASE:
        return 1
    if part in SHARED:
        return 2 + SHARED.index(part)
    if part in FEATURES:
        return 2 + len(SHARED)
    assert part in TOP, f"moose_server.{part} belongs to no layer: name its layer here"
    return 3 + len(SHARED)


def part_of(path: Path) -> str:
    """The top-level part of moose_server a source file belongs to."""
    first = path.relative_to(PACKAGE).parts[0]
    return first.removesuffix(".py")


def sources() -> Iterator[Path]:
    """Every Python file of the server (the page's files are not Python)."""
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "__init__.py" or path.parent != PACKAGE:
            yield path


def imports(path: Path) -> Iterator[tuple[str, list[str]]]:
    """(module, names) of each absolute import in a file; names is [] for `import x`."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, [alias.name for alias in node.names]


def server_parts(module: str) -> list[str]:
    """['storage', 'keys'] for moose_server.storage.keys; [] for a module not the server's."""
    head, *rest = module.split(".")
    return rest if head == "moose_server" else []


def test_a_layer_imports_none_above_it() -> None:
    wrong = []
    for path in sources():
        own = part_of(path)
        for module, names in imports(path):
            parts = server_parts(module)
            # `from moose_server import app` names the part in the imported names
            targets = parts[:1] or (names if module == "moose_server" else [])
            wrong += [
                f"{path.relative_to(PACKAGE)} imports moose_server.{t}"
                for t in targets
                if t != own and rank(t) > rank(own)
            ]
    assert wrong == []


def _exports(feature: str) -> set[str]:
    return set(getattr(importlib.import_module(f"moose_server.{feature}"), "__all__", ()))


def test_a_feature_uses_another_only_through_its_exports() -> None:
    wrong = []
    for path in sources():
        own = part_of(path)
        if own not in FEATURES:
            continue
        for module, names in imports(path):
            parts = server_parts(module)
            if not parts or parts[0] == own or parts[0] not in FEATURES:
                continue
            if len(parts) > 1:
                wrong.append(f"{path.relative_to(PACKAGE)} imports {module} (not the package)")
                continue
            wrong += [
                f"{path.relative_to(PACKAGE)} imports {parts[0]}.{name}, not in its __all__"
                for name in names
                if name not in _exports(parts[0])
            ]
    assert wrong == []


def _uses() -> dict[str, set[str]]:
    uses: dict[str, set[str]] = {feature: set() for feature in FEATURES}
    for path in sources():
        own = part_of(path)
        if own in FEATURES:
            for module, _ in imports(path):
                parts = server_parts(module)
                if parts and parts[0] in FEATURES and parts[0] != own:
                    uses[own].add(parts[0])
    return uses


def test_the_features_make_no_circle() -> None:
    uses = _uses()
    order: list[str] = []
    while len(order) < len(uses):
        ready = sorted(f for f in uses if f not in order and uses[f] <= set(order))
        assert ready, f"a circle among {sorted(set(uses) - set(order))}"
        order += ready


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_every_feature_exports_what_it_names(feature: str) -> None:
    package = importlib.import_module(f"moose_server.{feature}")
    assert all(hasattr(package, name) for name in getattr(package, "__all__", ()))


def test_the_client_imports_nothing_of_the_server_and_the_rules_nothing_at_all() -> None:
    client = Path(moose.__file__).parent
    found = {
        path.name: [m for m, _ in imports(path) if m.split(".")[0] == "moose_server"]
        for path in sorted(client.rglob("*.py"))
    }
    assert {name: modules for name, modules in found.items() if modules} == {}
    rules = [m for m, _ in imports(client / "rules.py") if m.split(".")[0] == "moose"]
    assert rules == []


def test_nothing_but_storage_imports_redis_py() -> None:
    found = [
        f"{path.relative_to(PACKAGE)} imports {module}"
        for path in sources()
        if part_of(path) != "storage"
        for module, _ in imports(path)
        if module.split(".")[0] == "redis"
    ]
    assert found == []


def test_nothing_outside_storage_imports_redis_py_even_inside_a_function() -> None:
    found = [
        f"{path.relative_to(PACKAGE)} imports {module}"
        for path in sources()
        if part_of(path) != "storage"
        for module, _ in imports(path)
        if module.split(".")[0] in ("redis", "hiredis")
    ]
    assert found == []


def test_the_load_test_talks_to_redis_from_its_probes_only() -> None:
    # moose_loadtest imports nothing of the server (test_loadtest.py): its own
    # Redis calls (measurements, seeded ratings, a cluster joined) live in one
    # small package, moose_loadtest/probes/.
    package = PACKAGE.parent / "moose_loadtest"
    found = {
        path.relative_to(package).as_posix()
        for path in sorted(package.rglob("*.py"))
        for module, _ in imports(path)
        if module.split(".")[0] in ("redis", "hiredis")
    }
    assert found and {path.split("/")[0] for path in found} == {"probes"}, found


def _redis_parameters(path: Path) -> list[str]:
    """`function(redis: annotation)` of each parameter named redis in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            every = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            for arg in every:
                if arg.arg == "redis":
                    kind = ast.unparse(arg.annotation) if arg.annotation else "nothing"
                    found.append(f"{node.name}({arg.arg}: {kind})")
    return sorted(found)


def test_no_signature_takes_an_untyped_redis() -> None:
    # A store is given the one gateway (storage/gateway.py), typed; never `redis: Any`.
    found = [
        f"{path.relative_to(PACKAGE)}: {hit}"
        for path in sources()
        for hit in _redis_parameters(path)
        if hit.endswith((": Any)", ": nothing)", ": object)"))
    ]
    assert found == []


def _past_the_gateway(path: Path) -> list[str]:
    """`x.client` and `x.batch` read off a gateway named redis: redis-py behind its back."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in ("client", "batch"):
            owner = node.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if name == "redis":
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_feature_reaches_past_the_gateway() -> None:
    found = [
        hit for path in sources() if part_of(path) != "storage" for hit in _past_the_gateway(path)
    ]
    assert found == []


def test_the_gateway_check_sees_a_reach_past_it(tmp_path: Path) -> None:
    source = tmp_path / "x.py"
    source.write_text(
        "async def f(self, redis):\n    await self.redis.client.get('k')\n    redis.batch\n"
    )
    assert sorted(hit.split(" ")[1] for hit in _past_the_gateway(source)) == [
        "redis.batch",
        "self.redis.client",
    ]


def test_the_gateway_check_sees_an_untyped_redis(tmp_path: Path) -> None:
    source = tmp_path / "x.py"
    source.write_text(
        "class S:\n    def __init__(self, redis: Any, n: int) -> None: ...\n"
        "async def f(redis) -> None: ...\ndef g(redis: Gateway) -> None: ...\n"
    )
    found = _redis_parameters(source)
    assert found == ["__init__(redis: Any)", "f(redis: nothing)", "g(redis: Gateway)"]


def test_every_part_of_the_server_has_a_layer() -> None:
    parts = {part_of(path) for path in sources()}
    assert parts <= BASE | set(SHARED) | FEATURES | TOP


def test_the_scan_sees_every_form_of_import(tmp_path: Path) -> None:
    source = tmp_path / "x.py"
    source.write_text(
        "import moose_server.net.ws\nfrom moose_server import app\n"
        "def f():\n    from moose_server.play.hub import Hub\n"
    )
    found = [(server_parts(m), n) for m, n in imports(source)]
    assert found == [(["net", "ws"], []), ([], ["app"]), (["play", "hub"], ["Hub"])]
