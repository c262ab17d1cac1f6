"""Several instances over one Redis: the games phase spread over them, beside one instance.

Behind a load balancer the seats of one game sit on different instances, and
each commit then reaches the other instances that hold a seat: the cost that
one instance holding whole games never pays. `scale_out` measures both in the
same run: rounds with every player on the first instance and rounds with the
players spread round-robin over every instance, interleaved (one, spread,
spread, one, ...) so that a machine growing busier weighs on both alike. The
server CPU of a round is summed over every instance, the idle ones included
(their upkeep is the same in both kinds of round); Redis' commands per move
and the latencies come with it. The figures compared are the medians over the
rounds.

`on_cluster` does the same for one Redis against a Redis Cluster: two deployments
of as many instances each, one over a single Redis node and one over a three-node
cluster, played in interleaved rounds (one node, cluster, cluster, one node, ...);
a round's players are on every instance of its deployment (round-robin), its
server CPU summed over them, its Redis CPU and commands summed over the nodes.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Awaitable, Callable
from typing import Any

from moose_loadtest.run import Options, Ui

__all__ = ["Deployment", "on_cluster", "round_figures", "scale_out"]

Deployment = tuple[list[str], list[int], "str | None"]  # instances' URLs, pids, Redis URL

# games_phase(opts, url, pids, redis_url, ui, spread, label): one games phase's report.
Play = Callable[
    [Options, str, list[int], "str | None", Ui, tuple[str, ...], str], Awaitable[dict[str, Any]]
]


def round_figures(report: dict[str, Any]) -> dict[str, Any]:
    """What one round's games phase says about the cost of a move."""
    rate = report["moves_per_second"]
    cpu = (report.get("server") or {}).get("cpu_percent")
    redis = report.get("redis") or {}
    return {
        "moves_per_second": rate,
        "server_cpu_percent": cpu,
        "server_cpu_ms_per_move": round(10 * cpu / rate, 4) if cpu and rate else None,
        "redis_commands_per_move": redis.get("commands_per_move"),
        "redis_cpu_percent": redis.get("cpu_percent"),
        "redis_cpu_ms_per_move": round(10 * redis["cpu_percent"] / rate, 4)
        if redis.get("cpu_percent") and rate
        else None,
        "redis_nodes": redis.get("nodes"),
        # The stream reads of a round: a follower that missed nothing reads none.
        "xrange_per_move": (redis.get("by_command_per_move") or {}).get("xrange", 0.0),
        "move_latency_ms": report["move_latency_ms"],
        "all_seats_latency_ms": report["all_seats_latency_ms"],
        "games": report["games"],
        "errors": report["errors"],
        **({"instances": report["instances"]} if "instances" in report else {}),
    }


def _median(rounds: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rounds if r.get(key) is not None]
    return round(statistics.median(values), 4) if values else None


def _p99(rounds: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key]["p99"] for r in rounds if r[key].get("p99") is not None]
    return round(statistics.median(values), 2) if values else None


def _medians(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "server_cpu_ms_per_move": _median(rounds, "server_cpu_ms_per_move"),
        "redis_commands_per_move": _median(rounds, "redis_commands_per_move"),
        "redis_cpu_ms_per_move": _median(rounds, "redis_cpu_ms_per_move"),
        "moves_per_second": _median(rounds, "moves_per_second"),
        "move_p99_ms": _p99(rounds, "move_latency_ms"),
        "all_seats_p99_ms": _p99(rounds, "all_seats_latency_ms"),
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a and b else None


async def scale_out(
    opts: Options,
    urls: list[str],
    pids: list[int],
    redis_url: str | None,
    ui: Ui,
    play: Play,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Interleaved rounds, one instance and spread; (the last spread round's report,
    the comparison: every round's figures, their medians and the ratios)."""
    n = len(urls)
    one: list[dict[str, Any]] = []
    spread: list[dict[str, Any]] = []
    share: list[dict[str, Any]] = []
    last: dict[str, Any] = {}
    for r in range(opts.rounds):
        kinds = ("one", "spread", "share") if r % 2 == 0 else ("spread", "share", "one")
        for kind in kinds:
            over = tuple(urls) if kind == "spread" else ()
            paced = opts
            if kind == "share":  # the load each spread instance carried, on one
                rate = spread[-1]["moves_per_second"] / n  # (a rate of 0 is no pace)
                paced = dataclasses.replace(opts, rate=max(1.0, rate))
            label = (
                f"round {r + 1}: "
                + {
                    "one": "one instance",
                    "spread": f"spread over {n}",
                    "share": f"one instance at 1/{n} of that rate",
                }[kind]
            )
            report = await play(paced, urls[0], pids, redis_url, ui, over, label)
            {"one": one, "spread": spread, "share": share}[kind].append(round_figures(report))
            if over:
                last = report
    a, b, c = _medians(one), _medians(spread), _medians(share)
    cpu_a, cpu_b, cpu_c = (m["server_cpu_ms_per_move"] for m in (a, b, c))
    comparison = {
        "instances": n,
        "rounds": opts.rounds,
        "one_instance": one,
        "spread": spread,
        "one_instance_at_share": share,
        "median_one_instance": a,
        "median_spread": b,
        "median_one_instance_at_share": c,
        "cpu_per_move_ratio": _ratio(cpu_b, cpu_a),
        "load_split_ratio": _ratio(cpu_c, cpu_a),
        "fan_out_ratio": _ratio(cpu_b, cpu_c),
        "redis_commands_ratio": _ratio(b["redis_commands_per_move"], a["redis_commands_per_move"]),
    }
    return last, comparison


async def on_cluster(
    opts: Options, one: Deployment, cluster: Deployment, ui: Ui, play: Play
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Interleaved rounds over one Redis node and over a cluster; (the last cluster
    round's report, the comparison: every round's figures, their medians, the ratios)."""
    rounds: dict[str, list[dict[str, Any]]] = {"one_node": [], "cluster": []}
    last: dict[str, Any] = {}
    for r in range(opts.rounds):
        kinds = ("one_node", "cluster") if r % 2 == 0 else ("cluster", "one_node")
        for kind in kinds:
            urls, pids, redis_url = cluster if kind == "cluster" else one
            over = tuple(urls) if len(urls) > 1 else ()
            label = f"round {r + 1}: " + ("Redis Cluster" if kind == "cluster" else "one Redis")
            report = await play(opts, urls[0], pids, redis_url, ui, over, label)
            rounds[kind].append(round_figures(report))
            if kind == "cluster":
                last = report
    a, b = _medians(rounds["one_node"]), _medians(rounds["cluster"])
    comparison = {
        "instances": len(one[0]),
        "nodes": len(rounds["cluster"][-1]["redis_nodes"] or ()),
        "rounds": opts.rounds,
        **rounds,
        "median_one_node": a,
        "median_cluster": b,
        "cpu_per_move_ratio": _ratio(b["server_cpu_ms_per_move"], a["server_cpu_ms_per_move"]),
        "redis_commands_ratio": _ratio(b["redis_commands_per_move"], a["redis_commands_per_move"]),
        "redis_cpu_ratio": _ratio(b["redis_cpu_ms_per_move"], a["redis_cpu_ms_per_move"]),
    }
    return last, comparison
