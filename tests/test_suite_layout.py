"""The test suite's own rules: shared names come from `helpers`, never from another
test file; a test that starts a process is marked `slow` (the fast lane stays fast)."""

from __future__ import annotations

import ast
import asyncio
import io
import itertools
import multiprocessing
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.lanes import ProcessInFastTest

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


def test_a_test_taking_a_process_fixture_is_marked_slow(
    request: pytest.FixtureRequest, redis_factory
):
    # Taking the fixture is enough; it starts nothing until called.
    assert request.node.get_closest_marker("slow") is not None


@pytest.mark.parametrize("backend_url", ["single", "cluster"])
def test_a_test_is_slow_on_the_redis_cluster_only(request: pytest.FixtureRequest, backend_url: str):
    slow = request.node.get_closest_marker("slow") is not None
    assert slow == (backend_url == "cluster")


async def test_a_fast_test_that_starts_a_process_fails_and_says_why() -> None:
    with pytest.raises(ProcessInFastTest, match="mark it"):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    with pytest.raises(ProcessInFastTest):
        await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    with pytest.raises(ProcessInFastTest):
        multiprocessing.get_context("spawn").Process(target=print).start()


@pytest.fixture(scope="module")
def process_of_a_module_fixture() -> Exception | None:
    """What starting a process from a module-scoped fixture raised (None if it started)."""
    try:
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    except ProcessInFastTest as exc:
        return exc
    return None


def test_a_wider_fixture_set_up_for_a_fast_test_may_not_start_a_process(
    process_of_a_module_fixture: Exception | None,
) -> None:
    assert isinstance(process_of_a_module_fixture, ProcessInFastTest)


@pytest.mark.slow
def test_a_test_marked_slow_may_start_a_process() -> None:
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def skipped_statements(source: str) -> Iterator[list[tokenize.TokenInfo]]:
    """The tokens of each logical line that ends in a `# fmt: skip` comment."""
    line: list[tokenize.TokenInfo] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        line.append(token)
        if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            if any(t.type == tokenize.COMMENT and t.string == "# fmt: skip" for t in line):
                yield [t for t in line if t.type not in IGNORED]
            line = []


IGNORED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}


def aligned(tokens: list[tokenize.TokenInfo]) -> bool:
    """Whether two or more lines pad a token with spaces to a column: a table."""
    padded = {
        a.end[0]
        for a, b in itertools.pairwise(tokens)
        if a.end[0] == b.start[0] and b.start[1] - a.end[1] >= 2
    }
    return len(padded) >= 2


def test_the_formatter_formats_every_statement_but_aligned_tables() -> None:
    # `# fmt: skip` keeps a table's columns; anywhere else ruff format lays it out.
    found = {}
    root = TESTS.parent
    for path in [
        p for d in ("server", "client", "tests", "bench") for p in (root / d).rglob("*.py")
    ]:
        source = path.read_text()
        if "# fmt: skip" in source:
            kept = [s[0].start[0] for s in skipped_statements(source) if not aligned(s)]
            if kept:
                found[path.name] = kept
    assert found == {}, "remove `# fmt: skip` there (lines) and run ruff format"
