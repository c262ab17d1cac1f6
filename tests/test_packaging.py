"""What `pip install moose-house` gives a bot author: a small client, no server.

The bare wheel carries the rules, records, bots, the async client and the
playing CLI; `moose serve` and `moose loadtest` need the `server` extra and say
so. One test builds the wheel and installs it into a fresh virtual environment
beside exactly the distributions its requirements name (and theirs, and so
on), taken from this environment rather than downloaded: the same packages a
user's pip would resolve, without minutes of index look-ups. It then plays a
game with a bot written against it; the other test checks the imports of the
installed client in this one.
"""

from __future__ import annotations

import email
import json
import subprocess
import sys
import textwrap
import venv
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from moose_server.commands import SERVER_MODULES

pytestmark = pytest.mark.slow  # fresh interpreters and a wheel build

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = (*SERVER_MODULES, "moose_server.app", "moose_server.storage.store")

# Run in a child interpreter: which modules does the client's import pull in?
IMPORTS = f"""
import json, sys
import moose, moose.bots, moose.cli, moose.client, moose.record, moose.rules
moose.cli.build_parser()
print(json.dumps(sorted(m for m in sys.modules if m in {FORBIDDEN!r}
                        or m.split(".")[0] in {SERVER_MODULES!r})))
"""

BOT = """
import asyncio, sys
import moose

class FirstMove:
    def choose(self, view, legal):
        return legal[0]

async def main():
    [result] = await moose.play_bot(sys.argv[1], FirstMove(), name="first", min_players=2,
                                    max_players=2)
    print("scores", result.scores, "seat", result.seat)

asyncio.run(main())
"""


def test_importing_the_client_pulls_in_none_of_the_servers_dependencies() -> None:
    out = subprocess.run(
        [sys.executable, "-c", IMPORTS], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(out.stdout) == []


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kwargs)  # type: ignore[call-overload,no-any-return]


def requirements_of(wheel: Path) -> list[Requirement]:
    """The Requires-Dist of a wheel that apply without extras, on this Python."""
    with zipfile.ZipFile(wheel) as zf:
        [name] = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = zf.read(name).decode()
    found = email.message_from_string(meta).get_all("Requires-Dist") or []
    return applicable([Requirement(r) for r in found])


def applicable(requirements: list[Requirement]) -> list[Requirement]:
    """Those whose marker holds here without any extra."""
    return [r for r in requirements if r.marker is None or r.marker.evaluate({"extra": ""})]


def link_closure(requirements: list[Requirement], site: Path) -> set[str]:
    """Link the installed distributions `requirements` need, transitively, into `site`."""
    todo, names = [r.name for r in requirements], set()
    while todo:
        name = canonicalize_name(todo.pop())
        if name in names:
            continue
        names.add(name)
        dist = metadata.distribution(name)
        todo += [r.name for r in applicable([Requirement(r) for r in dist.requires or []])]
        tops = {f.parts[0] for f in dist.files or [] if f.parts[0] not in ("..", "__pycache__")}
        for top in tops:
            (site / top).symlink_to(Path(str(dist.locate_file(top))))
    return names


@pytest.mark.timeout(600)  # a wheel build and five interpreters, on a busy machine
def test_the_bare_wheel_runs_a_bot_and_leaves_the_server_out(tmp_path: Path, moose_serve) -> None:
    # Built with this environment's setuptools (the test extra has it): an isolated
    # build would fetch one from the index first.
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ]
    )
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("moose_house-*.whl")
    venv.create(tmp_path / "venv")
    python = str(tmp_path / "venv" / "bin" / "python")
    site = tmp_path / "deps"
    site.mkdir()
    names = link_closure(requirements_of(wheel), site)
    assert not names & {canonicalize_name(m) for m in SERVER_MODULES}, names
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    (Path(purelib.stdout.strip()) / "bare-deps.pth").write_text(f"{site}\n")
    installed = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            python,
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ]
    )
    assert installed.returncode == 0, installed.stderr

    # No server dependency came with it, and the client imports none.
    probe = _run([python, "-c", IMPORTS])
    assert probe.returncode == 0, probe.stderr
    assert json.loads(probe.stdout) == []
    for module in SERVER_MODULES:
        assert _run([python, "-c", f"import {module}"]).returncode != 0, module

    # The server's commands, and the load test's, say which extra to install.
    moose = str(tmp_path / "venv" / "bin" / "moose")
    for command in (["serve"], ["loadtest", "--url", "ws://127.0.0.1:1/ws"]):
        refused = _run([moose, *command])
        assert refused.returncode == 2, command
        assert "pip install 'moose-house[server]'" in refused.stderr, command

    # A bot written against the bare install plays a whole game (a server bot fills
    # the other seat).
    server = moose_serve("--queue-bots-after", "0.2", "--data-dir", str(tmp_path / "data"))
    (tmp_path / "bot.py").write_text(textwrap.dedent(BOT))
    played = _run([python, str(tmp_path / "bot.py"), server.url])
    assert played.returncode == 0, played.stderr
    assert played.stdout.startswith("scores [")
