"""A/B of server versions under `moose loadtest`, interleaved, on a noisy machine.

    python bench/ab.py OUT.json REV_A REV_B [--rounds 3] [-- loadtest flags...]

Each REV (a git revision, WORK for the work tree, or a folder holding client/
and server/) is exported to a temporary
folder; every round runs, for each revision in turn, a fresh redis-server and
`moose serve` from that revision's code (PYTHONPATH), then `moose loadtest
--url` from the work tree against it. Rounds alternate A and B so that noise
from other processes lands on both; the report gives each run and the medians.

A REV may end in ``@NAME=VALUE[,NAME=VALUE...]``: environment variables for
that side's `moose serve`, e.g. ``WORK WORK@MOOSE_REDIS_CONNECTIONS=16``
compares the work tree with two pool sizes. ``MOOSE_APPENDFSYNC`` (the embedded
Redis' setting) sets that of the redis-server this script starts for that side:
``WORK WORK@MOOSE_APPENDFSYNC=always`` measures what an fsync per write costs.
``REDIS_SERVER`` (a path) is the server binary started for that side, e.g.
``WORK@REDIS_SERVER=/path/to/redis-server WORK`` compares another Redis with the
bundled Valkey.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "client"), str(ROOT / "server")]

from moose_loadtest.processes import free_port, stop_process, wait_ready  # noqa: E402
from moose_server.storage.embedded import EmbeddedRedis  # noqa: E402


def split_env(spec: str) -> tuple[str, dict[str, str]]:
    """``REV@A=1,B=2`` -> (REV, {"A": "1", "B": "2"})."""
    rev, _, env = spec.partition("@")
    return rev, dict(item.split("=", 1) for item in env.split(",") if item)


def export(rev: str, into: Path) -> Path:
    """The client and server code of `rev` in a folder of its own."""
    if rev == "WORK":
        return ROOT
    if Path(rev).is_dir():
        return Path(rev)
    folder = into / rev
    folder.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "client", "server"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


# `moose serve` from its own module, not through `moose`: the `moose` command
# loads every installed `moose.commands` entry point, and an older revision's
# code cannot import what a newer tree registers there (moose_loadtest.command).
SERVE = (
    "import argparse, sys; from moose_server.commands.serve import add_parser; "
    "p = argparse.ArgumentParser(prog='moose'); add_parser(p.add_subparsers()); "
    "a = p.parse_args(sys.argv[1:]); sys.exit(a.func(a))"
)


def one_run(
    code: Path, flags: list[str], tmp: Path, extra: dict[str, str] | None = None
) -> dict[str, Any]:
    """One redis-server + `moose serve` from `code` (`extra` env), one load test against it."""
    env = dict(os.environ, PYTHONPATH=f"{code / 'client'}:{code / 'server'}", **(extra or {}))
    fsync = (extra or {}).get("MOOSE_APPENDFSYNC", "everysec")
    binary = (extra or {}).get("REDIS_SERVER")
    with (
        tempfile.TemporaryDirectory(dir=tmp) as data,
        EmbeddedRedis(Path(data) / "redis", appendfsync=fsync, binary=binary) as r,
    ):
        port = free_port()
        cmd = [
            sys.executable,
            "-c",
            SERVE,
            "serve",
            "--port",
            str(port),
            "--redis",
            r.url,
            "--data-dir",
            data,
        ]
        with open(Path(data) / "serve.log", "wb") as log:
            server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_ready(f"http://127.0.0.1:{port}/readyz", server)
            test = [
                sys.executable,
                "-m",
                "moose",
                "loadtest",
                "--url",
                f"ws://127.0.0.1:{port}/ws",
                "--server-pid",
                str(server.pid),
                "--redis-url",
                r.url,
                "--json",
                *flags,
            ]
            # The load generator is this tree's on every side: only the server differs.
            here = dict(os.environ, PYTHONPATH=f"{ROOT / 'client'}:{ROOT / 'server'}")
            out = subprocess.run(test, capture_output=True, text=True, timeout=900, env=here)
            if out.returncode != 0:
                raise RuntimeError(out.stderr[-2000:])
            report: dict[str, Any] = json.loads(out.stdout)
        finally:
            stop_process(server)
        # What the server warned of (an outage it took the run for, a slow client...).
        said = (Path(data) / "serve.log").read_text(errors="replace").splitlines()
        warned = [line for line in said if " WARNING " in line or " ERROR " in line]
        report["server_log"] = {"warnings": len(warned), "first": warned[:20]}
        return report


def add_cpu_per_move(report: dict[str, Any]) -> None:
    """The server's and Redis' CPU per move (ms): steadier than moves/s on a busy machine."""
    rate = report.get("moves_per_second")
    for part in ("server", "redis"):
        cpu = (report.get(part) or {}).get("cpu_percent")
        if isinstance(cpu, int | float) and isinstance(rate, int | float) and rate > 0:
            report[f"{part}_cpu_ms_per_move"] = round(cpu * 10 / rate, 3)


def median_of(reports: list[dict[str, Any]], path: str) -> float | None:
    """The median of a dotted field over the reports that have it."""
    values = []
    for rep in reports:
        v: Any = rep
        for key in path.split("."):
            v = v.get(key) if isinstance(v, dict) else None
        if isinstance(v, int | float):
            values.append(float(v))
    return round(statistics.median(values), 3) if values else None


FIELDS = (
    "moves_per_second",
    "move_latency_ms.p50",
    "move_latency_ms.p99",
    "event_latency_ms.p50",
    "all_seats_latency_ms.p99",
    "matchmaking_wait_ms.p50",
    "server.cpu_percent",
    "redis.commands_per_move",
    "redis.round_trips.per_commit",
    "matchmaking.all_seated_s",
    "matchmaking.rating_spread.mean",
    "matchmaking.rating_spread.random_mean",
    "connections.bytes_per_connection",
    "connections.server_rss_mb",
    "connections.server_cpu_percent",
    "server_cpu_ms_per_move",
    "redis.cpu_percent",
    "redis_cpu_ms_per_move",
    "loadavg_1m",
)


LOBBY_FIELDS = (
    "move_latency_ms.p50",
    "move_latency_ms.p99",
    "move_latency_ms.max",
    "all_seats_latency_ms.p99",
    "moves_per_second",
    "server.cpu_percent",
    "server.rss_mb",
    "load_generator.cpu_percent",
    "load_generator.loop_lag_ms.p99",
    "redis.cpu_percent",
)


def lobby_medians(reports: list[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """`--lobby` reports: the medians of each lobby size's figures, by its players."""
    by_size: dict[int, list[dict[str, Any]]] = {}
    for rep in reports:
        for step in (rep.get("lobby") or {}).get("steps", []):
            by_size.setdefault(step["players"], []).append(step)
    return {
        str(n): {k: median_of(steps, k) for k in LOBBY_FIELDS}
        for n, steps in sorted(by_size.items())
    }


def summarize(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Medians per side; every side after the first also as a ratio to the first."""
    if any("lobby" in rep for reports in runs.values() for rep in reports):
        return {rev: lobby_medians(reports) for rev, reports in runs.items()}
    summary = {rev: {k: median_of(reports, k) for k in FIELDS} for rev, reports in runs.items()}
    first = summary[next(iter(runs))]
    for rev in list(runs)[1:]:
        for key in ("moves_per_second", "server_cpu_ms_per_move", "redis_cpu_ms_per_move"):
            a, b = first.get(key), summary[rev].get(key)
            if a and b is not None:
                summary[rev][f"{key}_ratio"] = round(b / a, 3)
    return summary


def main() -> int:
    """Run the rounds; write every report and the medians to OUT."""
    args, flags = sys.argv[1:], []
    if "--" in args:
        at = args.index("--")
        args, flags = args[:at], args[at + 1 :]
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("revs", nargs="+")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument(
        "--summarize", action="store_true", help="only recompute the medians of OUT from its runs"
    )
    a = p.parse_args(args)
    if a.summarize:
        report = json.loads(Path(a.out).read_text())
        for reports in report["runs"].values():
            for rep in reports:
                add_cpu_per_move(rep)
        report["medians"] = summarize(report["runs"])
        Path(a.out).write_text(json.dumps(report, indent=1))
        print(json.dumps(report["medians"], indent=1))
        return 0
    runs: dict[str, list[dict[str, Any]]] = {rev: [] for rev in a.revs}
    with tempfile.TemporaryDirectory() as tmp:
        envs = {rev: split_env(rev) for rev in a.revs}
        exported: dict[str, Path] = {}
        for plain, _ in envs.values():
            if plain not in exported:
                exported[plain] = export(plain, Path(tmp))
        codes = {rev: exported[plain] for rev, (plain, _) in envs.items()}
        for r in range(a.rounds):
            for rev in a.revs if r % 2 == 0 else reversed(a.revs):
                report = one_run(codes[rev], flags, Path(tmp), envs[rev][1])
                report["loadavg_1m"] = round(os.getloadavg()[0], 2)  # how busy the machine was
                add_cpu_per_move(report)
                runs[rev].append(report)
                steps = (report.get("lobby") or {}).get("steps", [report])
                for step in steps:
                    print(
                        rev,
                        r,
                        step.get("players"),
                        step.get("moves_per_second"),
                        step.get("move_latency_ms"),
                        step.get("errors"),
                        file=sys.stderr,
                        flush=True,
                    )
    summary = summarize(runs)
    Path(a.out).write_text(json.dumps({"flags": flags, "medians": summary, "runs": runs}, indent=1))
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
