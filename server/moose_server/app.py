"""The aiohttp application: routes, shared services, background loops, shutdown.

`create_app(settings)` is used by `moose serve` and by the tests alike. Its
cleanup context opens Redis (starting the bundled redis-server when no URL is
given), builds the services and starts the hub, the deadline loop and the
matchmaking loop; on exit every task is cancelled and awaited, and the embedded
Redis is stopped (it writes its AOF on the way out).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import signal
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web
from redis.exceptions import RedisError

from moose_server.accounts.identity import Accounts
from moose_server.accounts.leaderboards import Boards
from moose_server.accounts.limits import CodeGuard, Meter, Sockets
from moose_server.accounts.tokens import Tokens
from moose_server.lobby.dealer import Lobby
from moose_server.lobby.live_games import LiveGames
from moose_server.lobby.matchmaking import Matchmaker
from moose_server.net import api
from moose_server.net import site as web_client
from moose_server.net.handlers import Handlers
from moose_server.net.heartbeats import Heartbeats
from moose_server.net.hub import Hub
from moose_server.net.services import Services
from moose_server.net.ws import CLOSE_RESTART, SERVICES, websocket
from moose_server.ops.collector import Collector
from moose_server.ops.liveness import Liveness
from moose_server.ops.metrics import Metrics
from moose_server.ops.observe import collections_timed, observe, watch_loop
from moose_server.play.games import Games
from moose_server.play.results import Results
from moose_server.play.timers import Timers
from moose_server.settings import Settings
from moose_server.storage.batch import Batcher
from moose_server.storage.connection import open_redis
from moose_server.storage.embedded import EmbeddedRedis
from moose_server.storage.players import PlayerStore
from moose_server.storage.store import Store
from moose_server.tasks import cancel_and_wait

__all__ = ["SETTINGS", "create_app", "serve"]

log = logging.getLogger("moose_server")

SETTINGS = web.AppKey("settings", Settings)
REDIS_URL = web.AppKey("redis_url", str)
# The loops that take new work (deadlines, tables), each with its task: drain stops them.
WORK = web.AppKey("work", list)
READY_TIMEOUT = 15.0
SHUTDOWN_TIMEOUT = 15.0


def create_app(settings: Settings) -> web.Application:
    """A server instance: /ws, /healthz, /readyz, /metrics, the read-only /api/ and the
    browser client at /."""
    app = web.Application()
    app[SETTINGS] = settings
    app.cleanup_ctx.append(_services_ctx)
    app.on_shutdown.append(drain)
    app.router.add_get("/ws", websocket)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    api.add_routes(app)
    web_client.add_routes(app)
    return app


async def _redis_url(settings: Settings, stack: contextlib.AsyncExitStack) -> str:
    """The configured Redis, or the bundled one started in the data folder."""
    if settings.redis_url:
        log.info("Redis: %s", settings.redis_url)
        if settings.appendfsync != "everysec":
            log.warning("appendfsync applies to the embedded Redis only: set it in your Redis")
        return settings.redis_url
    folder = Path(settings.data_dir).expanduser() / "redis"
    embedded = EmbeddedRedis(folder, appendfsync=settings.appendfsync)
    await stack.enter_async_context(embedded)
    log.info("Redis: embedded redis-server at %s (data in %s, appendfsync %s)",
             embedded.url, folder, settings.appendfsync)  # fmt: skip
    return embedded.url


async def _services_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    async with contextlib.AsyncExitStack() as stack:
        url = await _redis_url(settings, stack)
        app[REDIS_URL] = url
        backend = await open_redis(url, settings.redis_connections)
        stack.push_async_callback(backend.aclose)
        services = await _build(settings, backend.redis, backend.pubsub, backend.batch)
        app[SERVICES] = services
        observe(services)
        stack.enter_context(collections_timed(services.metrics))
        stack.push_async_callback(services.games.close)
        timers = Timers(services.store, services.games, settings)
        liveness = Liveness(
            services.store, services.matchmaker, settings,
            on_presumed_dead=lambda: _ask_to_reconnect(services, "this instance lost Redis"),
        )  # fmt: skip
        await liveness.beat()
        heartbeats = Heartbeats(services.connections, settings.heartbeat)
        work = [
            (timers, asyncio.create_task(timers.run(), name="timers")),
            (services.lobby, asyncio.create_task(services.lobby.run(), name="lobby")),
            (services.results, asyncio.create_task(services.results.run(), name="results")),
        ]
        app[WORK] = work
        tasks = [
            asyncio.create_task(services.hub.run(), name="hub"),
            asyncio.create_task(liveness.run(), name="liveness"),
            asyncio.create_task(services.live.run(), name="live"),
            asyncio.create_task(watch_loop(services.metrics.loop_lag.observe), name="loop lag"),
            asyncio.create_task(heartbeats.run(), name="heartbeats"),
            *(task for _, task in work),
        ]
        try:
            async with asyncio.timeout(READY_TIMEOUT):
                await services.hub.ready.wait()
            yield
        finally:
            await cancel_and_wait(tasks)


async def _build(settings: Settings, redis: object, pubsub: object, batch: Batcher) -> Services:
    store = Store(redis, settings.buckets, batch)  # type: ignore[arg-type]
    players = PlayerStore(redis, batch)
    secret = settings.token_secret or await store.shared_secret(secrets.token_urlsafe(32))
    results = Results(store, players, settings)
    games = Games(store, settings, results)
    # The hub holds the last events of as many games as `games` keeps.
    hub = Hub(store, pubsub, games.recent_max)  # type: ignore[arg-type]
    games.on_commit, hub.on_wakeup = hub.committed, games.saw
    matchmaker = Matchmaker(
        redis, match_wait=settings.match_wait, queue_bots_after=settings.queue_bots_after,
        instance=settings.instance_id, lease=settings.lease, batch=batch,
        window=settings.match_window, widen=settings.match_widen,
    )  # fmt: skip
    tokens, metrics = Tokens(secret, settings.token_ttl), Metrics()
    guard = CodeGuard(store, settings)
    logins = Meter(store, "login", settings.login_attempts,
                   settings.login_window / settings.login_attempts,
                   "too many failed logins; try again later")  # fmt: skip
    accounts = Accounts(players, tokens, settings, logins)
    boards = Boards(players, settings)
    lobby = Lobby(matchmaker, games, store, settings, results)
    live = LiveGames(store, matchmaker, settings, lambda: len(hub.players))
    handlers = Handlers(
        store, games, hub, accounts, matchmaker, lobby, metrics, guard, boards, live
    )
    hub.on_player, hub.on_resubscribe = handlers.heard, handlers.after_outage
    return Services(
        settings=settings, store=store, games=games, hub=hub, tokens=tokens,
        matchmaker=matchmaker, lobby=lobby, metrics=metrics, handlers=handlers,
        sockets=Sockets(settings), results=results, boards=boards, live=live,
    )  # fmt: skip


async def drain(app: web.Application) -> None:
    """Stop taking players and new work; ask every socket to reconnect elsewhere (1012).

    /readyz and new sockets answer 503 from here on; deadlines and matchmaking
    are left to the other instances (the poll or round under way ends first).
    """
    services = app.get(SERVICES)
    if services is None or services.draining:
        return
    services.draining = True
    work = app.get(WORK, [])
    for part, _ in work:
        part.stop()
    _ask_to_reconnect(services, "server restarting")
    loop = asyncio.get_running_loop()
    until = loop.time() + services.settings.drain_grace
    tasks = {task for _, task in work}
    while (services.connections or any(not t.done() for t in tasks)) and loop.time() < until:
        await asyncio.sleep(0.05)


def _ask_to_reconnect(services: Services, reason: str) -> None:
    """Close every socket with 1012: the client library reconnects at once and resumes."""
    for conn in list(services.connections):
        conn.close(CLOSE_RESTART, reason)


async def healthz(request: web.Request) -> web.Response:
    """Alive: the process answers."""
    return web.json_response({"ok": True})


async def readyz(request: web.Request) -> web.Response:
    """Ready: Redis answers and we are not draining."""
    services = request.app.get(SERVICES)
    if services is None or services.draining:
        return web.json_response({"ready": False, "reason": "draining"}, status=503)
    try:
        await services.store.redis.ping()
    except (RedisError, OSError) as exc:
        return web.json_response({"ready": False, "reason": str(exc)}, status=503)
    return web.json_response({"ready": True, "instance": services.settings.instance_id})


async def metrics(request: web.Request) -> web.StreamResponse:
    """Prometheus metrics of this instance (text format)."""
    services = request.app.get(SERVICES)
    if services is None:
        raise web.HTTPServiceUnavailable(text="starting")
    return await services.metrics.scrape(request)


async def serve(settings: Settings) -> None:
    """Run one instance until SIGINT or SIGTERM, then drain and shut down cleanly."""
    app = create_app(settings)
    # keepalive_timeout also bounds how long a new connection may take to send its
    # first request's headers (aiohttp closes it then), so slowloris gets nowhere.
    runner = web.AppRunner(
        app, handle_signals=False, shutdown_timeout=settings.drain_grace,
        keepalive_timeout=settings.header_timeout,
    )  # fmt: skip
    await runner.setup()
    collector = None
    try:
        site = web.TCPSite(runner, settings.host, settings.port)
        await site.start()
        collector = asyncio.create_task(Collector(settings.gc_reclaim).run(), name="collector")
        log.info(
            "Moose House %s listening on http://%s:%d (WebSocket at /ws)",
            settings.instance_id, settings.host, settings.port,
        )  # fmt: skip
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        log.info("shutting down: draining for up to %.1f s", settings.drain_grace)
        await drain(app)
    finally:
        if collector is not None:
            await cancel_and_wait([collector])
        try:
            # A bound, so that a stuck part can never keep the process alive.
            async with asyncio.timeout(settings.drain_grace + SHUTDOWN_TIMEOUT):
                await runner.cleanup()
        except TimeoutError:
            log.error("shutdown did not finish within %.0f s; exiting", SHUTDOWN_TIMEOUT)
        log.info("stopped")
