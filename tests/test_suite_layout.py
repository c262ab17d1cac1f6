"""The test suite's own rule: shared names come from `helpers`, never from another test file."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported_modules(path: Path) -> set[str]:
    """The top-level names of every module a file imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_no_test_file_imports_another_test_file_or_conftest() -> None:
    test_files = {p.stem for p in TESTS.glob("test_*.py")}
    offenders = {
        path.name: sorted(wrong)
        for path in [*TESTS.glob("*.py"), *TESTS.glob("helpers/*.py")]
        if (wrong := imported_modules(path) & (test_files | {"conftest", "_games"}))
    }
    assert offenders == {}, "import shared names from tests/helpers instead"
