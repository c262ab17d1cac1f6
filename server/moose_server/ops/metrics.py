"""Prometheus metrics of one instance, served at GET /metrics.

Each app has a registry of its own, not prometheus-client's global one, so that
several apps in one process (the tests) never collide. Counters and histograms
are bumped where things happen, through label children bound once here, so a
move costs a few `inc`/`observe` calls and nothing else; the gauges that need
Redis (queue sizes, running games) are read when /metrics is scraped.

Every family, with its HELP text, is in `Metrics.__init__`; deploy/README.md
lists them for operators.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.aiohttp import make_aiohttp_handler
from redis.exceptions import RedisError

from moose.protocol import ERROR_CODES
from moose_server.storage.store import Entry

# What a scrape reads from Redis: queue sizes by max_players, and running games.
GaugeReader = Callable[[], Awaitable[tuple[dict[str, int], int]]]

__all__ = ["Metrics"]

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
        self.sockets = Gauge("moose_sockets", "WebSocket connections open on this instance.",
                             registry=r)  # fmt: skip
        self.games_followed = Gauge(
            "moose_games_followed",
            "Games this instance's sockets follow (as a seat or a spectator).", registry=r,
        )  # fmt: skip
        self.games_running = Gauge(
            "moose_games_running",
            "Unfinished games of the whole service: games with a deadline in Redis, read "
            "at scrape time. Every instance reports the same number: use max(), not sum().",
            registry=r,
        )  # fmt: skip
        self.queue = Gauge(
            "moose_queue_players",
            "Players waiting in the public queue (whole service), by the max_players they "
            "asked for; read from Redis at scrape time.", ["max_players"], registry=r,
        )  # fmt: skip
        self.redis_up = Gauge(
            "moose_redis_up", "1 if Redis answered this scrape's reads, else 0.", registry=r
        )
        self.moves = Counter(
            "moose_moves",
            "Moves committed by this instance: players' moves and the server's (bots, "
            "forced passes, timeouts). Moves per second: rate(moose_moves_total[1m]).",
            registry=r,
        )  # fmt: skip
        self.auto_moves = Counter(
            "moose_auto_moves",
            "Moves this instance made for a seat, by kind: bot (a bot or an away seat), "
            "forced (pass was the only move), timeout (the seat's time ran out).",
            ["kind"], registry=r,
        )  # fmt: skip
        self.timeouts = Counter(
            "moose_timeouts",
            "Deadlines this instance fired that played a move: a seat's time ran out, or "
            "the safety deadline of a seat the server plays at once.", registry=r,
        )  # fmt: skip
        self.deadline_delay = Histogram(
            "moose_deadline_delay_seconds",
            "How late a deadline fired: Redis time of its commit minus the deadline.",
            buckets=DELAY_BUCKETS, registry=r,
        )  # fmt: skip
        self.move_latency = Histogram(
            "moose_move_latency_seconds",
            "Moves on this instance, by stage: commit = from receiving a player's move to "
            "its commit in Redis; fanout = from the commit of any move to its events "
            "queued on every local socket following the game.",
            ["stage"], buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.reconnects = Counter(
            "moose_reconnects", "hello messages with a session token (a resumed session).",
            registry=r,
        )  # fmt: skip
        self.errors = Counter(
            "moose_errors", "error messages sent to clients, by code (PROTOCOL.md).", ["code"],
            registry=r,
        )  # fmt: skip
        self.refused = Counter(
            "moose_sockets_refused",
            "WebSocket handshakes refused by a cap: full (the instance has "
            "MOOSE_MAX_SOCKETS open: 503) or address (that address has "
            "MOOSE_MAX_SOCKETS_PER_ADDRESS open here: 429).", ["reason"], registry=r,
        )  # fmt: skip
        self.loop_lag = Histogram(
            "moose_loop_lag_seconds",
            "How late a timer set every 50 ms ran: how long the event loop was busy "
            "with other work at that moment (long callbacks, collections, bursts). "
            "Every move waits that long too.", buckets=LAG_BUCKETS, registry=r,
        )  # fmt: skip
        self.gc_pause = Histogram(
            "moose_gc_pause_seconds",
            "Garbage collections of this process, by generation (0 young, 2 full): "
            "how long each one stopped everything.", ["generation"], buckets=LAG_BUCKETS,
            registry=r,
        )  # fmt: skip
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
        self._read: GaugeReader | None = None
        self._view = make_aiohttp_handler(self.registry, disable_compression=True)

    def bind(
        self, sockets: Callable[[], int], games_followed: Callable[[], int], read: GaugeReader
    ) -> None:
        """Read the local gauges from these functions, and the service-wide ones with `read`."""
        self._read = read
        self.sockets.set_function(sockets)
        self.games_followed.set_function(games_followed)

    # -- the hot path -------------------------------------------------------------

    def committed(
        self, game: str, entries: Sequence[Entry], started: float, local: bool, waiting: bool
    ) -> None:
        """One commit of this instance: count its moves; time its fan-out.

        `started`: perf_counter() when the commit came back; `local`: the game has
        sockets here; `waiting`: some of them did not get the events at once (the
        wake-up will bring them: timed by `fanned_out`).
        """
        for entry in entries:
            event = entry.event
            if event["kind"] == "move":
                self.moves.inc()
                child = self._auto.get(event["auto"])
                if child is not None:
                    child.inc()
        if waiting and entries and game not in self._pending:
            if len(self._pending) >= PENDING_MAX:
                self._pending.clear()
            self._pending[game] = (entries[0].seq, started)
        elif local and entries:
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

    # -- scraping -----------------------------------------------------------------

    async def refresh(self) -> None:
        """Read the service-wide gauges from Redis; on trouble keep the last values."""
        if self._read is None:
            return
        try:
            async with asyncio.timeout(SCRAPE_TIMEOUT):
                sizes, running = await self._read()
        except (RedisError, OSError, TimeoutError) as exc:
            self.redis_up.set(0)
            log.warning("metrics: cannot read Redis: %s", exc, extra={"event": "redis_error"})
            return
        for size, count in sizes.items():
            self.queue.labels(size).set(count)
        self.games_running.set(running)
        self.redis_up.set(1)

    async def scrape(self, request: web.Request) -> web.StreamResponse:
        """The answer to GET /metrics: fresh gauges, then every family as text."""
        await self.refresh()
        return await self._view(request)
