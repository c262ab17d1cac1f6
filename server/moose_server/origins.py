"""Which web pages may open a WebSocket at /ws: the server's own, and those the operator lists.

A browser sends the page's `Origin` with every WebSocket handshake and lets any
page open one to any site: without a check, a page elsewhere could play, chat
and report with its visitors' sessions. Clients that are not browsers (bots, the
CLI, the load test) send no Origin and are not concerned.

The server's own origin is the scheme and host:port the browser used: the
request's `Host` and scheme, or, when the peer is a trusted proxy
(MOOSE_TRUSTED_PROXIES), what it says in `X-Forwarded-Proto` and
`X-Forwarded-Host` (nginx.conf sets both), since behind a TLS proxy the server
itself sees plain HTTP and maybe another host name. Other origins may be listed
in MOOSE_ALLOWED_ORIGINS (``https://moose.example.com,http://localhost:3000``).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from moose_server.addresses import Network, client_trusted

__all__ = ["Origin", "Origins", "parse_origins"]

Origin = tuple[str, str, int]  # scheme, host (lower case), port
_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_WEB = {"ws": "http", "wss": "https"}


def _origin(scheme: str, host: str) -> Origin | None:
    """(scheme, host, port) of a scheme and a `host[:port]`, or None if they are not one."""
    scheme = _WEB.get(scheme.lower(), scheme.lower())
    if scheme not in _PORTS or not host:
        return None
    try:
        parts = urlsplit(f"//{host}")
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname or parts.username is not None or parts.path:
        return None
    return scheme, parts.hostname, port if port is not None else _PORTS[scheme]


def parse_origins(text: str) -> frozenset[Origin]:
    """Comma-separated origins ("https://a.example, http://b:8080"); ValueError if one is not."""
    found = set()
    for item in text.split(","):
        if not item.strip():
            continue
        scheme, sep, host = item.strip().rstrip("/").partition("://")
        origin = _origin(scheme, host) if sep else None
        if origin is None:
            raise ValueError(f"allowed_origins: {item.strip()!r} is not scheme://host[:port]")
        found.add(origin)
    return frozenset(found)


def _last(header: str | None) -> str:
    """The value the nearest proxy set: the last of a comma-separated header."""
    return (header or "").rpartition(",")[2].strip()


class Origins:
    """The check of a handshake's Origin against the server's own and the allowed list."""

    def __init__(self, allowed: str, trusted: tuple[Network, ...]) -> None:
        self.allowed = parse_origins(allowed)
        self.trusted = trusted

    def own(
        self, scheme: str, host: str, peer: str | None, headers: Mapping[str, str]
    ) -> Origin | None:
        """The origin the browser used to reach us (as a trusted proxy tells it, if one)."""
        if client_trusted(peer, self.trusted):
            scheme = _last(headers.get("X-Forwarded-Proto")) or scheme
            host = _last(headers.get("X-Forwarded-Host")) or host
        return _origin(scheme, host)

    def allows(self, origin: str | None, own: Origin | None) -> bool:
        """Whether a handshake with this Origin header may go on (none: not a browser)."""
        if origin is None:
            return True
        scheme, sep, host = origin.strip().partition("://")
        theirs = _origin(scheme, host) if sep else None  # "null" (a sandbox, a file) too
        return theirs is not None and (theirs == own or theirs in self.allowed)
