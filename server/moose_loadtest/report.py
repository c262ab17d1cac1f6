"""The summary table `moose loadtest` prints (without --json): one row per figure.

`summary_rows` turns the report (the dict --json prints) into rows, one group per
phase that ran: games, the lobby's steps, matchmaking, idle connections.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["print_summary", "summary_rows"]

Row = tuple[str, str]


def print_summary(console: Console, report: dict[str, Any]) -> None:
    """The summary table, then the warnings."""
    from rich.table import Table

    m = report["machine"]
    table = Table(title=f"moose loadtest: {m['nproc']} cores, {m['cpu']}, Python {m['python']}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for row in summary_rows(report):
        table.add_row(*row)
    console.print(table)
    for warning in report.get("warnings", []):
        console.print(f"warning: {warning}", markup=False)


def summary_rows(r: dict[str, Any]) -> list[Row]:
    """Every figure of the report that a person reads, as (figure, value)."""
    rows: list[Row] = []
    if "moves_per_second" in r:
        rows += _window_rows(r) + _ceiling_rows(r)
    if r.get("scale_out"):
        rows += _scale_rows(r["scale_out"])
    if r.get("on_cluster"):
        rows += _cluster_rows(r["on_cluster"])
    for step in (r.get("lobby") or {}).get("steps") or ():
        rows.append((f"lobby of {step['players']:,} players", ""))
        rows += [(f"  {name}", value) for name, value in _window_rows(step)]
        if step.get("server_bytes_per_player") is not None:
            rows.append(("  server bytes per player", f"{step['server_bytes_per_player']:,}"))
    if r.get("storm"):
        rows += _storm_rows(r["storm"])
    if "matchmaking" in r:
        mm = r["matchmaking"]
        rows += [
            (f"matchmaking: {mm['players']} queued, seated", str(mm["seated"])),
            ("  all seated after, s", str(mm["all_seated_s"])),
            ("  queue -> match, ms", _ms(mm["wait_ms"])),
        ]
        if mm.get("rating_spread"):
            sp = mm["rating_spread"]
            rows += [
                ("  mean rating spread per table", f"{sp['mean']}"),
                ("  ... seated at random", f"{sp['random_mean']}"),
            ]
    if "connections" in r:
        c = r["connections"]
        rows += [
            (f"connections: {c['wanted']} wanted, open", str(c["connected"])),
            ("  server RSS MiB", str(c.get("server_rss_mb", "-"))),
            ("  server bytes per connection", str(c.get("bytes_per_connection"))),
        ]
    return rows


def _ms(p: dict[str, Any] | None) -> str:
    if not p or p.get("p50") is None:
        return "-"
    return f"{p['p50']:.1f} / {p['p95']:.1f} / {p['p99']:.1f}"


def _window_rows(r: dict[str, Any]) -> list[Row]:
    """The figures of one measured window: the games phase's, or a lobby step's."""
    rows = [
        ("moves per second", f"{r['moves_per_second']:,.0f}"),
        ("move -> moved, ms p50/p95/p99", _ms(r["move_latency_ms"])),
        ("move -> own event, ms", _ms(r["event_latency_ms"])),
        ("move -> every seat has it, ms", _ms(r["all_seats_latency_ms"])),
        ("queue -> match, ms", _ms(r["matchmaking_wait_ms"])),
        ("games finished", str(r["games"])),
        ("errors", ", ".join(f"{k}: {v}" for k, v in r["errors"].items()) or "0"),
    ]
    if r.get("server"):
        s = r["server"]
        peak = f" ({s['rss_peak_mb']})" if "rss_peak_mb" in s else ""
        label = "server RSS MiB" + (" (peak)" if peak else "")
        rows += [("server CPU %", f"{s['cpu_percent']}"), (label, f"{s['rss_mb']}{peak}")]
    if r.get("load_generator"):
        rows.append(("load generator CPU %", f"{r['load_generator']['cpu_percent']}"))
    rd = r.get("redis")
    if rd and "commands_per_move" in rd:
        trips = (rd.get("round_trips") or {}).get("per_commit")
        rows += [
            ("Redis commands per move (in scripts too)", f"{rd['commands_per_move']}"),
            ("Redis round trips per commit (MONITOR)", "-" if trips is None else f"{trips:.2f}"),
            ("Redis reads per move (its clients' batches)", f"{rd.get('reads_per_move', '-')}"),
        ]
    if rd:
        rows.append(("Redis CPU %", f"{rd['cpu_percent']}"))
    return rows


def _scale_rows(s: dict[str, Any]) -> list[Row]:
    """One instance against the players spread over several: medians of the rounds."""
    one, spread = s["median_one_instance"], s["median_spread"]
    share = s["median_one_instance_at_share"]

    def pair(key: str) -> str:
        return f"{one[key]} / {spread[key]}"

    return [
        (f"one instance / spread over {s['instances']} (medians of {s['rounds']} rounds)", ""),
        ("  server CPU ms/move, all instances", pair("server_cpu_ms_per_move")),
        ("  ... spread over one instance", f"x{s['cpu_per_move_ratio']}"),
        (
            f"  one instance at 1/{s['instances']} of the spread rate: CPU ms/move",
            f"{share['server_cpu_ms_per_move']}",
        ),
        ("  ... over at full speed (the load split)", f"x{s['load_split_ratio']}"),
        ("  ... spread over it (the fan-out)", f"x{s['fan_out_ratio']}"),
        ("  Redis commands per move", pair("redis_commands_per_move")),
        ("  moves per second", pair("moves_per_second")),
        ("  move -> moved p99, ms", pair("move_p99_ms")),
        ("  move -> every seat has it p99, ms", pair("all_seats_p99_ms")),
    ]


def _cluster_rows(c: dict[str, Any]) -> list[Row]:
    """One Redis against a Redis Cluster, as many instances over each: medians of the rounds."""
    one, cluster = c["median_one_node"], c["median_cluster"]

    def pair(key: str) -> str:
        return f"{one[key]} / {cluster[key]}"

    nodes = c["cluster"][-1]["redis_nodes"] or ()
    each = " / ".join(str(n["commands_per_move"]) for n in nodes)
    return [
        (f"one Redis / {c['nodes']}-node Cluster, {c['instances']} instance(s) each", ""),
        (f"  (medians of {c['rounds']} rounds)", ""),
        ("  server CPU ms/move, all instances", pair("server_cpu_ms_per_move")),
        ("  ... Cluster over one Redis", f"x{c['cpu_per_move_ratio']}"),
        ("  Redis CPU ms/move, all nodes", pair("redis_cpu_ms_per_move")),
        ("  Redis commands per move, all nodes", pair("redis_commands_per_move")),
        ("  ... each node (last Cluster round)", each or "-"),
        ("  moves per second", pair("moves_per_second")),
        ("  move -> moved p99, ms", pair("move_p99_ms")),
        ("  move -> every seat has it p99, ms", pair("all_seats_p99_ms")),
    ]


def _ceiling_rows(r: dict[str, Any]) -> list[Row]:
    """The games phase's ceilings: moves/s, and server CPU per move against them."""
    rows: list[Row] = []
    for name, c in (r.get("ceilings") or {}).items():
        if c:
            rows.append(
                (f"{name} ceiling moves/s (ours = x{c['ratio']})", f"{c['moves_per_second']:,.0f}")
            )
        if c and c.get("cpu_per_move_ratio") is not None:
            ratio, ours = c["cpu_per_move_ratio"], c["server_cpu_ms_per_move"]
            rows.append((f"server CPU ms/move (x{ratio} the {name} ceiling's)", f"{ours:.3f}"))
    return rows


def _storm_rows(s: dict[str, Any]) -> list[Row]:
    """An instance killed under its players: who came back, how soon, at what cost."""
    rows = [(f"storm over {s.get('instances', '?')} instances, one killed", "")]
    rows += [(f"  {name}", value) for name, value in _window_rows(s)]
    if not s.get("killed"):
        return [*rows, ("  no instance was killed", "")]
    spread = ", ".join(f"#{k}: {v}" for k, v in s["back_on_instance"].items()) or "-"
    took = s["kill_to_resynced_s"]
    return [
        *rows,
        ("  players of the dead instance, back", f"{s['players_of_dead_instance']}, {s['back']}"),
        ("  kill -> last resynced, s", str(s["kill_to_last_resynced_s"])),
        ("  kill -> resynced, s p50/p95", f"{took['p50']} / {took['p95']}"),
        ("  back on instance", spread),
        ("  turns lost (their seats' timeouts)", str(s["turns_lost"])),
        (
            "  others' timeouts, reconnects",
            f"{s['timeouts_of_others']}, {s['reconnects_of_others']}",
        ),
        ("  survivors' move ms before the kill", _ms(s["survivors_move_ms_before"])),
        ("  ... from the kill to the last resynced", _ms(s["survivors_move_ms_during"])),
    ]
