"""Prometheus metrics of one instance, served at GET /metrics.

Each app has a registry of its own, not prometheus-client's global one, so that
several apps in one process (the tests) never collide. Counters and histograms
are bumped where things happen, through label children bound once here, so a
move costs a few `inc`/`observe` calls and nothing else. The gauges are read
when /metrics is scraped (`Exporter`, built last with what it reads): the local
ones from the sockets and the hub, those that need Redis from Redis.

Every family, with its HELP text, is in `Metrics.__init__`; deploy/README.md
lists them for operators. They are the operator's: only a client in
`metrics_from` (MOOSE_METRICS_FROM, loopback by default; behind a trusted proxy
the client it names) reads them, anyone else gets 404 as for a path not served.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence, Sized

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.aiohttp import make_aiohttp_handler

from moose.protocol import ERROR_CODES
from moose_server.addresses import Network, within
from moose_server.storage.failures import StorageError
from moose_server.storage.store import Entry

__all__ = ["Exporter", "Metrics"]

log = logging.getLogger(__name__)

AUTO_KINDS = ("bot", "forced", "timeout")
QUEUE_SIZES = ("2", "3", "4", "5", "6")
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
LAG_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1)
DELAY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
PENDING_MAX = 4096  # commits awaiting their fan-out, at most (more: a wake-up was lost)
SCRAPE_TIMEOUT = 2.0  # for the Redis reads of one scrape


class Metrics:
    """The metric families of one instance, in their own registry."""

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.sockets = Gauge(
            "moose_sockets", "WebSocket connections open on this instance.", registry=r
        )
        self.games_followed = Gauge(
            "moose_games_followed",
            "Games this instance's sockets follow (as a seat or a spectator).",
            registry=r,
        )
        self.games_running = Gauge(
            "moose_games_running",
            "Unfinished games of the whole service: games with a deadline in Redis, read "
            "at scrape time. Every instance reports the same number: use max(), not sum().",
            registry=r,
        )
        self.queue = Gauge(
            "moose_queue_players",
            "Players waiting in the public queue (whole service), by the max_players they "
            "asked for; read from Redis at scrape time.",
            ["max_players"],
            registry=r,
        )
        self.redis_up = Gauge(
            "moose_redis_up", "1 if Redis answered this scrape's reads, else 0.", registry=r
        )
        self.moves = Counter(
            "moose_moves",
            "Moves committed by this instance: players' moves and the server's (bots, "
            "forced passes, timeouts). Moves per second: rate(moose_moves_total[1m]).",
            registry=r,
        )
        self.auto_moves = Counter(
            "moose_auto_moves",
            "Moves this instance made for a seat, by kind: bot (a bot or an away seat), "
            "forced (pass was the only move), timeout (the seat's time ran out).",
            ["kind"],
            registry=r,
        )
        self.timeouts = Counter(
            "moose_timeouts",
            "Deadlines this instance fired that played a move: a seat's time ran out, or "
            "the safety deadline of a seat the server plays at once.",
            registry=r,
        )
        self.deadline_delay = Histogram(
            "moose_deadline_delay_seconds",
            "How late a deadline fired: Redis time of its commit minus the deadline.",
            buckets=DELAY_BUCKETS,
            registry=r,
        )
        self.move_latency = Histogram(
            "moose_move_latency_seconds",
            "Moves on this instance, by stage: commit = from receiving a player's move to "
            "its commit in Redis; fanout = from the commit of any move to its events "
            "queued on every local socket following the game.",
            ["stage"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.reconnects = Counter(
            "moose_reconnects",
            "hello messages with a session token (a resumed session).",
            registry=r,
        )
        self.errors = Counter(
            "moose_errors",
            "error messages sent to clients, by code (PROTOCOL.md).",
            ["code"],
            registry=r,
        )
        self.refused = Counter(
            "moose_sockets_refused",
            "WebSocket handshakes refused by a cap: full (the instance has "
            "MOOSE_MAX_SOCKETS open: 503) or address (that address has "
            "MOOSE_MAX_SOCKETS_PER_ADDRESS open here: 429).",
            ["reason"],
            registry=r,
        )
        self.loop_lag = Histogram(
            "moose_loop_lag_seconds",
            "How late a timer set every 50 ms ran: how long the event loop was busy "
            "with other work at that moment (long callbacks, collections, bursts). "
            "Every move waits that long too.",
            buckets=LAG_BUCKETS,
            registry=r,
        )
        self.gc_pause = Histogram(
            "moose_gc_pause_seconds",
            "Garbage collections of this process, by generation (0 young, 2 full): "
            "how long each one stopped everything.",
            ["generation"],
            buckets=LAG_BUCKETS,
            registry=r,
        )
        # Children bound once: the hot path never looks a label up.
        self._auto = {kind: self.auto_moves.labels(kind) for kind in AUTO_KINDS}
        self._errors = {code: self.errors.labels(code) for code in sorted(ERROR_CODES)}
        self.commit_latency = self.move_latency.labels("commit")
        self._fanout = self.move_latency.labels("fanout")
        self.gc_pauses = [self.gc_pause.labels(str(g)) for g in range(3)]
        for size in QUEUE_SIZES:
            self.queue.labels(size)
        for reason in ("full", "address"):
            self.refused.labels(reason)
        self._pending: dict[str, tuple[int, float]] = {}  # game -> (first seq, commit time)

    # -- the hot path -------------------------------------------------------------

    def committed(self, entries: Sequence[Entry]) -> None:
        """One commit of this instance: count its moves (the observer tells)."""
        for entry in entries:
            event = entry.event
            if event["kind"] == "move":
                self.moves.inc()
                child = self._auto.get(event["auto"])
                if child is not None:
                    child.inc()

    def delivered(self, game: str, seq: int, started: float, waiting: bool) -> None:
        """Our commit of `game` from `seq` on went to the local sockets (the hub tells):
        time its fan-out now, or, when some sockets wait for its wake-up, then.

        `started`: perf_counter() when the commit came back.
        """
        if waiting and game not in self._pending:
            if len(self._pending) >= PENDING_MAX:
                self._pending.clear()
            self._pending[game] = (seq, started)
        else:
            self._fanout.observe(time.perf_counter() - started)

    def fanned_out(self, game: str, seq: int) -> None:
        """The hub has handled the wake-up of `game` up to `seq`."""
        pending = self._pending.get(game)
        if pending is not None and pending[0] <= seq:
            del self._pending[game]
            self._fanout.observe(time.perf_counter() - pending[1])

    def fired(self, late_ms: int) -> None:
        """A deadline fired and played a move, `late_ms` after it was due (Redis time)."""
        self.timeouts.inc()
        self.deadline_delay.observe(max(0, late_ms) / 1000)

    def error(self, code: str) -> None:
        """An error message was sent."""
        child = self._errors.get(code)
        (child if child is not None else self.errors.labels(code)).inc()


class Exporter:
    """GET /metrics: the gauges read fresh, then every family as text."""

    def __init__(
        self,
        metrics: Metrics,
        sockets: Sized,
        games_followed: Sized,
        queue_sizes: Callable[[], Awaitable[dict[str, int]]],
        running_games: Callable[[], Awaitable[int]],
        readers: tuple[Network, ...],
        client: Callable[[str | None, str | None], str],
    ) -> None:
        self.metrics = metrics
        self.readers = readers  # the clients that may read the metrics
        self.client = client  # who a request's client is (limits.Sockets.address)
        self.sockets = sockets  # this instance's open sockets
        self.games_followed = games_followed  # the games they follow (the hub's)
        self.queue_sizes = queue_sizes  # Redis: the queue by max_players
        self.running_games = running_games  # Redis: the unfinished games
        self._view = make_aiohttp_handler(metrics.registry, disable_compression=True)

    async def refresh(self) -> None:
        """Read the gauges; on Redis trouble keep the last values of those it holds."""
        m = self.metrics
        m.sockets.set(len(self.sockets))
        m.games_followed.set(len(self.games_followed))
        try:
            async with asyncio.timeout(SCRAPE_TIMEOUT):
                sizes, running = await self.queue_sizes(), await self.running_games()
        except (StorageError, OSError, TimeoutError) as exc:
            m.redis_up.set(0)
            log.warning("metrics: cannot read Redis: %s", exc, extra={"event": "redis_error"})
            return
        for size, count in sizes.items():
            m.queue.labels(size).set(count)
        m.games_running.set(running)
        m.redis_up.set(1)

    async def scrape(self, request: web.Request) -> web.StreamResponse:
        """The answer to GET /metrics: fresh gauges, then every family as text; 404 to a
        client outside `readers` (the operator's networks, MOOSE_METRICS_FROM)."""
        client = self.client(request.remote, request.headers.get("X-Forwarded-For"))
        if not within(client, self.readers):
            raise web.HTTPNotFound(text="not found")  # as for any path that is not served
        await self.refresh()
        return await self._view(request)
