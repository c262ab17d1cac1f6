"""The browser client: the static files of web/, served by every instance.

`/`, `/t/{code}` (a private table's invitation), `/w/{game}` (watch a game),
`/p/{player}` (a profile), `/leaderboard`, `/leaderboard/bots`, `/account`,
`/g/{game}` (a finished game's replay), `/rules` (how to play) and `/play/{game}` (a
game of ours) all answer the same page; the page reads the path itself and speaks
only the public protocol over `/ws`. A browser asking for a page at a path we do
not have (it accepts text/html) gets the page too, with status 404: it says that
nothing is there, in the page's language, with the way back to the lobby.

The files are read once at start-up. Their URLs carry a digest of all of them
(`/static/<digest>/app.js`), so a browser may keep them for a year and a new
release is fetched at once; the page itself is revalidated on every load (ETag).
A file asked for under another digest (an instance of another release behind the
same load balancer) is still served, but not to be kept. Each file is
gzip-compressed once at start-up and sent so to a browser that accepts it (every
browser does): the page weighs a third.

Every answer carries a Content-Security-Policy that allows only our own
scripts, styles and images and a WebSocket to our own origin, and forbids
framing the page. Every other answer of the server (the API, the probes, and
the errors: 404, 405, 429, 500, a refused handshake) gets `ANSWER_HEADERS`:
the same nosniff, no-referrer and no-framing, and a policy that allows nothing.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources

from aiohttp import web
from aiohttp.web_urldispatcher import MatchInfoError

__all__ = ["ANSWER_HEADERS", "SECURITY_HEADERS", "WebFiles", "add_routes"]

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
STATIC_MARK = "/static/_/"  # where index.html names its files; replaced by the digest
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # /t/CODE is an invitation: it must not leak to other sites as a Referer.
    "Referrer-Policy": "no-referrer",
}
# For answers that are not the page: JSON, plain text, errors. Nothing in them may run.
ANSWER_HEADERS = {
    **SECURITY_HEADERS,
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
}
KEEP = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


@dataclass(frozen=True)
class _File:
    body: bytes
    content_type: str
    etag: str
    gzipped: bytes  # compressed once at start-up: what a browser downloads


class WebFiles:
    """The page and its files, read once, with their digests."""

    def __init__(self) -> None:
        folder = resources.files("moose_server.net") / "web"
        raw = {
            item.name: item.read_bytes()
            for item in folder.iterdir()
            if item.is_file() and _suffix(item.name) in TYPES
        }
        digest = hashlib.sha256()
        for name in sorted(raw):
            digest.update(name.encode() + b"\0" + raw[name] + b"\0")
        self.version = digest.hexdigest()[:12]
        html = raw.pop("index.html").replace(STATIC_MARK.encode(), self.prefix.encode())
        self.page = _file(html, "index.html")
        self.files = {name: _file(body, name) for name, body in raw.items()}

    @property
    def prefix(self) -> str:
        """Where the page finds its files: /static/<digest>/."""
        return f"/static/{self.version}/"

    def size(self) -> int:
        """Bytes of our own HTML, CSS and JavaScript together."""
        return len(self.page.body) + sum(len(f.body) for f in self.files.values())

    def gzipped_size(self) -> int:
        """Bytes a browser downloads for them all: each file gzip-compressed."""
        return len(self.page.gzipped) + sum(len(f.gzipped) for f in self.files.values())


WEB_FILES = web.AppKey("web_files", WebFiles)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _suffix(name: str) -> str:
    return name[name.rfind(".") :] if "." in name else ""


def _file(body: bytes, name: str) -> _File:
    etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
    return _File(body, TYPES[_suffix(name)], etag, gzip.compress(body, 9, mtime=0))


def _takes_gzip(request: web.Request) -> bool:
    """Whether the request's Accept-Encoding allows gzip (not refused with q=0)."""
    for part in request.headers.get("Accept-Encoding", "").lower().split(","):
        coding, _, params = part.partition(";")
        if coding.strip() == "gzip":
            try:
                return float(params.strip().removeprefix("q=") or "1") > 0
            except ValueError:
                return False
    return False


def _answer(request: web.Request, item: _File, cache: str, status: int = 200) -> web.Response:
    # The compressed form is another representation: its own ETag, and caches told so.
    packed = _takes_gzip(request)
    etag = item.etag[:-1] + '-gz"' if packed else item.etag
    headers = {**SECURITY_HEADERS, "Cache-Control": cache, "ETag": etag, "Vary": "Accept-Encoding"}
    if status == 200 and etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    headers["Content-Type"] = item.content_type
    if not packed:
        return web.Response(body=item.body, status=status, headers=headers)
    headers["Content-Encoding"] = "gzip"
    return web.Response(body=item.gzipped, status=status, headers=headers)


async def page(request: web.Request) -> web.Response:
    """GET /, /t/{code}, /w/{game}, /p/{player}, /leaderboard, /account, /g/{game},
    /rules, /play/{game}: the page (it reads the path itself)."""
    return _answer(request, request.app[WEB_FILES].page, REVALIDATE)


async def static(request: web.Request) -> web.Response:
    """GET /static/{version}/{name}: one of the page's files."""
    files = request.app[WEB_FILES]
    item = files.files.get(request.match_info["name"])
    if item is None:
        raise web.HTTPNotFound(text="no such file", headers=SECURITY_HEADERS)
    current = request.match_info["version"] == files.version
    return _answer(request, item, KEEP if current else REVALIDATE)


# Paths whose "not found" is for programs, not people: answered as they are.
_NOT_PAGES = ("/api/", "/static/", "/ws", "/metrics", "/healthz", "/readyz")


@web.middleware
async def _missing_page(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A browser's GET of a path no route has: the page (which says so), status 404."""
    try:
        return await handler(request)
    except web.HTTPNotFound:
        unrouted = isinstance(request.match_info, MatchInfoError)
        wants_page = "text/html" in request.headers.get("Accept", "")
        if not (unrouted and wants_page and request.method in ("GET", "HEAD")):
            raise
        if request.path.startswith(_NOT_PAGES):
            raise
        return _answer(request, request.app[WEB_FILES].page, REVALIDATE, status=404)


async def _secure(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer's security headers (the page's own stay as it set them)."""
    for name, value in ANSWER_HEADERS.items():
        response.headers.setdefault(name, value)


def add_routes(app: web.Application) -> None:
    """Serve the browser client from this app; every answer gets security headers."""
    app.on_response_prepare.append(_secure)
    app.middlewares.append(_missing_page)
    app[WEB_FILES] = WebFiles()
    app.router.add_get("/", page)
    app.router.add_get(r"/t/{code:[A-Za-z0-9-]{1,16}}", page)
    app.router.add_get(r"/w/{game:[A-Za-z0-9_]{1,64}}", page)
    # The site's pages: a profile, the leaderboards, the account.
    app.router.add_get(r"/p/{player:[^/]{1,100}}", page)
    app.router.add_get("/leaderboard", page)
    app.router.add_get("/leaderboard/bots", page)
    app.router.add_get("/account", page)
    app.router.add_get("/arenas", page)  # arena tournaments
    app.router.add_get(r"/arena/{arena:[A-Za-z0-9_-]{1,64}}", page)
    app.router.add_get(r"/g/{game:[A-Za-z0-9_]{1,64}}", page)  # replays
    app.router.add_get("/rules", page)
    app.router.add_get(r"/play/{game:[A-Za-z0-9_]{1,64}}", page)  # a game of ours
    app.router.add_get(r"/static/{version:[0-9a-f_]{1,64}}/{name:[a-z0-9_-]+\.[a-z]+}", static)
