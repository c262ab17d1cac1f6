"""A Web Push service on loopback, and a browser's subscription keys, for notices' tests.

`PushService` is a small aiohttp server standing in for a browser vendor's push
service: it keeps every request it gets and answers each with the next of its
`answers` (a status, or STALL: never answer, so the sender times out), then 201.
`Browser` holds what a browser keeps of a subscription (its P-256 key pair and
auth secret) and reads a push as the browser would: decrypts it (RFC 8291,
http_ece) and checks its VAPID token (RFC 8292, py_vapid).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from dataclasses import dataclass, field
from typing import Any

import http_ece
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02

from moose_server.storage.embedded import free_port

__all__ = ["STALL", "Browser", "PushService", "Received"]

STALL = 0  # an answer that never comes


def b64url(raw: bytes) -> str:
    """Base64url without padding, as browsers give keys."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    """Base64url with or without padding."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Received:
    """One request the push service got."""

    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes
    answered: int  # the status it got (STALL: none)


@dataclass
class PushService:
    """A push service on loopback (see the module docstring)."""

    answers: list[int] = field(default_factory=list)
    received: asyncio.Queue[Received] = field(default_factory=asyncio.Queue)
    port: int = 0
    _runner: web.AppRunner | None = None

    async def __aenter__(self) -> PushService:
        app = web.Application()
        app.router.add_post("/push/{sub}", self._push)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        self.port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    def endpoint(self, name: str) -> str:
        """The endpoint URL of one subscription."""
        return f"http://127.0.0.1:{self.port}/push/{name}"

    async def _push(self, request: web.Request) -> web.Response:
        status = self.answers.pop(0) if self.answers else 201
        body = await request.read()
        got = Received(
            request.path, {k.lower(): v for k, v in request.headers.items()}, body, status
        )
        self.received.put_nowait(got)
        if status == STALL:
            await asyncio.Event().wait()  # until the sender gives up and the server closes
        return web.Response(status=status)


class Browser:
    """A browser's side of one subscription: keys, and reading what was pushed."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)

    def subscription(self) -> dict[str, Any]:
        """What `PushSubscription.toJSON()` gives the page."""
        public = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": self.endpoint,
            "keys": {"p256dh": b64url(public), "auth": b64url(self.auth)},
        }

    def read(self, got: Received) -> dict[str, Any]:
        """The push's payload, decrypted with this subscription's keys (RFC 8291)."""
        assert got.headers["content-encoding"] == "aes128gcm"
        plain = http_ece.decrypt(
            got.body, private_key=self.key, auth_secret=self.auth, version="aes128gcm"
        )
        payload: dict[str, Any] = json.loads(plain)
        return payload


def vapid_claims(got: Received, server_key: str) -> dict[str, Any]:
    """The VAPID token's claims, once its signature checks out against `server_key`."""
    auth = got.headers["authorization"]
    assert Vapid02.verify(auth), "the VAPID token's signature does not verify"
    parts = dict(p.split("=", 1) for p in auth.split(" ", 1)[1].split(","))
    assert parts["k"] == server_key, "signed with another key than the one the page got"
    claims: dict[str, Any] = json.loads(unb64url(parts["t"].split(".")[1]))
    return claims
