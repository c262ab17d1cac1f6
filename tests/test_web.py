"""The browser client's files as served: routes, caching, security headers, size."""

from __future__ import annotations

import gzip
import re
import tomllib
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from moose_server.app import create_app
from moose_server.net.site import ANSWER_HEADERS, CSP, WebFiles
from moose_server.settings import Settings
from moose_server.storage.embedded import free_port

from helpers import http_base

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "server" / "moose_server" / "net" / "web"
# The page's target, < 150 KB, counts the bytes a browser downloads: the server sends
# every file gzip-compressed (site.py compresses them once at start-up), as every browser
# accepts. Uncompressed the page passed 150 KB when the replays and the rules page
# landed (~33 KB, a third of it the rules text in two languages) and
# then the arenas; it still ships as plain modules, no bundler.
LIMIT = 150_000


async def get(url: str, **headers: str) -> tuple[int, Any, bytes]:
    """Status, headers (any case) and body of a GET."""
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as resp:
        return resp.status, resp.headers.copy(), await resp.read()


async def test_every_page_path_answers_the_page_with_its_security_headers(moose_server):
    base = http_base(await moose_server())
    site = (
        "/p/alice",
        "/p/p_1b2c3d4e5f",
        "/p/%C3%A1lvaro",
        "/leaderboard",
        "/leaderboard/bots",
        "/account",
    )
    replays = ("/g/g_9f8e7d6c5b", "/rules")
    for path in ("/", "/t/KX7P2M", "/t/kx7p2m", "/w/g_9f8e7d6c5b", *site, *replays):
        status, headers, body = await get(base + path)
        assert status == 200 and headers["Content-Type"].startswith("text/html"), path
        assert b"<title>Moose House</title>" in body
        assert headers["Content-Security-Policy"] == CSP
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Cache-Control"] == "no-cache" and headers["ETag"]


def test_the_policy_allows_only_our_own_origin_and_no_framing():
    rules = dict(part.strip().split(" ", 1) for part in CSP.split(";"))
    assert rules["default-src"] == "'none'" and rules["frame-ancestors"] == "'none'"
    for kind in ("script-src", "style-src", "connect-src", "img-src"):
        assert rules[kind] == "'self'", kind  # no inline code, no other host, no CDN


async def test_the_files_are_kept_a_year_under_their_digest_and_revalidated_otherwise(
    moose_server,
):
    base = http_base(await moose_server())
    _, headers, page = await get(base + "/")
    script = re.search(rb'src="(/static/([0-9a-f]{12})/app\.js)"', page)
    assert script is not None
    status, headers, body = await get(base + script.group(1).decode())
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert body == (WEB / "app.js").read_bytes()
    again = await get(base + script.group(1).decode(), **{"If-None-Match": headers["ETag"]})
    assert again[0] == 304 and again[2] == b""
    other = await get(base + "/static/000000000000/app.js")  # another release's page
    assert other[0] == 200 and other[1]["Cache-Control"] == "no-cache" and other[2] == body
    _, page_headers, _ = await get(base + "/")
    assert (await get(base + "/", **{"If-None-Match": page_headers["ETag"]}))[0] == 304


async def test_unknown_files_and_paths_are_not_found(moose_server):
    base = http_base(await moose_server())
    for path in (
        "/static/abc/secret.py",
        "/static/abc/..%2fweb.py",
        "/static/abc/nope.js",
        "/t/",
        "/w/<script>",
        "/index.html",
        "/p/",
        "/leaderboard/x",
        "/g/<script>",
        "/g/",
    ):
        assert (await get(base + path))[0] == 404, path


def test_the_page_names_only_files_it_has_and_nothing_from_elsewhere():
    files = WebFiles()
    names = set(re.findall(r"/static/[0-9a-f]+/([\w.-]+)", files.page.body.decode()))
    assert names and names <= set(files.files)
    for path in WEB.glob("*.js"):
        name, text = path.name, path.read_text()
        imports = re.findall(r'from "([^"]+)"', text)
        assert all(i.startswith("./") for i in imports), (name, imports)
        assert "innerHTML" not in text, name  # text is set as text, never parsed as HTML
        assert not re.search(r"https?://(?!www.w3.org/2000/svg)", text), name


def test_our_html_css_and_javascript_stay_under_150_kb_as_downloaded():
    files = WebFiles()
    size, raw = files.gzipped_size(), files.size()
    print(f"\nweb client: {size} bytes ({size / 1024:.1f} KiB) gzipped, {raw} uncompressed")
    assert size < LIMIT


async def test_the_page_and_its_files_are_sent_gzipped_to_who_accepts_it(moose_server):
    base = http_base(await moose_server())
    files = WebFiles()
    plain = await get(base + files.prefix + "app.js", **{"Accept-Encoding": "identity"})
    assert plain[0] == 200 and plain[2] == files.files["app.js"].body
    assert "Content-Encoding" not in plain[1] and plain[1]["Vary"] == "Accept-Encoding"
    async with aiohttp.ClientSession(auto_decompress=False) as session:
        for path in (files.prefix + "app.js", files.prefix + "i18n.js", "/rules"):
            headers = {"Accept-Encoding": "gzip, deflate"}
            async with session.get(base + path, headers=headers) as resp:
                body, packed = await resp.read(), resp.headers.copy()
            assert resp.status == 200 and packed["Content-Encoding"] == "gzip", path
            assert len(body) < len(gzip.decompress(body)) and packed["ETag"] != plain[1]["ETag"]
            headers["If-None-Match"] = packed["ETag"]
            async with session.get(base + path, headers=headers) as resp:
                assert resp.status == 304, path
        refused = {"Accept-Encoding": "gzip;q=0"}
        async with session.get(base + files.prefix + "app.js", headers=refused) as resp:
            assert "Content-Encoding" not in resp.headers and await resp.read() == plain[2]
    assert gzip.decompress(files.files["app.js"].gzipped) == plain[2]


def test_a_wheel_carries_the_web_files():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["moose_server"]
    package = WEB.parent.parent  # moose_server: the patterns are relative to it
    for path in (p for p in WEB.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        assert any(path.relative_to(package).match(p) for p in patterns), path.name


async def _boom(request: web.Request) -> web.Response:
    raise RuntimeError("a bug")


async def test_every_answer_carries_the_security_headers_errors_too(redis_url, tmp_path):
    # The server's own app, with one route that fails as a bug would (500).
    port = free_port()
    settings = Settings(redis_url=redis_url, data_dir=str(tmp_path), max_sockets_per_address=1)
    app = create_app(settings)
    app.router.add_get("/boom", _boom)
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    base = f"http://127.0.0.1:{port}"
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
        async with aiohttp.ClientSession() as session:
            answers = {}
            for method, path in [
                ("GET", "/healthz"),
                ("GET", "/readyz"),
                ("GET", "/metrics"),
                ("GET", "/api/leaderboard"),
                ("GET", "/api/players/nobody"),
                ("GET", "/nothing"),
                ("POST", "/api/leaderboard"),
                ("GET", "/boom"),
            ]:
                async with session.request(method, base + path) as resp:
                    answers[path, method] = resp.status, resp.headers.copy()
            # The one socket this address may hold, and one more: 429.
            async with session.ws_connect(base + "/ws"), session.get(base + "/ws") as resp:
                answers["/ws", "GET"] = resp.status, resp.headers.copy()
    finally:
        await runner.cleanup()
    statuses = {key: status for key, (status, _) in answers.items()}
    assert statuses == {
        ("/healthz", "GET"): 200,
        ("/readyz", "GET"): 200,
        ("/metrics", "GET"): 200,
        ("/api/leaderboard", "GET"): 200,
        ("/api/players/nobody", "GET"): 404,
        ("/nothing", "GET"): 404,
        ("/api/leaderboard", "POST"): 405,
        ("/boom", "GET"): 500,
        ("/ws", "GET"): 429,
    }
    for key, (_, headers) in answers.items():
        for name, value in ANSWER_HEADERS.items():
            assert headers.get(name) == value, (key, name)
    assert ANSWER_HEADERS["Referrer-Policy"] == "no-referrer"
    assert ANSWER_HEADERS["X-Content-Type-Options"] == "nosniff"
