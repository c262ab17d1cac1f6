"""`moose loadtest` phases; `run(options, ui)` returns the report (what `--json` prints).

Phases, in order, each with its own warm-up and measured window:

1. socket ceiling: the same players against `ceilings.echo_app`;
2. storage ceiling: the server's own `moose_server.play.ceiling` on its Redis
   (a process of its own, run only where the server package is installed);
3. games: the players against the server, through its public queue;
4. matchmaking: N players queue at once, until every one is seated;
5. connections: N idle sessions held open: server memory per connection, and
   the server's CPU and loop lag while they are held (their upkeep).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import ipaddress
import json
import math
import random
import subprocess
import sys
import time
from typing import Any
from urllib.parse import urlsplit

from moose.redact import redact_url
from moose_loadtest.cluster import SpawnedCluster
from moose_loadtest.crowd import SOCKETS_PER_ADDRESS, Job, raise_nofile
from moose_loadtest.histograms import histogram_delta, metrics_url, scrape
from moose_loadtest.lobby_phase import lobby_phase
from moose_loadtest.probes.memory import game_memory
from moose_loadtest.probes.urls import is_cluster
from moose_loadtest.probes.window import NodesProbe, RedisProbe
from moose_loadtest.processes import ProcessProbe, free_port, machine, stop_process, wait_ready
from moose_loadtest.run import Options, Ui, in_thread, percentiles, run_workers, summary
from moose_loadtest.scale import Deployment, on_cluster, scale_out
from moose_loadtest.spawned import Spawned
from moose_loadtest.storm import storm_phase

__all__ = ["run"]

LOBBY_SOCKETS = 1 << 20  # raise the open-file limit as far as it goes
PORTS_PER_ADDRESS = 20_000  # of the ~28,000 ephemeral ports of one source address


def _job(opts: Options, mode: str, url: str, players: int, **extra: Any) -> Job:
    return Job(
        mode=mode,
        url=url,
        players=players,
        table=opts.table,
        bot=opts.bot,
        warmup=opts.warmup,
        duration=opts.duration,
        drain=opts.drain,
        max_games=opts.max_games,
        source_ips=_source_ips(opts, players, url),
        **extra,
    )


async def games_phase(
    opts: Options,
    url: str,
    pids: list[int],
    redis_url: str | None,
    ui: Ui,
    spread: tuple[str, ...] = (),
    label: str = "games",
) -> dict[str, Any]:
    """The main phase: real games through the public queue, probes on the window.

    `pids`: the server processes whose CPU and memory are summed; `spread`: the
    instances the players are spread over, round-robin (none: all on `url`).
    """
    notes: dict[str, Any] = {}

    async def window(start: float, workers: list[int]) -> None:
        servers = [ProcessProbe(pid) for pid in pids]
        gens = [ProcessProbe(w) for w in workers]
        redis = NodesProbe(redis_url) if redis_url else None
        try:
            if redis and opts.monitor > 0 and opts.warmup > opts.monitor:
                await asyncio.sleep(max(0.0, start + opts.warmup - opts.monitor - time.monotonic()))
                notes["round_trips"] = await redis.round_trips(opts.monitor)
            await asyncio.sleep(max(0.0, start + opts.warmup - time.monotonic()))
            for probe in (*servers, *gens):
                probe.start()
            if redis:
                await redis.start()
            end = start + opts.warmup + opts.duration
            while time.monotonic() < end:
                await asyncio.sleep(min(0.5, max(0.0, end - time.monotonic())))
                for server in servers:
                    server.rss()
            if servers:
                notes["server"] = _servers(servers)
            notes["load_generator"] = {"cpu_percent": round(sum(g.stop() for g in gens), 1)}
            if redis:
                await redis.stop()
                window = (redis.commands, redis.cpu_percent, redis.nodes, redis.reads)
                notes["redis_window"] = window
        finally:
            if redis:
                await redis.aclose()

    job = _job(
        opts,
        "games",
        url,
        opts.games * opts.table,
        rate=opts.rate,
        spread=spread,
        redis_url=redis_url if spread else None,  # ratings that seat a table over instances
    )
    merged = await run_workers(job, opts.procs, ui, label, window)
    out = summary(merged, opts.duration)
    # The progress line ends on the window's figure, the one the table shows.
    ui.update(
        opts.warmup + opts.duration,
        f"{out['moves_per_second']:,.0f} moves/s in the window, {out['games']} games",
    )
    out["server"] = notes.get("server")
    out["load_generator"] = notes.get("load_generator")
    if spread:
        out["instances"] = {
            "spread_over": len(spread),
            "games_seated": merged["seated_games"],
            "games_on_several": merged["spread_games"],
        }
    if "redis_window" in notes:
        commands, cpu, nodes, reads = notes["redis_window"]
        moves = max(1, merged["moves"])
        out["redis"] = {
            "commands_per_move": round(sum(commands.values()) / moves, 2),
            "reads_per_move": round(reads / moves, 2),
            "by_command_per_move": {k: round(v / moves, 3) for k, v in commands.most_common()},
            "cpu_percent": round(cpu, 1),
            "round_trips": notes.get("round_trips"),
        }
        if len(nodes) > 1:  # a cluster: each node's share
            out["redis"]["nodes"] = [
                {"commands_per_move": round(sum(c.values()) / moves, 2), "cpu_percent": round(u, 1)}
                for c, u in nodes
            ]
    if redis_url and out.get("redis") and not is_cluster(redis_url):
        # Games just finished, still in their grace: the largest a game gets in Redis.
        probe = RedisProbe(redis_url)
        try:
            out["redis"]["memory_finished_in_grace"] = await game_memory(probe, merged["game_ids"])
        finally:
            await probe.aclose()
    return out


def _servers(probes: list[ProcessProbe]) -> dict[str, Any]:
    """The window's figures of the server processes, summed over the instances."""
    cpu = sum(p.stop() for p in probes)
    return {
        "cpu_percent": round(cpu, 1),
        "rss_mb": round(sum(p.rss() for p in probes) / 2**20, 1),
        "rss_peak_mb": round(sum(p.peak_rss for p in probes) / 2**20, 1),
        "instances": len(probes),
    }


async def socket_ceiling(opts: Options, ui: Ui) -> dict[str, Any]:
    """The same players against a bare aiohttp echo server (its own process)."""
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "moose_loadtest.ceilings",
        "echo",
        str(port),
        str(opts.table),
    ]
    proc = subprocess.Popen(cmd)
    cpu: dict[str, float] = {}
    try:
        await in_thread(wait_ready, f"http://127.0.0.1:{port}/readyz", proc)
        probe = ProcessProbe(proc.pid)

        async def window(start: float, workers: list[int]) -> None:
            await asyncio.sleep(max(0.0, start + opts.warmup - time.monotonic()))
            probe.start()
            await asyncio.sleep(max(0.0, start + opts.warmup + opts.duration - time.monotonic()))
            cpu["server"] = round(probe.stop(), 1)

        job = _job(opts, "games", f"ws://127.0.0.1:{port}/ws", opts.games * opts.table)
        merged = await run_workers(job, opts.procs, ui, "socket ceiling", window)
    finally:
        await in_thread(stop_process, proc)
    out = summary(merged, opts.duration)
    # The progress line ends on the window's figure, the one the table shows.
    ui.update(
        opts.warmup + opts.duration,
        f"{out['moves_per_second']:,.0f} moves/s in the window, {out['games']} games",
    )
    return {
        "moves_per_second": out["moves_per_second"],
        "move_latency_ms": out["move_latency_ms"],
        "errors": out["errors"],
        "server_cpu_percent": cpu.get("server"),
    }


# The storage ceiling runs the server's commit script with the server's payloads: a
# measurement from inside, kept in the server package and run as a program, so that
# the load test imports nothing of the server.
STORAGE_CEILING = "moose_server.play.ceiling"


def has_storage_ceiling() -> bool:
    """Whether the server package, which measures the storage ceiling, is installed."""
    return importlib.util.find_spec("moose_server") is not None


async def storage_ceiling(opts: Options, redis_url: str, ui: Ui) -> dict[str, Any]:
    """A bare redis-py client doing the server's commands per move (its own process)."""
    ui.phase("storage ceiling", opts.warmup + opts.duration)
    cmd = [
        sys.executable,
        "-m",
        STORAGE_CEILING,
        redis_url,
        str(opts.games),
        str(opts.warmup),
        str(opts.duration),
        str(opts.table),
    ]
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE)
    t0 = time.monotonic()
    waiter = asyncio.create_task(proc.communicate())
    while not waiter.done():
        await asyncio.wait([waiter], timeout=0.25)
        ui.update(min(opts.warmup + opts.duration, time.monotonic() - t0))
        if time.monotonic() - t0 > opts.warmup + opts.duration + 60:
            proc.kill()
    out, _ = await waiter
    if proc.returncode != 0:
        raise RuntimeError("the storage ceiling failed (see above)")
    return json.loads(out.decode().strip().splitlines()[-1])  # type: ignore[no-any-return]


async def matchmaking_phase(
    opts: Options, url: str, redis_url: str | None, ui: Ui
) -> dict[str, Any]:
    """N players, connected beforehand, all queue at once: time until every one is seated.

    With the server's Redis known, each player first gets a rating drawn evenly
    from `players.SEED_MU`: the report compares the rating spread of the tables
    formed with that of the same players seated at random.
    """
    n = opts.matchmaking - opts.matchmaking % opts.table  # a partial table would wait
    job = Job(
        mode="matchmaking",
        url=url,
        players=n,
        table=opts.table,
        warmup=0,
        duration=max(30.0, opts.duration),
        source_ips=_source_ips(opts, n, url),
        redis_url=redis_url,
    )

    async def window(start: float, workers: list[int]) -> None:
        return None

    merged = await run_workers(job, opts.procs, ui, "matchmaking", window)
    waits = merged["match_ms"]
    return {
        "players": n,
        "seated": len(waits),
        "all_seated_s": round(max(waits) / 1000, 3) if len(waits) == n else None,
        "wait_ms": percentiles(waits),
        "errors": merged["errors"],
        "rating_spread": rating_spread(list(merged["tables"].values())),
    }


def rating_spread(tables: list[list[int]], shuffles: int = 50) -> dict[str, Any] | None:
    """The mean spread (highest - lowest rating) of the tables formed, and of the same
    players seated at random at tables of the same sizes (the mean of `shuffles` draws)."""
    tables = [t for t in tables if len(t) >= 2]
    if not tables:
        return None
    rng = random.Random(0)
    everyone = [r for t in tables for r in t]

    def mean_spread(ts: list[list[int]]) -> float:
        return sum(max(t) - min(t) for t in ts) / len(ts)

    random_means = []
    for _ in range(shuffles):
        rng.shuffle(everyone)
        cut, at = [], 0
        for t in tables:
            cut.append(everyone[at : at + len(t)])
            at += len(t)
        random_means.append(mean_spread(cut))
    return {
        "tables": len(tables),
        "mean": round(mean_spread(tables), 1),
        "random_mean": round(sum(random_means) / shuffles, 1),
        "players_range": [min(everyone), max(everyone)],
    }


async def connections_phase(opts: Options, url: str, pid: int | None, ui: Ui) -> dict[str, Any]:
    """N idle sessions (hello said) held open: server memory per connection."""
    n = opts.connections
    probe = ProcessProbe(pid) if pid else None
    base = probe.rss() if probe else 0
    seen: dict[str, int] = {}
    job = Job(
        mode="connections",
        url=url,
        players=n,
        table=opts.table,
        warmup=0,
        duration=opts.hold,
        hold=opts.hold,
        source_ips=_source_ips(opts, n, url),
    )

    held: dict[str, Any] = {}

    async def window(start: float, workers: list[int]) -> None:
        # What idle sockets cost: memory, and the CPU of their upkeep (heartbeats)
        # over the hold, after the first second (connecting is over by then).
        await asyncio.sleep(max(0.0, start + min(1.0, opts.hold / 2) - time.monotonic()))
        before = await in_thread(scrape, metrics_url(url))
        if probe:
            seen["rss"] = probe.rss()
            probe.start()
        await asyncio.sleep(max(0.0, start + opts.hold - 0.2 - time.monotonic()))
        if probe:
            held["server_cpu_percent"] = round(probe.stop(), 2)
        after = await in_thread(scrape, metrics_url(url))
        held["server_histograms"] = histogram_delta(before, after)

    merged = await run_workers(job, opts.procs, ui, "connections", window)
    out: dict[str, Any] = {
        "wanted": n,
        "connected": merged["connected"],
        "connect_ms": percentiles(merged["connect_ms"]),
        "errors": merged["errors"],
        **held,
    }
    if probe and "rss" in seen:
        delta = seen["rss"] - base
        out["server_rss_mb"] = round(seen["rss"] / 2**20, 1)
        out["server_rss_before_mb"] = round(base / 2**20, 1)
        out["bytes_per_connection"] = round(delta / max(1, merged["connected"]))
        out["server_nofile"] = probe.nofile()
    return out


def _source_ips(opts: Options, sockets: int, url: str) -> int:
    """Loopback addresses per worker: few enough sockets on each for a server's default
    cap per address (MOOSE_MAX_SOCKETS_PER_ADDRESS) and for its ephemeral ports. A
    server elsewhere is reached from the machine's own address (0)."""
    if opts.source_ips:
        return opts.source_ips
    if not is_loopback(url):
        return 0
    per_address = min(PORTS_PER_ADDRESS, SOCKETS_PER_ADDRESS)
    return max(1, math.ceil(sockets / max(1, opts.procs) / per_address))


def is_loopback(url: str) -> bool:
    """Whether the URL's host is this machine (127.0.0.0/8, ::1, localhost)."""
    host = urlsplit(url).hostname or ""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _ratio(ours: float, ceiling: dict[str, Any] | None) -> float | None:
    if not ceiling or not ceiling.get("moves_per_second"):
        return None
    return round(ours / float(ceiling["moves_per_second"]), 3)


def cpu_per_move(report: dict[str, Any], socket: dict[str, Any]) -> dict[str, Any]:
    """The socket ceiling's server CPU per move (ms) and ours over it (the ceiling's ratio).

    CPU per move is a process's share of a core over the moves a second it made
    in the same window: it holds whatever the load generator reaches, which a
    moves/s ratio does not."""

    def per_move(cpu: float | None, rate: float) -> float | None:
        return None if not cpu or not rate else 10 * cpu / rate  # % of a core -> ms a move

    ceiling = per_move(socket.get("server_cpu_percent"), socket["moves_per_second"])
    ours = per_move((report.get("server") or {}).get("cpu_percent"), report["moves_per_second"])
    ratio = None if ceiling is None or ours is None else round(ours / ceiling, 2)
    return {
        "cpu_ms_per_move": None if ceiling is None else round(ceiling, 4),
        "server_cpu_ms_per_move": None if ours is None else round(ours, 4),
        "cpu_per_move_ratio": ratio,
    }


async def run(opts: Options, ui: Ui) -> dict[str, Any]:
    """Every phase asked for; the report as one plain dict."""
    sockets = max(opts.games * opts.table, opts.matchmaking, opts.connections, opts.storm)
    wanted = 2 * sockets + 1024
    if opts.lobby:
        # As many as the limits allow (lobby.capacity() says how many); only the
        # sizes asked for by number must fit.
        wanted = LOBBY_SOCKETS
        sockets = max((int(w) for w in opts.lobby.split(",") if w.strip().isdigit()), default=0)
    # Raised here so that the server we spawn and our workers inherit it.
    soft, hard = raise_nofile(wanted)
    # A URL's password (a --redis or --redis-url of the run) stays out of the report.
    options = {k: _redacted(v) for k, v in vars(opts).items()}
    report: dict[str, Any] = {
        "machine": machine(),
        "options": options,
        "nofile": {"soft": soft, "hard": hard},
    }
    if soft < sockets + 256:
        report["warnings"] = [f"open-file hard limit {hard} is too low for {sockets} sockets"]
    with contextlib.ExitStack() as stack:
        urls, pids, redis_url = _servers_of(opts, stack, ui)
        cluster = _cluster_of(opts, stack, ui) if opts.cluster else None
        if cluster:
            report["cluster"] = {"urls": cluster[0], "server_pids": cluster[1]}
            report["cluster"]["redis_url"] = redact_url(cluster[2] or "")
        url, pid = urls[0], (pids[0] if pids else None)
        if not is_loopback(url) and sockets / max(1, opts.procs) > SOCKETS_PER_ADDRESS:
            report.setdefault("warnings", []).append(
                f"a server with default limits takes {SOCKETS_PER_ADDRESS} sockets per client "
                "address: raise MOOSE_MAX_SOCKETS_PER_ADDRESS there, or load it from more machines"
            )
        if len(pids) < len(urls):
            report.setdefault("warnings", []).append(
                "server CPU and memory are of the --server-pid processes only"
            )
        report["url"], report["server_pid"] = redact_url(url), pid
        report["urls"], report["server_pids"] = [redact_url(u) for u in urls], pids
        report["redis_url"] = redact_url(redis_url) if redis_url else redis_url
        if opts.lobby:
            sources = functools.partial(_source_ips, opts, url=url)
            report["lobby"] = await lobby_phase(opts, url, pid, redis_url, ui, sources)
        elif opts.storm:
            ips = _source_ips(opts, opts.storm, url)
            report["storm"] = await storm_phase(opts, urls, pids, redis_url, ui, ips)
        elif opts.games > 0:
            deployments = (urls, pids, redis_url), cluster
            report.update(await _games_and_ceilings(opts, deployments, ui, report))
        if opts.matchmaking > 0:
            report["matchmaking"] = await matchmaking_phase(opts, url, redis_url, ui)
        if opts.connections > 0:
            report["connections"] = await connections_phase(opts, url, pid, ui)
    return report


def _servers_of(
    opts: Options, stack: contextlib.ExitStack, ui: Ui
) -> tuple[list[str], list[int], str | None]:
    """The instances' URLs and pids, and the Redis URL: spawned (each instance after
    the first over the first one's Redis) or as given."""
    urls, pids, redis_url = list(opts.url), list(opts.server_pid), opts.redis_url
    if opts.spawn:
        ui.phase("starting Redis and moose serve", opts.instances)
        first = stack.enter_context(Spawned(opts.redis))
        spawned = [first]
        for _ in range(1, opts.instances):
            spawned.append(stack.enter_context(Spawned(first.redis_url)))
            ui.update(len(spawned))
        urls, pids = [s.url for s in spawned], [s.pid for s in spawned]
        redis_url = redis_url or first.redis_url
    if not urls:
        raise ValueError("give --url or --spawn")
    return urls, pids, redis_url


def _cluster_of(opts: Options, stack: contextlib.ExitStack, ui: Ui) -> Deployment:
    """A Redis Cluster of our own and --instances `moose serve` over it."""
    ui.phase("starting a Redis Cluster and moose serve", opts.instances)
    nodes = stack.enter_context(SpawnedCluster())
    spawned = [stack.enter_context(Spawned(nodes.url)) for _ in range(opts.instances)]
    return [s.url for s in spawned], [s.pid for s in spawned], nodes.url


async def _games_and_ceilings(
    opts: Options,
    deployments: tuple[Deployment, Deployment | None],
    ui: Ui,
    report: dict[str, Any],
) -> dict[str, Any]:
    """The ceilings, then the games phase (with several instances: `scale.scale_out`;
    with a cluster: `scale.on_cluster`)."""
    (urls, pids, redis_url), cluster = deployments
    ceilings: dict[str, Any] = {"socket": None, "storage": None}
    if opts.ceilings:
        ceilings["socket"] = await socket_ceiling(opts, ui)
        if redis_url and has_storage_ceiling():
            ceilings["storage"] = await storage_ceiling(opts, redis_url, ui)
        elif redis_url:
            report.setdefault("warnings", []).append(
                "no storage ceiling: it is measured by the server package "
                f"({STORAGE_CEILING}), which is not installed here"
            )
    if cluster:
        one = (urls, pids, redis_url)
        out, comparison = await on_cluster(opts, one, cluster, ui, games_phase)
        out["on_cluster"] = comparison
    elif len(urls) > 1:
        out, comparison = await scale_out(opts, urls, pids, redis_url, ui, games_phase)
        out["scale_out"] = comparison
    else:
        out = await games_phase(opts, urls[0], pids, redis_url, ui)
    for ceiling in ceilings.values():
        if ceiling:
            ceiling["ratio"] = _ratio(out["moves_per_second"], ceiling)
    if ceilings["socket"]:
        ceilings["socket"].update(cpu_per_move(out, ceilings["socket"]))
    out["ceilings"] = ceilings
    return out


def _redacted(value: Any) -> Any:
    """An option as the report shows it: no password of a URL, nor of a list of them."""
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, tuple):
        return [_redacted(v) for v in value]
    return value
