"""HTTP requests at the door: a banned address is refused on /api/, and
every HTTP 429 (a handshake past the socket cap, the API's limits) is recorded.

One aiohttp middleware over every route. Until the instance has built its
parts (app.py sets `GATE`) it lets everything through. A banned address gets
403 with {"error": "banned", "message", "reason", "until", "retry_after"}
(and `Retry-After` in seconds when the ban ends); on /ws it is refused at
`hello`, where the client can read why (net/handlers.py).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from moose_server.moderation.bans import Bans
from moose_server.moderation.refusals import Refusals

__all__ = ["GATE", "Gate", "gate"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Gate:
    """What the middleware checks with: the bans, the refusals, who a client is."""

    bans: Bans
    refusals: Refusals
    address: Callable[[str | None, str | None], str]  # limits.Sockets.address


GATE = web.AppKey("gate", Gate)


@web.middleware
async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Refuse a banned address on /api/; record every 429."""
    found = request.app.get(GATE)
    if found is None:
        return await handler(request)
    address = found.address(request.remote, request.headers.get("X-Forwarded-For"))
    if request.path.startswith("/api/"):
        ban = found.bans.of_address(address)
        if ban is not None:
            refusal = ban.refusal(found.bans.now())
            body = {"error": refusal.code, "message": refusal.message, **refusal.fields}
            headers = {}
            if "retry_after" in refusal.fields:
                headers["Retry-After"] = str(math.ceil(refusal.fields["retry_after"] / 1000))
            return web.json_response(body, status=403, headers=headers)
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        if exc.status == 429:
            found.refusals.refused(f"http_429:{_route(request)}", address)
        raise
    if response.status == 429:
        found.refusals.refused(f"http_429:{_route(request)}", address)
    return response


def _route(request: web.Request) -> str:
    """The route's pattern ("/api/players/{player}"), not the path: a bounded set."""
    info = request.match_info.route.resource
    return info.canonical if info is not None else "?"
