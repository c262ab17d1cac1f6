"""The page's pure parts for a game's way back, the tie-break and the move log's
language, unit-tested by node (tests/js/flows.test.mjs, `node --test`).

Needs `node`: without it the test is skipped, except in CI (CI set), where that
is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a node process

UNITS = Path(__file__).resolve().parent / "js" / "flows.test.mjs"


def test_the_pure_modules_pass_their_node_unit_tests() -> None:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but node is not installed")
        pytest.skip("node is not installed")
    run = subprocess.run([node, "--test", str(UNITS)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "# fail 0" in run.stdout and "# pass 6" in run.stdout
