"""The client library: errors, exports and lazy imports (no server needed)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import moose
from moose.client import ConnectError, ConnectionLost, MooseError, ServerError
from moose_server.embedded import free_port


def test_all_names_resolve() -> None:
    for name in moose.__all__:
        assert getattr(moose, name) is not None


def test_import_moose_does_not_import_aiohttp() -> None:
    code = "import sys, moose, moose.cli; moose.cli.build_parser(); print('aiohttp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_errors_form_one_tree() -> None:
    for exc in (ConnectError, ConnectionLost, ServerError):
        assert issubclass(exc, MooseError)
    err = ServerError("illegal_move", "seat 1 holds no door")
    assert (err.code, err.message) == ("illegal_move", "seat 1 holds no door")


async def test_connect_to_nothing_raises_connect_error() -> None:
    url = f"ws://127.0.0.1:{free_port()}/ws"
    with pytest.raises(ConnectError, match="cannot reach"):
        async with moose.connect(url, name="alice"):
            pass
