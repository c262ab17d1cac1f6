"""The page's JavaScript without a browser: its types (`tsc --noEmit` over the
modules, jsconfig.json) and the unit tests of its pure modules (`node --test
tests/web/`). They need `node` and `npm`: without them they are skipped, except in
CI (CI set), where that is a failure (.ci/run installs them). `npm ci` installs the
locked TypeScript (package-lock.json) once, a development tool only: the page ships
as plain ES modules with no build step."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # node and npm processes

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def node() -> Path:
    """The repository with its npm development tools installed."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but node or npm is missing (.ci/run installs nodejs and npm)")
        pytest.skip("node and npm are not installed (apt-get install nodejs npm); CI runs these")
    if not (ROOT / "node_modules" / "typescript").is_dir():
        npm = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert npm.returncode == 0, f"npm ci failed:\n{npm.stdout}\n{npm.stderr}"
    return ROOT


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A command in the repository, its output kept for the failure message."""
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_page_modules_type_check(node: Path) -> None:
    tsc = run(node, "npx", "--no-install", "tsc", "--noEmit", "-p", "jsconfig.json")
    assert tsc.returncode == 0, tsc.stdout + tsc.stderr


def test_the_pure_modules_pass_their_unit_tests(node: Path) -> None:
    unit = run(node, "node", "--test", "tests/web/")
    assert unit.returncode == 0, unit.stdout + unit.stderr
    assert "# fail 0" in unit.stdout and "# pass 0" not in unit.stdout


def test_every_module_of_the_page_says_it_is_type_checked() -> None:
    web = ROOT / "server" / "moose_server" / "net" / "web"
    unchecked = [p.name for p in web.glob("*.js") if not p.read_text().startswith("// @ts-check")]
    assert unchecked == []
