"""Session tokens kept per server and name, so that `moose play` can take a seat back.

One JSON file in the user's config folder (platformdirs: ``~/.config/moose-house``
on Linux, or under ``$XDG_CONFIG_HOME``), readable by its owner only::

    {"ws://127.0.0.1:8080/ws alice": "cF8xYjJj.YWxpY2U.1767225600.5d1f0c"}

Only the token is kept: it names the player, and the server says when it has
expired (the next start then says hello with the name again). A file that
cannot be read or written costs the resume, never the game.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

__all__ = ["forget", "load", "path", "save"]

FILE = "sessions.json"


def path() -> Path:
    """Where the tokens are kept."""
    import platformdirs

    return Path(platformdirs.user_config_dir("moose-house", appauthor=False)) / FILE


def _key(url: str, name: str) -> str:
    return f"{url} {name}"


def _read() -> dict[str, str]:
    try:
        data = json.loads(path().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def _write(tokens: dict[str, str]) -> None:
    """Replace the file in one step (a temporary file renamed over it), owner-only."""
    target = path()
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".sessions-")
        with os.fdopen(fd, "w") as out:
            json.dump(tokens, out, indent=1, sort_keys=True)
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)


def load(url: str, name: str) -> str | None:
    """The token kept for this server and name, if any."""
    return _read().get(_key(url, name))


def save(url: str, name: str, token: str) -> None:
    """Keep the token for this server and name."""
    tokens = _read()
    if tokens.get(_key(url, name)) != token:
        tokens[_key(url, name)] = token
        _write(tokens)


def forget(url: str, name: str) -> None:
    """Drop the token of this server and name (the server refused it)."""
    tokens = _read()
    if tokens.pop(_key(url, name), None) is not None:
        _write(tokens)
