"""The previous release of the server, taken from git to run beside this checkout.

deploy/RELEASES names it by commit (its last line). `previous_release` unpacks that
commit's `client/` and `server/` into a folder and returns the environment that
runs `python -m moose` from them with this venv's libraries; a clone without the
commit (a shallow one) skips the test, saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RELEASES = ROOT / "deploy" / "RELEASES"


@dataclass(frozen=True)
class Release:
    """A release unpacked from git: its version, commit and the env that runs it."""

    version: str
    commit: str
    env: dict[str, str]


def listed_releases() -> list[tuple[str, str]]:
    """deploy/RELEASES' (version, commit) pairs, oldest first."""
    rows = [line.split() for line in RELEASES.read_text().splitlines()]
    return [(row[0], row[1]) for row in rows if row and not row[0].startswith("#")]


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False)


def _in_git(version: str, commit: str) -> None:
    """pytest.skip unless this checkout's git history holds `commit`, saying why."""
    if shutil.which("git") is None or _git("rev-parse", "--git-dir").returncode:
        pytest.skip("the previous release comes from git, and this is not a git checkout")
    if _git("cat-file", "-e", f"{commit}^{{commit}}").returncode:
        shallow = _git("rev-parse", "--is-shallow-repository").stdout.strip() == b"true"
        why = "this clone is shallow" if shallow else "this clone lacks it"
        pytest.skip(
            f"the previous release {version} ({commit[:12]}) is not in git here: {why}; "
            "git fetch --unshallow origin main"
        )


def release_is_ancestor(version: str, commit: str) -> bool:
    """Whether the release's commit is in this checkout's history (pytest.skip when the
    clone lacks it)."""
    _in_git(version, commit)
    return _git("merge-base", "--is-ancestor", commit, "HEAD").returncode == 0


def previous_source(path: str) -> str:
    """The text of a file of the previous release (`path` from the repository root)."""
    version, commit = listed_releases()[-1]
    _in_git(version, commit)
    shown = _git("show", f"{commit}:{path}")
    assert shown.returncode == 0, shown.stderr.decode()
    return shown.stdout.decode()


def previous_release(into: Path) -> Release:
    """The last release of deploy/RELEASES, unpacked into `into` (pytest.skip when this
    checkout's git history does not hold it)."""
    version, commit = listed_releases()[-1]
    _in_git(version, commit)
    archive = _git("archive", "--format=tar", commit, "client", "server")
    assert archive.returncode == 0, archive.stderr.decode()
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    path = os.pathsep.join([str(into / "client"), str(into / "server")])
    return Release(version, commit, {"PYTHONPATH": path})
