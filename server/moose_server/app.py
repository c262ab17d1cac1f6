"""The aiohttp application: every part of an instance built and connected, top to bottom.

`create_app(settings)` is used by `moose serve` and by the tests alike. Its
cleanup context opens Redis (starting the bundled redis-server when no URL is
given), builds the parts in the order they depend on each other, each given
what it uses and whom it tells (`_build`), and starts the loops (`_run`); on
exit every task is cancelled and awaited, and the embedded Redis is stopped
(it writes its AOF on the way out).

One move, socket to Redis and back: net/ws.py decodes the frame once into its
typed message (moose.messages) -> the router -> play/handlers.py `move` ->
play/games.py `Games.move` (the rules, then `Store.commit`: one Lua script) ->
the listeners Games was built with: `Hub.committed` sends the events to this
instance's sockets, `Observer` counts and logs them. Another instance holding a
seat of the game hears the step itself on its sharded channel (`Hub.heard_step`)
and serves its sockets from it; a gap in the seqs is read from the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import signal
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from moose.redact import redact_url
from moose_server.accounts.handlers import Arrival, Profiles, Sessions
from moose_server.accounts.identity import Accounts, name_key
from moose_server.accounts.leaderboards import Boards
from moose_server.accounts.names import KEY_VERSION
from moose_server.accounts.passwords import Hashing
from moose_server.accounts.store import PlayerStore
from moose_server.accounts.tokens import Tokens
from moose_server.addresses import networks
from moose_server.arenas.points import ArenaScorer
from moose_server.arenas.requests import ArenaRequests
from moose_server.arenas.runner import Arenas
from moose_server.arenas.store import ArenaStore
from moose_server.deals import handlers as deal_handlers
from moose_server.deals.deals import Deals
from moose_server.deals.seeds import SeedStore
from moose_server.limits.holdings import Holdings
from moose_server.limits.limiter import Limiter
from moose_server.limits.limits import ApiLimit, CodeGuard, Lockout, Sockets
from moose_server.limits.quotas import Quotas
from moose_server.matchmaking.dealer import Lobby
from moose_server.matchmaking.handlers import QueueHandlers
from moose_server.matchmaking.live_games import LiveGames
from moose_server.matchmaking.matchmaker import Matchmaker, MatchOptions
from moose_server.matchmaking.seeks import Seeks
from moose_server.matchmaking.waiting import Waiting
from moose_server.moderation.bans import Bans
from moose_server.moderation.gate import GATE, Gate, gate
from moose_server.moderation.handlers import ReportHandlers
from moose_server.moderation.notices import Notices
from moose_server.moderation.refusals import Refusals
from moose_server.moderation.reports import Reports
from moose_server.moderation.store import ModerationStore
from moose_server.net import api
from moose_server.net import site as web_client
from moose_server.net.api import API, Api
from moose_server.net.heartbeats import Heartbeats
from moose_server.net.router import Router
from moose_server.net.subscription import Subscription
from moose_server.net.ws import DOORS, Doors, websocket
from moose_server.notify import (
    NOTIFY,
    Mailer,
    Notifier,
    NotifyHandlers,
    NotifyStore,
    Pusher,
    Sender,
    load_vapid,
    public_key,
)
from moose_server.notify import add_routes as notify_routes
from moose_server.ops.collector import Collector
from moose_server.ops.heap import Heap
from moose_server.ops.liveness import Liveness
from moose_server.ops.metrics import Exporter, Metrics
from moose_server.ops.observe import Observer, collections_timed, watch_loop
from moose_server.play.copies import Copies
from moose_server.play.games import Games
from moose_server.play.handlers import PlayHandlers
from moose_server.play.hub import Hub
from moose_server.play.results import Results
from moose_server.play.timers import Timers
from moose_server.settings import Settings
from moose_server.social.blocks import Blocks
from moose_server.social.chat import Chat
from moose_server.social.chat_store import ChatStore
from moose_server.social.consent import Consent
from moose_server.social.following import Following
from moose_server.social.follows import Follows
from moose_server.social.handlers import Social
from moose_server.social.presence import Presence
from moose_server.storage.connection import open_redis, with_ca_certs
from moose_server.storage.embedded import EmbeddedRedis
from moose_server.storage.failures import StorageError
from moose_server.storage.gateway import Gateway
from moose_server.storage.keys import CHAT_CHANNEL, MODERATION_CHANNEL, wake_channel
from moose_server.storage.store import Store
from moose_server.tables.handlers import TableHandlers
from moose_server.tables.invites import Invites
from moose_server.tasks import cancel_and_wait

__all__ = ["HUB", "SETTINGS", "STORE", "create_app", "serve"]

log = logging.getLogger("moose_server")

SETTINGS = web.AppKey("settings", Settings)
REDIS_URL = web.AppKey("redis_url", str)
STORE = web.AppKey("store", Store)  # /readyz pings its Redis
HUB = web.AppKey("hub", Hub)  # the fan-out of game events to this instance's sockets
EXPORTER = web.AppKey("exporter", Exporter)  # /metrics
READY_TIMEOUT = 15.0
SHUTDOWN_TIMEOUT = 15.0
# Connections the kernel holds until accepted (capped by net.core.somaxconn): when an
# instance dies its players all come to the others within seconds, more than
# aiohttp's default of 128 would take at once.
LISTEN_BACKLOG = 4096


class Work(Protocol):
    """A loop that takes new work (deadlines, tables): drain stops it."""

    async def run(self) -> None:
        """Work until stopped or cancelled."""

    def stop(self) -> None:
        """Take no new work; the round under way ends."""


# The loops that take new work, each with its task.
WORK = web.AppKey("work", list[tuple[Work, asyncio.Task[None]]])


def create_app(settings: Settings) -> web.Application:
    """A server instance: /ws, /healthz, /readyz, /metrics, the read-only /api/ and the
    browser client at /."""
    app = web.Application(middlewares=[gate])
    app[SETTINGS] = settings
    app.cleanup_ctx.append(_instance)
    app.on_shutdown.append(drain)
    app.router.add_get("/ws", websocket)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    api.add_routes(app)
    web_client.add_routes(app)
    notify_routes(app)
    return app


async def _redis_url(settings: Settings, stack: contextlib.AsyncExitStack) -> str:
    """The configured Redis, or the bundled one started in the data folder."""
    if settings.redis_url:
        log.info("Redis: %s", redact_url(settings.redis_url))
        if settings.appendfsync != "everysec":
            log.warning("appendfsync applies to the embedded Redis only: set it in your Redis")
        return with_ca_certs(settings.redis_url, settings.redis_ca_certs)
    folder = Path(settings.data_dir).expanduser() / "redis"
    embedded = EmbeddedRedis(folder, appendfsync=settings.appendfsync)
    await stack.enter_async_context(embedded)
    log.info(
        "Redis: embedded %s at %s (data in %s, appendfsync %s)",
        embedded.name,
        embedded.url,
        folder,
        settings.appendfsync,
    )
    return embedded.url


async def _instance(app: web.Application) -> AsyncIterator[None]:
    """Open Redis, build the parts and run their loops until the app stops."""
    settings = app[SETTINGS]
    async with contextlib.AsyncExitStack() as stack:
        url = await _redis_url(settings, stack)
        app[REDIS_URL] = url
        redis = await open_redis(url, settings.redis_connections)
        stack.push_async_callback(redis.aclose)
        await _build(app, settings, redis, stack)
        yield


async def _rekey_names(players: PlayerStore) -> None:
    """Key the accounts' names by today's look-alike key, once per key version."""
    for account, holder in await players.rekey_names(name_key, KEY_VERSION):
        log.warning(
            "account %s now looks like account %s: only %s keeps the name for logins",
            account,
            holder,
            holder,
        )


async def _build(
    app: web.Application, settings: Settings, redis: Gateway, stack: contextlib.AsyncExitStack
) -> None:
    """Every part, in the order they depend on each other, each given what it uses and
    whom it tells; then their loops (cancelled and awaited as `stack` closes)."""
    store = app[STORE] = Store(redis, settings.buckets)
    players = PlayerStore(redis)
    await _rekey_names(players)
    secret = settings.token_secret or await store.shared_secret(secrets.token_urlsafe(32))
    matchmaker = Matchmaker(redis, MatchOptions.of(settings))
    metrics = Metrics()
    stack.enter_context(collections_timed(metrics))
    moderation, bans, refusals = await _moderation(redis, settings, store)
    # The move path: the hub tells the games' copies of wake-ups, the metrics how its
    # fan-out went, the waiting players of their messages; the games tell the hub.
    arena_store = ArenaStore(redis)  # arena tournaments
    scorer = ArenaScorer(arena_store, round(settings.arena_rest * 1000))
    results = Results(store, players, settings, scorer)
    copies = Copies(settings)
    seeds = SeedStore(redis, settings.buckets)  # fair deals
    waiting = Waiting(store, matchmaker, seeds)
    hub, channel = _hub(settings, redis, store, copies, metrics, waiting)
    stack.push_async_callback(hub.close)
    observer = Observer(metrics)
    # Who is connected, and which games they have open, on any instance.
    presence = Presence(
        redis,
        settings.instance_id,
        settings.presence_ttl,
        hub.player_names,
        still_here=hub.has_player,
        instance_ttl=settings.instance_ttl,
    )
    notify_store, vapid_key, sender, notifier = await _notices(
        settings, redis, store, hub, channel, stack, presence
    )
    games = Games(
        store,
        settings,
        results,
        copies,
        listeners=[hub, observer],
        timeouts=metrics,
        turns=[notifier],
        own_channel=channel,
        follower=hub,
    )
    stack.push_async_callback(games.close)
    # Every per-client rate limit (limits/rates.py), shared by the instances.
    limiter = Limiter(store, settings)
    # Chat lines go to the hub's sockets.
    chat = Chat(
        ChatStore(redis, settings.buckets, settings.chat_kept, settings.game_ttl * 1000),
        limiter,
        Blocks(redis, settings.blocks_max),
        games,
        matchmaker,
        hub,
    )
    # Deals wait for the seeds of seats that asked for a fair deal.
    deals = Deals(store, seeds, games, settings)
    lobby = Lobby(matchmaker, games, store, settings, results, deals)
    arenas = Arenas(arena_store, games, store, results, settings)
    live = LiveGames(store, matchmaker, settings, lambda: len(hub.players))
    # Who plays, and the doors they come in by.
    hashing = Hashing(settings)
    stack.callback(hashing.close)
    accounts = Accounts(
        players,
        Tokens(secret, settings.token_ttl),
        settings,
        lockout=Lockout(limiter, settings),
        limiter=limiter,
        hashing=hashing,
    )
    boards = Boards(players, settings)
    guard = CodeGuard(limiter)
    reports = Reports(moderation, limiter, players)
    quotas = Quotas(Holdings(redis, settings.buckets), limiter, store, settings)
    # Rematch and challenges; a player's challenge to someone who
    # blocked them is never told to them (social.blocks).
    blocked = chat.blocks.blocked  # async (by, whom) -> bool, as Invites asks
    consent = Consent(redis, settings.guest_ttl)  # who may challenge whom
    invites = Invites(
        redis,
        store,
        games,
        deals,
        results,
        matchmaker,
        presence,
        settings,
        find=reports.find,
        limiter=limiter,
        blocked=blocked,
        room=quotas.player_room,
        consent=consent,
        is_account=players.is_account,
        challenged=notifier.challenged,
    )
    stack.push_async_callback(invites.close)
    arena_requests = ArenaRequests(arena_store, store, players, quotas, limiter, settings)
    # Chat, blocks and follows; follows read the same presence.
    follows = Follows(redis, store, settings, presence)
    social = Social(
        chat,
        chat.blocks,
        follows,
        reports,
        games,
        players,
        guard,
        limiter,
        consent,
        Following(follows, players, games, settings.following_every),
    )
    # Each feature registers its messages and its hooks of a socket's life with the
    # router; a socket knows the router only. Hooks run in the order registered.
    router = Router()
    play = PlayHandlers(store, games, hub, deals, guard, metrics, settings, quotas.seated)
    play.register(router)
    seeks = Seeks(redis, deals, results, settings, quotas.player_room)
    QueueHandlers(matchmaker, waiting, quotas, players, live, hub.has_player, seeks).register(
        router
    )
    presence.register(router)
    tables = TableHandlers(matchmaker, lobby, quotas, guard, invites)
    arrivals: list[Arrival] = [play, presence, tables]  # at hello: games, presence, a table sat at
    Sessions(accounts, store, bans, quotas, metrics.reconnects.inc, arrivals).register(router)
    Profiles(boards, store, play.seat_player, arena_requests.won).register(router)
    tables.register(router)
    deal_handlers.register(router, deals)
    ReportHandlers(reports, store, games, social.quoted, social.whom).register(router)
    social.register(router)
    arena_requests.register(router)
    notify = app[NOTIFY] = NotifyHandlers(notify_store, notifier, limiter, vapid_key)
    notify.register(router)
    sockets = Sockets(settings)
    doors = app[DOORS] = Doors(settings, sockets, router, metrics, refusals)
    app[HUB] = hub
    app[API] = Api(boards, games, store, ApiLimit(limiter, settings))
    app[GATE] = Gate(bans, refusals, sockets.address)
    queues, running = matchmaker.queue_sizes, store.running_games
    readers = networks(settings.metrics_from, "metrics_from")
    app[EXPORTER] = Exporter(
        metrics, doors.open, hub.games, queues, running, readers, sockets.address
    )
    # Moderators' notices act on this instance's games and sockets.
    notices = Notices(bans, games, doors.open, settings.ban_refresh)
    # The one pub/sub connection, built last: each channel to the part that hears it.
    subscription = Subscription(
        redis.pubsub,
        {**hub.channels(), MODERATION_CHANNEL: notices.heard, CHAT_CHANNEL: chat.heard},
        sharded=hub.sharded_channels(),
        subscribed=hub.subscribed,
    )
    # The loops; those that take new work stop first when the instance drains.
    cut_off = "this instance lost Redis"
    liveness = Liveness(
        store, matchmaker, settings, on_presumed_dead=lambda: doors.ask_to_reconnect(cut_off)
    )
    await liveness.beat()
    work: dict[str, Work] = {
        "timers": Timers(store, games, settings, deals, stranded=presence),
        "lobby": lobby,
        "results": results,
        "arenas": arenas,
    }
    loops = {
        "subscription": subscription.run(),
        "liveness": liveness.run(),
        "live": live.run(),
        "loop lag": watch_loop(metrics.loop_lag.observe),
        "heartbeats": Heartbeats(doors.open, settings.heartbeat).run(),
        "notices": notices.run(),
        "refusals": refusals.run(),
        "bot sessions": quotas.run(),
        "presence": presence.run(),
        "arena watchers": arena_requests.run(),
        "chat": chat.run(),
        "deliveries": sender.run(),
    }
    await _run(app, stack, subscription.ready, work, loops)


def _hub(
    settings: Settings,
    redis: Gateway,
    store: Store,
    copies: Copies,
    metrics: Metrics,
    waiting: Waiting,
) -> tuple[Hub, bytes]:
    """The fan-out of game events to this instance's sockets, and its wake-up channel.

    Wake-ups of the games our sockets follow come on our channel, but not those of
    our own commits: the hub is told of them as a listener of `games`. One channel
    per process, should two instances be given one name. Other instances' steps
    come on sharded channels (on a cluster, each on its slot's primary).
    """
    channel = wake_channel(f"{settings.instance_id}.{secrets.token_hex(4)}", steps=True)
    hub = Hub(
        store,
        channel,
        copies.size,
        woken=copies,
        fanout=metrics,
        players=waiting,
        outage_grace=settings.outage_grace,
        instance=settings.instance_id,
        look_ttl=settings.presence_ttl,
    )
    return hub, channel


async def _notices(
    settings: Settings,
    redis: Gateway,
    store: Store,
    hub: Hub,
    channel: bytes,
    stack: contextlib.AsyncExitStack,
    presence: Presence,
) -> tuple[NotifyStore, str, Sender, Notifier]:
    """Notices away from the page: queued as games are written (unless the player has
    the game open, on any instance), sent from the stream by every instance; the store,
    the public key the page subscribes with, the sender and the notifier."""
    notify_store = NotifyStore(redis, per_player=settings.push_per_player)
    vapid = load_vapid(settings.vapid_key, settings.data_dir)
    pusher = await stack.enter_async_context(
        Pusher(vapid, settings.vapid_subject, settings.push_timeout)
    )
    consumer = channel.decode().rsplit(":", 1)[-1]  # this process's own name
    sender = Sender(notify_store, pusher, Mailer(settings), settings, consumer, store)
    notifier = Notifier(
        notify_store,
        hub.watches,
        sender.wake,
        before=settings.notify_before,
        here=hub.has_player,
        looking=presence.looking,
    )
    return notify_store, public_key(vapid), sender, notifier


async def _run(
    app: web.Application,
    stack: contextlib.AsyncExitStack,
    ready: asyncio.Event,
    work: dict[str, Work],
    loops: dict[str, Coroutine[Any, Any, None]],
) -> None:
    """Start every loop (cancelled and awaited as `stack` closes); wait for `ready`."""
    app[WORK] = [(part, asyncio.create_task(part.run(), name=name)) for name, part in work.items()]
    tasks = [asyncio.create_task(loop, name=name) for name, loop in loops.items()]
    tasks += [task for _, task in app[WORK]]
    stack.push_async_callback(cancel_and_wait, tasks)
    async with asyncio.timeout(READY_TIMEOUT):
        await ready.wait()


async def _moderation(
    redis: Gateway, settings: Settings, store: Store
) -> tuple[ModerationStore, Bans, Refusals]:
    """Moderation's records, the bans as read now, and the refusals' notes."""
    kept = settings.moderation_kept
    records = ModerationStore(
        redis,
        audit_kept=kept,
        refusals_kept=kept,
        reports_kept=kept,
        heavy_ttl=settings.heavy_hours * 3600,
    )
    bans = Bans(records, store.now_ms)
    await bans.load()
    return records, bans, Refusals(records, bans.now)


async def drain(app: web.Application) -> None:
    """Stop taking players and new work; ask every socket to reconnect elsewhere (1012).

    /readyz and new sockets answer 503 from here on; deadlines and matchmaking
    are left to the other instances (the poll or round under way ends first).
    """
    doors = app.get(DOORS)
    if doors is None or doors.draining:
        return
    doors.draining = True
    work = app.get(WORK, [])
    for part, _ in work:
        part.stop()
    doors.ask_to_reconnect("server restarting")
    loop = asyncio.get_running_loop()
    until = loop.time() + app[SETTINGS].drain_grace
    tasks = {task for _, task in work}
    while (doors.open or any(not t.done() for t in tasks)) and loop.time() < until:
        await asyncio.sleep(0.05)


async def healthz(request: web.Request) -> web.Response:
    """Alive: the process answers."""
    return web.json_response({"ok": True})


async def readyz(request: web.Request) -> web.Response:
    """Ready: Redis answers and we are not draining.

    The answer says ready or not, nothing more: it may be reached from outside, and
    Redis' address and errors are for the operator, who finds them in the log.
    """
    doors, store = request.app.get(DOORS), request.app.get(STORE)
    if doors is None or store is None or doors.draining:
        return web.json_response({"ready": False}, status=503)
    try:
        await store.ping()
    except (StorageError, OSError) as exc:
        log.warning("not ready: Redis does not answer: %s", exc, extra={"event": "not_ready"})
        return web.json_response({"ready": False}, status=503)
    return web.json_response({"ready": True})


async def metrics(request: web.Request) -> web.StreamResponse:
    """Prometheus metrics of this instance (text format)."""
    exporter = request.app.get(EXPORTER)
    if exporter is None:
        raise web.HTTPServiceUnavailable(text="starting")
    return await exporter.scrape(request)


async def serve(settings: Settings) -> None:
    """Run one instance until SIGINT or SIGTERM, then drain and shut down cleanly."""
    app = create_app(settings)
    # keepalive_timeout also bounds how long a new connection may take to send its
    # first request's headers (aiohttp closes it then), so slowloris gets nowhere.
    runner = web.AppRunner(
        app,
        handle_signals=False,
        shutdown_timeout=settings.drain_grace,
        keepalive_timeout=settings.header_timeout,
    )
    await runner.setup()
    collector = None
    try:
        site = web.TCPSite(runner, settings.host, settings.port, backlog=LISTEN_BACKLOG)
        await site.start()
        clock = Collector(settings.gc_reclaim, heap=Heap.open(settings.malloc_trim))
        collector = asyncio.create_task(clock.run(), name="collector")
        log.info(
            "Moose House %s listening on http://%s:%d (WebSocket at /ws)",
            settings.instance_id,
            settings.host,
            settings.port,
        )
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
