"""`moose loadtest`: many bot clients against one server, with the ceilings beside it.

See BENCHMARKS.md for what it measures and the figures of this project. This
module is flags and the progress bar (the summary table is `report.py`); pyproject.toml adds it
to `moose` through the ``moose.commands`` entry-point group. A bare install (the
client only) lists the command, and running it says what to install.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import sys
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from moose.redact import redact_url

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

__all__ = ["NEEDS", "add_parser", "missing_dependencies", "run"]

# Import names of what the load test needs beyond the client: Redis' figures, the
# processes' CPU and memory, /metrics. The `server` extra (pyproject.toml) has them.
NEEDS = ("redis", "psutil", "prometheus_client")


def missing_dependencies() -> str | None:
    """None when the load test's dependencies are installed, else what to tell the user."""
    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if not missing:
        return None
    from moose.cli import SERVER_EXTRA

    return (
        f"moose loadtest needs {', '.join(missing)}, which a client-only install lacks; "
        f"{SERVER_EXTRA}"
    )


def add_parser(subparsers: Any) -> None:
    """Register `moose loadtest`."""
    from moose.bots import BOTS

    p = subparsers.add_parser(
        "loadtest",
        help="measure a server under many bot players",
        description="Play many games at once through the public queue and report moves/s, "
        "latencies, matchmaking, errors, server CPU and memory and Redis commands per move, "
        "beside two ceilings measured in the same run on the same machine: a bare aiohttp "
        "WebSocket server (socket ceiling) and a bare redis-py client doing the server's "
        "Redis commands per move (storage ceiling). Every phase is bounded in time. Each "
        "bot keeps to what a server with the default limits allows one client: under "
        "MOOSE_RATE messages a second per socket, and (for a server on this machine) at "
        "most MOOSE_MAX_SOCKETS_PER_ADDRESS sockets per loopback source address.",
    )
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--url",
        action="append",
        help="WebSocket URL of a running server; several (the flag again, or joined by "
        "commas): instances of one deployment, players spread over them round-robin",
    )
    where.add_argument(
        "--spawn", action="store_true", help="start a Redis and a `moose serve` of our own"
    )
    p.add_argument(
        "--instances",
        type=int,
        default=1,
        metavar="N",
        help="with --spawn: start N `moose serve` over the one Redis (default 1); with "
        "N > 1 (or several --url) the games phase runs rounds of players spread "
        "round-robin over the instances, interleaved with rounds of every player on the "
        "first instance and with rounds of one instance paced at 1/N of the spread "
        "round's rate (the share each spread instance carried), and reports server CPU "
        "per move summed over the instances for each",
    )
    p.add_argument(
        "--cluster",
        action="store_true",
        help="with --spawn: also start a Redis Cluster of three valkey-server nodes on "
        "loopback and --instances `moose serve` over it; the games phase runs rounds over "
        "the one Redis and over the cluster, interleaved, and reports server CPU per move "
        "(summed over the instances), Redis CPU and commands per move (summed over the "
        "nodes, and each node's) and latencies for both",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="with several instances or --cluster: interleaved rounds of each kind (default 2)",
    )
    p.add_argument("--redis", help="with --spawn: the Redis URL the server uses (default: own)")
    p.add_argument("--redis-url", help="Redis of a --url server, for commands per move")
    p.add_argument(
        "--server-pid",
        type=int,
        action="append",
        help="pid of a --url server, for CPU and memory (again for each --url)",
    )
    p.add_argument("--games", type=int, default=200, help="concurrent games (default 200; 0: none)")
    p.add_argument(
        "--table",
        type=int,
        default=4,
        choices=range(2, 7),
        metavar="N",
        help="players per game (default 4)",
    )
    p.add_argument("--procs", type=int, default=1, help="load-generator processes (default 1)")
    p.add_argument(
        "--bot", default="greedy", choices=sorted(BOTS), help="bot of every player (default greedy)"
    )
    p.add_argument(
        "--rate", type=float, default=0.0, help="cap on moves per second in all (default 0: no cap)"
    )
    p.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring (3)")
    p.add_argument("--duration", type=float, default=20.0, help="seconds measured (default 20)")
    p.add_argument(
        "--drain",
        type=float,
        default=60.0,
        help="seconds for games to finish after the window (default 60)",
    )
    p.add_argument("--max-games", type=int, default=0, help="stop queueing after N games")
    p.add_argument("--no-ceilings", action="store_true", help="skip the two ceilings")
    p.add_argument(
        "--matchmaking",
        type=int,
        default=0,
        metavar="N",
        help="also: N players queue at once; time until all are seated",
    )
    p.add_argument(
        "--connections",
        type=int,
        default=0,
        metavar="N",
        help="also: hold N idle sessions; server memory per connection, server "
        "CPU while they are held",
    )
    p.add_argument("--hold", type=float, default=3.0, help="seconds to hold them (default 3)")
    p.add_argument(
        "--source-ips",
        type=int,
        default=0,
        help="loopback source addresses per load-generator process (default: one "
        "per 64 sockets, the default MOOSE_MAX_SOCKETS_PER_ADDRESS, for a "
        "server on this machine)",
    )
    p.add_argument(
        "--monitor",
        type=float,
        default=2.0,
        help="seconds of Redis MONITOR in the warm-up (default 2; 0: off)",
    )
    p.add_argument(
        "--lobby",
        nargs="?",
        const="2000,5000,10000,max",
        default=None,
        metavar="SIZES",
        help="the lobby mode, instead of games: players at a human pace (about "
        "--rate moves a second in all, default 500), games ending and "
        "players queueing again all the time; the lobby grows through "
        "SIZES (default 2000,5000,10000,max; max: as many as the open-file "
        "limits and MOOSE_MAX_SOCKETS allow) and each size is measured for "
        "--duration seconds",
    )
    p.add_argument(
        "--storm",
        type=int,
        default=0,
        metavar="N",
        help="the storm mode, instead of games (with --spawn --instances 2 or more): N "
        "players spread round-robin over the instances play games (about --rate moves a "
        "second in all, default 500); in the middle of the window the last instance is "
        "killed (SIGKILL) and its players reconnect to the others (full-jitter backoff) "
        "and resync; reports how many came back, the time from the kill to the last one "
        "resynced, turns lost to timeouts, and the other players' move latency before and "
        "during",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object (progress on stderr)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of `moose loadtest`."""
    from rich.console import Console

    if (missing := missing_dependencies()) is not None:
        print(missing, file=sys.stderr)
        return 2

    from moose_loadtest.run import Options

    console = Console(stderr=args.json, highlight=False)
    if min(args.games, args.procs - 1, args.matchmaking, args.connections) < 0:
        console.print("moose loadtest: counts must not be negative")
        return 2
    if min(args.instances, args.rounds) < 1:
        console.print("moose loadtest: --instances and --rounds are at least 1")
        return 2
    if args.storm and (not args.spawn or args.instances < 2 or args.storm < 2 * args.table):
        console.print(
            "moose loadtest: --storm N needs --spawn, --instances 2 or more and N of two "
            "tables or more (the load test kills an instance it started)"
        )
        return 2
    if args.cluster and (not args.spawn or args.storm or args.lobby is not None):
        console.print("moose loadtest: --cluster needs --spawn, and not --storm or --lobby")
        return 2
    # Every field but `ceilings` is the flag of the same name; the repeatable ones
    # become tuples (a --url may itself list several, joined by commas).
    flags = {f.name: getattr(args, f.name) for f in fields(Options) if f.name != "ceilings"}
    flags["url"] = tuple(u for given in args.url or () for u in given.split(",") if u)
    flags["server_pid"] = tuple(args.server_pid or ())
    opts = Options(**flags, ceilings=not args.no_ceilings)
    try:
        report = asyncio.run(_main(opts, console))
    except (RuntimeError, ValueError, OSError) as exc:
        console.print(f"moose loadtest: {exc}", markup=False)
        return 1
    argv = [redact_url(arg) for arg in sys.argv[1:]]  # no password of a --redis URL
    report["command"] = "moose " + " ".join(argv) if sys.argv[0].endswith("moose") else ""
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        from moose_loadtest.report import print_summary

        print_summary(console, report)
    return 0


class _Bar:
    """The rich progress bar, one task per phase."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: TaskID | None = None

    def phase(self, name: str, total: float) -> None:
        if self.task is not None:
            self.progress.update(self.task, completed=self.progress.tasks[-1].total)
        self.task = self.progress.add_task(name, total=total, info="")

    def update(self, done: float, info: str = "") -> None:
        if self.task is not None:
            self.progress.update(self.task, completed=done, info=info)


async def _main(opts: Any, console: Console) -> dict[str, Any]:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from moose_loadtest.phases import run as run_phases

    columns = (
        TextColumn("{task.description:<32}"),
        BarColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[info]}"),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        return await run_phases(opts, _Bar(progress))
