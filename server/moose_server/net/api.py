"""The read-only HTTP JSON API, for web pages and tools (the same data as the protocol).

    GET /api/leaderboard?limit=N&offset=M&kind=humans|bots&pool=realtime|correspondence
                                                   {"kind", "pool", "offset", "total",
                                                   "players": [player, ...]}, best first
    GET /api/players/{player}                      a player (an id, or an account's name)
                                                   with "provisional", "account", "rank",
                                                   "correspondence" and "history"
    GET /api/games/{game}/record                   a finished queue game's record (RULES.md 7;
                                                   a private table's is not served here)

A player is {"player", "name", "rating", "games", "bot"} (accounts/leaderboards.py). A refusal
is {"error": code, "message": ...} with 400 (bad_message), 404 (no_such_player,
no_such_game, not_over) or 503 (unavailable); the codes are PROTOCOL.md's. An
address past its share of requests (limits.ApiLimit, shared by every instance)
gets 429 with Retry-After (s) and {"error": "rate_limited", "message",
"retry_after": ms}.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from aiohttp import web

from moose_server.errors import Refusal
from moose_server.limits.limits import ApiLimit, Limited
from moose_server.storage.failures import StorageError
from moose_server.storage.store import Store

__all__ = ["API", "Api", "add_routes"]

DEFAULT_LIMIT = 20  # players a leaderboard page holds unless asked (accounts' default)


class Boards(Protocol):
    """The leaderboards and profiles (accounts/leaderboards.py)."""

    async def page(self, kind: str, limit: int, offset: int, pool: str) -> dict[str, Any]:
        """A page of one leaderboard of a rating pool."""

    async def find(self, player: str | None = None, name: str | None = None) -> str:
        """The player id of an id or an account's name; or no_such_player."""

    async def profile(self, player: str, now_ms: int) -> dict[str, Any]:
        """A player's rating, rank and history."""


class Records(Protocol):
    """The finished games' records (play/games.py)."""

    async def public_record(self, game_id: str) -> dict[str, Any]:
        """The record of a finished queue game while it is kept."""


_STATUS = {"bad_message": 400, "no_such_player": 404, "no_such_game": 404, "not_over": 404}
Handler = Callable[["Api", web.Request], Awaitable[Any]]


class Api:
    """What the API reads: the leaderboards, the games, Redis' clock (built in app.py)."""

    def __init__(self, boards: Boards, games: Records, store: Store, limit: ApiLimit) -> None:
        self.boards = boards
        self.games = games
        self.store = store
        self.limit = limit  # requests per client address


API = web.AppKey("api", Api)


def add_routes(app: web.Application) -> None:
    """Register the API's routes (they answer from `app[API]`)."""
    app.router.add_get("/api/leaderboard", _json(leaderboard))
    app.router.add_get("/api/players/{player}", _json(player))
    app.router.add_get("/api/games/{game}/record", _json(record))


# < > & as JSON escapes: a message that quotes the request (a name in the path) can
# never read as markup, whatever a browser makes of the answer.
_HTML_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def _dumps(body: Any) -> str:
    return json.dumps(body).translate(_HTML_SAFE)


def _json(handler: Handler) -> Callable[[web.Request], Awaitable[web.Response]]:
    """The handler's answer as JSON; a refusal or Redis trouble as a JSON error."""

    async def answer(request: web.Request) -> web.Response:
        api = request.app[API]
        try:
            await api.limit.check(request.remote, request.headers.get("X-Forwarded-For"))
            return web.json_response(await handler(api, request), dumps=_dumps)
        except Limited as exc:
            body = {"error": exc.code, "message": exc.message, **exc.fields}
            wait = math.ceil(exc.fields.get("retry_after", 1000) / 1000)
            headers = {"Retry-After": str(wait)}
            return web.json_response(body, status=429, headers=headers, dumps=_dumps)
        except Refusal as exc:
            body = {"error": exc.code, "message": exc.message}
            return web.json_response(body, status=_STATUS.get(exc.code, 400), dumps=_dumps)
        except (StorageError, OSError):
            body = {"error": "unavailable", "message": "the server cannot reach its storage"}
            return web.json_response(body, status=503, dumps=_dumps)

    return answer


async def leaderboard(api: Api, request: web.Request) -> dict[str, Any]:
    """GET /api/leaderboard: the best players of one kind."""
    kind = request.query.get("kind", "humans")
    pool = request.query.get("pool", "realtime")
    try:
        limit = int(request.query.get("limit", DEFAULT_LIMIT))
        offset = int(request.query.get("offset", 0))
    except ValueError:
        raise Refusal("bad_message", "limit and offset are numbers") from None
    return await api.boards.page(kind, limit, offset, pool)


async def player(api: Api, request: web.Request) -> dict[str, Any]:
    """GET /api/players/{player}: by player id (p_...) or by account name."""
    key = request.match_info["player"]
    found = key if key.startswith("p_") else await api.boards.find(name=key)
    return await api.boards.profile(found, await api.store.now_ms())


async def record(api: Api, request: web.Request) -> dict[str, Any]:
    """GET /api/games/{game}/record: the record of a finished game while it is kept."""
    return await api.games.public_record(request.match_info["game"])
