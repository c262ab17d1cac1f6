"""`moose serve` that cannot start says why in one line, with the fix: no traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from moose_server.storage.embedded import free_port

from helpers import ServeProcess

pytestmark = pytest.mark.slow  # each test runs `moose serve`


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `moose serve ARGS` to its end (it is expected to fail at start-up)."""
    cmd = [sys.executable, "-m", "moose", "serve", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=os.environ.copy())


def said(run: subprocess.CompletedProcess[str]) -> str:
    """The one line `moose serve` ended with, after checking it is the only complaint."""
    assert run.returncode != 0
    assert "Traceback" not in run.stderr + run.stdout, run.stderr
    (line,) = [ln for ln in run.stderr.splitlines() if ln.startswith("moose serve: ")]
    return line


def test_a_port_in_use_is_named_with_the_fix(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = serve("--port", str(port), "--data-dir", str(tmp_path))
    assert f"port {port} is in use on 127.0.0.1" in said(run) and "--port" in said(run)


def test_an_unreachable_redis_is_named_with_the_fix(tmp_path: Path) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    line = said(serve("--port", str(free_port()), "--redis", url))
    assert f"cannot reach Redis at {url}" in line and "leave --redis out" in line


def test_a_short_token_secret_is_named_with_the_fix(tmp_path: Path) -> None:
    line = said(serve("--data-dir", str(tmp_path), "--token-secret", "short"))
    assert "fewer than 32 bytes" in line and "MOOSE_TOKEN_SECRET=" in line


def test_a_data_folder_in_use_is_named_with_the_fix(
    moose_serve: Callable[..., ServeProcess], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    moose_serve("--data-dir", str(data))
    line = said(serve("--port", str(free_port()), "--data-dir", str(data)))
    assert "is in use by another moose serve" in line and "--data-dir" in line
