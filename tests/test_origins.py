"""/ws takes pages of the server's own origin and MOOSE_ALLOWED_ORIGINS only.

A browser sends `Origin` with every WebSocket handshake, and would open one to any
site from any page: a page elsewhere could play as its visitor. Clients that send
no Origin (bots, the CLI, the load test) are not browsers and pass. The handshakes
here are written by hand on raw sockets, to a real `moose serve`.
"""

from __future__ import annotations

import socket

import pytest

from moose_server.addresses import networks
from moose_server.origins import Origins, parse_origins
from moose_server.settings import Settings

ALLOWED = "https://play.example.com, http://localhost:3000"


def test_allowed_origins_parse_and_a_bad_one_stops_the_start() -> None:
    assert parse_origins(ALLOWED) == {
        ("https", "play.example.com", 443),
        ("http", "localhost", 3000),
    }
    assert Settings.from_env({"MOOSE_ALLOWED_ORIGINS": ALLOWED}).allowed_origins == ALLOWED
    for bad in ("play.example.com", "ftp://x", "https://", "https://a:99999", "https://u@a"):
        with pytest.raises(ValueError, match="allowed_origins"):
            Settings(allowed_origins=bad)


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),  # not a browser
        ("http://127.0.0.1:8080", True),  # the page this server served
        ("HTTP://127.0.0.1:8080", True),
        ("https://play.example.com", True),  # listed
        ("https://play.example.com:443", True),
        ("http://play.example.com", False),  # listed with https only
        ("http://127.0.0.1:8081", False),  # another port is another site
        ("https://127.0.0.1:8080", False),
        ("http://evil.example", False),
        ("null", False),  # a sandboxed frame, a file
        ("", False),
    ],
)
def test_an_origin_is_the_servers_own_or_listed(origin: str | None, allowed: bool) -> None:
    origins = Origins(ALLOWED, ())
    own = origins.own("http", "127.0.0.1:8080", "127.0.0.1", {})
    assert origins.allows(origin, own) is allowed


def test_behind_a_trusted_proxy_the_origin_is_the_one_the_browser_used() -> None:
    origins = Origins("", networks("10.0.0.0/8"))
    headers = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "moose.example"}
    own = origins.own("http", "moose-1:8080", "10.1.2.3", headers)
    assert own == ("https", "moose.example", 443)
    assert origins.allows("https://moose.example", own)
    assert not origins.allows("http://moose.example", own)  # scheme-aware
    # From a peer that is not a proxy of ours, the headers are the client's own words.
    untrusted = origins.own("http", "moose-1:8080", "192.0.2.9", headers)
    assert untrusted == ("http", "moose-1", 8080)
    assert not origins.allows("https://moose.example", untrusted)


# -- raw handshakes against a real moose serve ------------------------------------------


def handshake(port: int, source: str, headers: dict[str, str]) -> tuple[int, bytes, bytes]:
    """A WebSocket upgrade to 127.0.0.1:`port` from `source`: the status, head and body."""
    lines = [
        "GET /ws HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    with socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0)) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            assert chunk, data
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        status = int(head.split()[1])
        if status != 101:
            length = int(
                next(
                    line.split(b":")[1]
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
            )
            while len(body) < length:
                body += s.recv(4096)
        return status, head, body


@pytest.mark.slow
def test_ws_refuses_foreign_origins_before_the_upgrade(moose_serve, redis_url: str) -> None:
    env = {"MOOSE_ALLOWED_ORIGINS": ALLOWED, "MOOSE_TRUSTED_PROXIES": "127.0.0.1"}
    port = moose_serve("--redis", redis_url, env=env).port
    own = f"http://127.0.0.1:{port}"
    outside = "127.0.0.2"  # not a trusted proxy
    assert handshake(port, outside, {})[0] == 101  # no Origin: a bot, the CLI
    assert handshake(port, outside, {"Origin": own})[0] == 101
    assert handshake(port, outside, {"Origin": "https://play.example.com"})[0] == 101
    for foreign in (
        "http://evil.example",
        f"http://127.0.0.1:{port + 1}",
        "null",
        f"https://127.0.0.1:{port}",
    ):
        status, head, body = handshake(port, outside, {"Origin": foreign})
        assert status == 403, (foreign, head)
        assert b"origin is not this server's" in body
        assert b"x-content-type-options: nosniff" in head.lower()
    # A TLS proxy in front: it says which scheme and host the browser used.
    proxied = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "moose.example"}
    assert handshake(port, "127.0.0.1", {**proxied, "Origin": "https://moose.example"})[0] == 101
    assert handshake(port, "127.0.0.1", {**proxied, "Origin": "http://moose.example"})[0] == 403
    # The same words from a client that is not a proxy of ours count for nothing.
    assert handshake(port, outside, {**proxied, "Origin": "https://moose.example"})[0] == 403
