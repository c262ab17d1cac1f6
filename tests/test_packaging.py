"""What an install of moose-house gives a bot author: a small client, no server; and
the sdist and wheel a release would publish (with the `server` extra, a server).

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

from moose import __version__
from moose.cli import SERVER_EXTRA
from moose_server.commands import SERVER_MODULES
from moose_server.storage.embedded import free_port

from helpers import ServeProcess

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


def install_offline(wheel: Path, extra: str | None, tmp_path: Path) -> tuple[str, set[str]]:
    """A fresh venv (tmp_path/venv) with `wheel` installed, its dependencies (and
    `extra`'s) linked from this environment, no index asked: (its python, their names)."""
    venv.create(tmp_path / "venv")
    python = str(tmp_path / "venv" / "bin" / "python")
    site = tmp_path / "deps"
    site.mkdir()
    names = link_closure(requirements_of(wheel, extra or ""), site)
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    (Path(purelib.stdout.strip()) / "deps.pth").write_text(f"{site}\n")
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps"]
    installed = _run([*pip, "--no-index", str(wheel)])
    assert installed.returncode == 0, installed.stderr
    return python, names


def requirements_of(wheel: Path, extra: str = "") -> list[Requirement]:
    """The Requires-Dist of a wheel that apply with `extra` (or none), on this Python."""
    with zipfile.ZipFile(wheel) as zf:
        [name] = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = zf.read(name).decode()
    found = email.message_from_string(meta).get_all("Requires-Dist") or []
    return applicable([Requirement(r) for r in found], extra)


def applicable(requirements: list[Requirement], extra: str = "") -> list[Requirement]:
    """Those whose marker holds here with `extra` (or none)."""
    return [r for r in requirements if r.marker is None or r.marker.evaluate({"extra": extra})]


def link_closure(requirements: list[Requirement], site: Path) -> set[str]:
    """Link the installed distributions `requirements` need, transitively, into `site`."""
    todo, names, seen = list(requirements), set(), set()
    while todo:
        wanted = todo.pop()
        name = canonicalize_name(wanted.name)
        dist = metadata.distribution(name)
        needs = [Requirement(r) for r in dist.requires or []]
        for extra in ("", *wanted.extras):  # redis[hiredis] brings hiredis
            if (name, extra) not in seen:
                seen.add((name, extra))
                todo += applicable(needs, extra)
        if name in names:
            continue
        names.add(name)
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
    python, names = install_offline(wheel, None, tmp_path)
    assert not names & {canonicalize_name(m) for m in SERVER_MODULES}, names

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
        assert SERVER_EXTRA in refused.stderr, command

    # A bot written against the bare install plays a whole game (a server bot fills
    # the other seat).
    server = moose_serve("--queue-bots-after", "0.2", "--data-dir", str(tmp_path / "data"))
    (tmp_path / "bot.py").write_text(textwrap.dedent(BOT))
    played = _run([python, str(tmp_path / "bot.py"), server.url])
    assert played.returncode == 0, played.stderr
    assert played.stdout.startswith("scores [")


def tracked(root: Path) -> list[str]:
    """The files git tracks under `root`."""
    out = _run(["git", "-C", str(root), "ls-files", "-z"])
    assert out.returncode == 0, out.stderr
    return [name for name in out.stdout.split("\0") if name]


def build_from(src: Path, dist: Path) -> tuple[Path, Path]:
    """The sdist and wheel of the tree `src`, built through setuptools' PEP 517 hooks (what
    `python -m build --no-isolation` calls), in `dist`."""
    hooks = (
        f"from setuptools import build_meta as b; b.build_sdist({str(dist)!r}); "
        f"b.build_wheel({str(dist)!r})"
    )
    built = _run([sys.executable, "-c", hooks], cwd=src)
    assert built.returncode == 0, built.stderr
    [sdist] = dist.glob("moose_house-*.tar.gz")
    [wheel] = dist.glob("moose_house-*.whl")
    return sdist, wheel


def package_files(wheel: Path) -> set[str]:
    """What a wheel installs, without its dist-info."""
    with zipfile.ZipFile(wheel) as zf:
        return {n for n in zf.namelist() if ".dist-info/" not in n}


@pytest.mark.timeout(600)  # two builds, a venv and a server, on a busy machine
def test_the_sdist_and_wheel_hold_everything_and_the_server_extra_serves(tmp_path: Path) -> None:
    src = tmp_path / "clone"  # what a clone holds: the files git tracks
    files = tracked(ROOT)
    for name in files:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes((ROOT / name).read_bytes())
    sdist, wheel = build_from(src, tmp_path / "dist")
    assert wheel.name == f"moose_house-{__version__}-py3-none-any.whl"
    # Every file of the packages is in the wheel (the Lua scripts, the page...).
    wanted = {
        name.split("/", 1)[1]
        for name in files
        if name.startswith(("client/moose/", "server/moose_"))
    }
    assert wanted - package_files(wheel) == set()
    # The sdist builds the very same wheel.
    again = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "from-sdist"),
            str(sdist),
        ]
    )
    assert again.returncode == 0, again.stderr
    [rebuilt] = (tmp_path / "from-sdist").glob("*.whl")
    assert package_files(rebuilt) == package_files(wheel)

    # Installed with the server extra's distributions, it serves a game to a bot.
    python, _ = install_offline(rebuilt, "server", tmp_path)
    moose = str(tmp_path / "venv" / "bin" / "moose")
    assert _run([moose, "--version"]).stdout == f"moose {__version__}\n"
    server = ServeProcess([], free_port(), tmp_path / "serve.log")
    with server.log.open("ab") as log:
        server.proc = subprocess.Popen(
            [
                moose,
                "serve",
                "--port",
                str(server.port),
                "--queue-bots-after",
                "0.2",
                "--data-dir",
                str(tmp_path / "data"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        server.wait_ready(60)
        (tmp_path / "bot.py").write_text(textwrap.dedent(BOT))
        played = _run([python, str(tmp_path / "bot.py"), server.url])
    finally:
        server.stop()
    assert played.returncode == 0, played.stderr
    assert played.stdout.startswith("scores [")
