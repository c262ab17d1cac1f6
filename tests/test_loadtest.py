"""`moose loadtest`: a small, fast run of the real tool (no timed assertions).

The run spawns its own Redis and `moose serve`, plays a few games through the
public queue, measures both ceilings, queues a few players at once and holds a
few idle sessions; the report must have its shape, finished games and 0 errors.
"""

from __future__ import annotations

import ast
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

import moose_loadtest
from moose_loadtest import deployment
from moose_loadtest.phases import cpu_per_move
from moose_loadtest.report import summary_rows
from moose_loadtest.run import merge, percentiles


def server_imports(source: str) -> list[str]:
    """The modules of moose_server that `source` imports, wherever the import stands."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
    return [name for name in found if name.split(".")[0] == "moose_server"]


def test_the_scan_finds_every_form_of_a_server_import() -> None:
    source = """
import moose_server.settings
from moose_server.storage import store
def f():
    from moose_server import app
import moose, moose_serverless
"""
    assert server_imports(source) == [
        "moose_server.settings",
        "moose_server.storage",
        "moose_server",
    ]


def test_no_module_of_the_load_test_imports_the_server() -> None:
    """The load test uses the client, the protocol, /metrics and Redis from outside only."""
    package = Path(moose_loadtest.__file__).parent
    modules = sorted(package.rglob("*.py"))
    assert len(modules) > 5
    found = {m.name: server_imports(m.read_text()) for m in modules}
    assert {name: imports for name, imports in found.items() if imports} == {}


def test_what_the_load_test_knows_of_the_server_is_true() -> None:
    """deployment.py's defaults and key names, against the server's own."""

    from moose_server.settings import Settings
    from moose_server.storage.keys import GameKeys, profile_key

    documented = {
        "rate": deployment.RATE,
        "burst": deployment.BURST,
        "max_sockets_per_address": deployment.SOCKETS_PER_ADDRESS,
        "turn_time": deployment.TURN_TIME,
        "max_sockets": deployment.MAX_SOCKETS,
        "game_grace": deployment.GAME_GRACE,
        "buckets": deployment.BUCKETS,
    }
    defaults = Settings()
    assert documented == {name: getattr(defaults, name) for name in documented}
    for game in ("g_0123456789", "g_ffff0000aa", "g_1"):
        keys = GameKeys.of(game, 5)
        assert deployment.game_keys(game, 5) == keys.held()
        assert deployment.is_game_hash(keys.game)
        assert not deployment.is_game_hash(keys.events)
        assert deployment.key_kind(keys.game) == "game"
    assert deployment.PROFILE_KEY.format(player="p_1") == profile_key("p_1")


def test_percentiles_of_nothing_and_of_a_list() -> None:
    assert percentiles([]) == {"p50": None, "p95": None, "p99": None, "max": None}
    p = percentiles([float(v) for v in range(1, 101)])
    assert (p["p50"], p["p95"], p["p99"], p["max"]) == (50.0, 95.0, 99.0, 100.0)


def test_loadtest_refuses_an_unknown_bot(capsys: pytest.CaptureFixture[str]) -> None:
    from moose import cli

    with pytest.raises(SystemExit) as exit:
        cli.main(["loadtest", "--url", "ws://127.0.0.1:1/ws", "--bot", "clever"])
    assert exit.value.code == 2
    assert "invalid choice: 'clever'" in capsys.readouterr().err


def test_merge_finds_the_last_seat_across_workers() -> None:
    def tally(seen: dict[str, list[float]], sent: dict[str, float]) -> dict[str, object]:
        return {
            "moves": len(sent),
            "moves_total": len(sent),
            "move_ms": [],
            "event_ms": [],
            "match_ms": [],
            "connect_ms": [],
            "connected": 2,
            "games": ["g1"],
            "errors": {},
            "sent": sent,
            "seen": seen,
        }

    a = tally({"g1 2": [1.010, 1]}, {"g1 2": 1.000})
    b = tally({"g1 2": [1.030, 1], "g1 3": [2.0, 1]}, {})
    merged = merge([a, b], table=2)
    assert merged["all_seats_ms"] == pytest.approx([30.0])
    assert merged["games"] == 1 and merged["connected"] == 4


def testcpu_per_move_ratio_is_ours_over_the_socket_ceilings() -> None:
    # Figures of a real `moose loadtest` run: 99.1 % of a core at 2,109.8 moves/s
    # against the bare relay's 57.9 % at 5,204.1 moves/s.
    report = {"moves_per_second": 2109.8, "server": {"cpu_percent": 99.1}}
    got = cpu_per_move(report, {"moves_per_second": 5204.1, "server_cpu_percent": 57.9})
    assert got["server_cpu_ms_per_move"] == pytest.approx(0.4697, abs=1e-4)
    assert got["cpu_ms_per_move"] == pytest.approx(0.1113, abs=1e-4)
    assert got["cpu_per_move_ratio"] == 4.22
    assert (
        cpu_per_move({"moves_per_second": 0.0}, {"moves_per_second": 1.0})["cpu_per_move_ratio"]
        is None
    )


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_loadtest_smoke_run_reports_every_figure(tmp_path: object) -> None:
    cmd = [
        sys.executable,
        "-m",
        "moose",
        "loadtest",
        "--spawn",
        "--games",
        "2",
        "--warmup",
        "1",
        "--duration",
        "2",
        "--drain",
        "60",
        "--monitor",
        "0.5",
        "--matchmaking",
        "8",
        "--connections",
        "20",
        "--hold",
        "1",
        "--json",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=220)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["games"] >= 2
    assert report["errors"] == {}
    assert report["moves_per_second"] > 0
    assert set(report["move_latency_ms"]) >= {"p50", "p95", "p99"}
    for key in ("event_latency_ms", "all_seats_latency_ms", "matchmaking_wait_ms"):
        assert report[key]["p50"] is not None, key
    for name in ("socket", "storage"):
        ceiling = report["ceilings"][name]
        assert ceiling["moves_per_second"] > 0 and ceiling["ratio"] > 0, name
    assert report["ceilings"]["socket"]["cpu_per_move_ratio"] > 0
    assert report["server"]["rss_mb"] > 0
    assert report["redis"]["commands_per_move"] > 0
    # Each read from a client's socket brings one or more of those commands.
    assert 0 < report["redis"]["reads_per_move"] <= report["redis"]["commands_per_move"]
    assert report["redis"]["round_trips"]["commits"] > 0
    finished = report["redis"]["memory_finished_in_grace"]  # a 4-player game at its largest
    assert finished["games"] >= 1 and 0 < finished["max_bytes"] <= 40_000
    mm = report["matchmaking"]
    assert (mm["players"], mm["seated"], mm["errors"]) == (8, 8, {})
    low, high = mm["rating_spread"]["players_range"]  # the ratings it gave them were read
    assert low < high
    conns = report["connections"]
    assert (conns["connected"], conns["errors"]) == (20, {})
    assert conns["bytes_per_connection"] is not None
    assert conns["server_cpu_percent"] >= 0  # the upkeep of idle sockets, over the hold
    assert conns["server_histograms"]["moose_loop_lag_seconds"]["count"] > 0


@pytest.mark.slow
def test_a_paced_run_plays_and_reports(tmp_path: object) -> None:
    """--rate: moves wait for the pacer in tasks of their own; the run still plays."""
    cmd = [
        sys.executable,
        "-m",
        "moose",
        "loadtest",
        "--spawn",
        "--games",
        "2",
        "--rate",
        "20",
        "--warmup",
        "1",
        "--duration",
        "2",
        "--drain",
        "60",
        "--no-ceilings",
        "--json",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=220)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["errors"] == {} and report["games"] >= 2
    assert 0 < report["moves_per_second"] <= 20 * 1.1  # the pacer holds the rate


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_run_over_two_instances_compares_spread_seats_with_one_instance() -> None:
    """--instances 2: one Redis, two servers; rounds of one instance and of seats
    spread over both, each with its CPU per move summed over the instances."""
    cmd = [
        sys.executable,
        "-m",
        "moose",
        "loadtest",
        "--spawn",
        "--instances",
        "2",
        "--rounds",
        "1",
        "--games",
        "4",
        "--warmup",
        "1",
        "--duration",
        "2",
        "--drain",
        "60",
        "--monitor",
        "0",
        "--no-ceilings",
        "--json",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert len(report["server_pids"]) == 2 and len(set(report["urls"])) == 2
    scale = report["scale_out"]
    assert scale["instances"] == 2 and len(scale["one_instance"]) == len(scale["spread"]) == 1
    for kind in ("one_instance", "spread", "one_instance_at_share"):
        [figures] = scale[kind]
        assert figures["errors"] == {} and figures["games"] >= 1, kind
        assert figures["server_cpu_ms_per_move"] > 0, kind
        assert figures["redis_commands_per_move"] > 0, kind
        assert figures["move_latency_ms"]["p99"] is not None, kind
    where = scale["spread"][0]["instances"]
    assert where["spread_over"] == 2 and where["games_on_several"] >= 1
    assert scale["cpu_per_move_ratio"] > 0 and scale["redis_commands_ratio"] > 0
    # One instance paced at half the spread round's rate: the share each spread one carried.
    [at_share] = scale["one_instance_at_share"]
    assert at_share["moves_per_second"] <= scale["spread"][0]["moves_per_second"] * 0.5 * 1.2
    assert scale["load_split_ratio"] > 0 and scale["fan_out_ratio"] > 0
    assert report["server"]["instances"] == 2


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_run_with_a_cluster_compares_it_with_one_redis() -> None:
    """--cluster: a server over one Redis and one over a three-node Redis Cluster of
    our own, in interleaved rounds; Redis figures summed over the nodes, each node's
    too; every process and folder of the run gone after it."""
    cmd = [sys.executable, "-m", "moose", "loadtest", "--spawn", "--cluster", "--rounds", "1"]
    cmd += ["--games", "10", "--warmup", "2", "--monitor", "1", "--duration", "3"]
    cmd += ["--drain", "60", "--no-ceilings", "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    c = report["on_cluster"]
    assert c["instances"] == 1 and c["nodes"] == 3
    assert report["cluster"]["redis_url"].startswith("redis+cluster://")
    for kind in ("one_node", "cluster"):
        [figures] = c[kind]
        assert figures["errors"] == {} and figures["games"] >= 1, kind
        assert figures["moves_per_second"] > 0, kind
        assert figures["server_cpu_ms_per_move"] > 0, kind
        assert figures["redis_commands_per_move"] > 0, kind
        assert figures["redis_cpu_ms_per_move"] > 0, kind
        assert figures["move_latency_ms"]["p99"] is not None, kind
    nodes = c["cluster"][0]["redis_nodes"]
    assert len(nodes) == 3 and all(n["commands_per_move"] > 0 for n in nodes)
    total = sum(n["commands_per_move"] for n in nodes)
    assert abs(total - c["cluster"][0]["redis_commands_per_move"]) < 0.05
    assert report["redis"]["round_trips"]["commits"] > 0  # MONITOR on every node
    assert c["cpu_per_move_ratio"] > 0 and c["redis_commands_ratio"] > 0
    assert dict(summary_rows(report))["  ... Cluster over one Redis"] == (
        f"x{c['cpu_per_move_ratio']}"
    )
    pids = [*report["server_pids"], *report["cluster"]["server_pids"]]
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]
    ports = [u.rsplit(":", 1)[1] for u in report["cluster"]["redis_url"].split(",")]
    for port in ports:  # the nodes are stopped
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", int(port)), 1):
            pass


def test_a_cluster_url_names_each_node() -> None:
    from moose_loadtest.probes.urls import is_cluster, node_urls

    url = "redis+cluster://u:pw@127.0.0.1:7000,127.0.0.1:7001"
    assert is_cluster(url) and not is_cluster("redis://127.0.0.1:7000/0")
    assert node_urls(url) == ["redis://u:pw@127.0.0.1:7000/0", "redis://u:pw@127.0.0.1:7001/0"]
    assert node_urls("unix:///tmp/r.sock") == ["unix:///tmp/r.sock"]


def test_cluster_needs_spawn(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from moose_loadtest.command import add_parser

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["loadtest", "--url", "ws://127.0.0.1:1/ws", "--cluster"])
    assert args.func(args) == 2
    assert "--cluster needs --spawn" in capsys.readouterr().out


def test_players_are_spread_round_robin_over_the_instances() -> None:
    from moose_loadtest.crowd import Job, Player, Run

    urls = ("ws://127.0.0.1:1/ws", "ws://127.0.0.1:2/ws", "ws://127.0.0.1:3/ws")
    run = Run(Job(mode="games", url=urls[0], players=6, spread=urls), 0.0)
    chosen = [Player(run, i, None).url for i in range(6)]  # type: ignore[arg-type]
    assert chosen == [*urls, *urls]
    alone = Run(Job(mode="games", url=urls[1], players=2), 0.0)
    assert {Player(alone, i, None).url for i in range(2)} == {urls[1]}  # type: ignore[arg-type]


async def test_a_player_socket_keeps_under_the_default_server_rate() -> None:
    """A socket sends at most MOOSE_RATE's default: a burst, then SOCKET_RATE a second."""
    from moose_loadtest.crowd import SOCKET_BURST, SOCKET_RATE, SocketPacer
    from moose_server.settings import Settings

    defaults = Settings()
    assert defaults.rate > SOCKET_RATE and defaults.burst > SOCKET_BURST
    pacer, sent = SocketPacer(), 0
    started = time.monotonic()
    while sent < SOCKET_BURST + 10:
        await pacer.wait()
        sent += 1
    # The pacer can only be slower than this on a busy machine, never faster.
    assert time.monotonic() - started >= (sent - SOCKET_BURST - 1) / SOCKET_RATE


def test_sockets_are_spread_over_loopback_addresses_under_the_default_cap() -> None:
    from moose_loadtest.crowd import SOCKETS_PER_ADDRESS, local_address
    from moose_loadtest.phases import _source_ips
    from moose_loadtest.run import Options
    from moose_server.settings import Settings

    assert Settings().max_sockets_per_address == SOCKETS_PER_ADDRESS
    for sockets, procs in ((80, 1), (800, 1), (800, 2), (10_000, 2)):
        opts = Options(procs=procs)
        n = _source_ips(opts, sockets, "ws://127.0.0.1:8080/ws")
        assert sockets / procs / n <= SOCKETS_PER_ADDRESS, (sockets, procs, n)
        addresses = {local_address(w * n + k) for w in range(procs) for k in range(n)}
        assert len(addresses) == procs * n  # no two workers share an address
    assert _source_ips(Options(), 800, "ws://192.0.2.1:8080/ws") == 0  # not ours to pick


def test_lobby_sizes_are_whole_tables_up_to_the_capacity() -> None:
    from moose_loadtest.lobby_phase import lobby_steps

    assert lobby_steps("2000,5000,max", 19_873, 4) == [2000, 5000, 19_872]
    assert lobby_steps("10, 6", 100, 4) == [4, 8]  # sorted, whole tables of 4
    assert lobby_steps("max,50000", 1000, 4) == [1000]  # nothing above what fits
    with pytest.raises(ValueError, match="less than one table"):
        lobby_steps("3", 100, 4)


def test_a_new_game_is_fast_forwarded_by_its_id_alone() -> None:
    """Every seat of a game, in any worker, agrees how far it is fast-forwarded."""
    from moose_loadtest.lobby import GAME_MOVES, spread_of

    spreads = {spread_of(f"g_{n:010x}") for n in range(500)}
    assert spreads <= set(range(GAME_MOVES)) and len(spreads) > GAME_MOVES // 2
    assert spread_of("g_0123456789") == spread_of("g_0123456789")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_lobby_run_grows_and_reports_each_size() -> None:
    """--lobby: two sizes, each measured; the report has every figure of a size."""
    cmd = [
        sys.executable,
        "-m",
        "moose",
        "loadtest",
        "--spawn",
        "--lobby",
        "8,16",
        "--rate",
        "20",
        "--duration",
        "3",
        "--warmup",
        "1",
        "--procs",
        "2",
        "--json",
    ]
    env = {**os.environ, "MOOSE_GAME_GRACE": "1"}  # the spawned server and the tool alike
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=280, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    lobby = json.loads(done.stdout)["lobby"]
    assert [s["players"] for s in lobby["steps"]] == [8, 16]
    assert lobby["limits"]["players"] >= 16
    for step in lobby["steps"]:
        assert step["errors"] == {} and step["errors_before_window"] == {}
        times = step["times"]  # Unix times of each phase's start, in order
        assert times["joining"] <= times["settling"] <= times["window"] < times["window_end"]
        assert step["moves"] > 0 and step["move_latency_ms"]["p99"] is not None
        assert step["server"]["rss_mb"] > 0 and step["server_bytes_per_player"] is not None
        assert step["redis"]["slowlog"]["threshold_us"] == 1000  # our own Redis logs > 1 ms
        histograms = step["server_histograms"]
        assert histograms["moose_move_latency_seconds{stage=commit}"]["count"] > 0
        assert histograms["moose_loop_lag_seconds"]["count"] > 0
        # The load generator's own loop lag, part of every latency it measures.
        assert step["load_generator"]["loop_lag_ms"]["p99"] is not None
    # Games running at the end of a window (mean size in Redis) in at least one of them.
    assert any((s["redis_memory_running"] or {}).get("mean_bytes") for s in lobby["steps"])
    compacted = lobby["redis_memory_finished_after_grace"]  # games ended in the windows
    assert compacted is None or 0 < compacted["max_bytes"] <= 4096
    report = json.loads(done.stdout)
    # 16 players fit any open-file limit: no warning about a million sockets.
    assert not [w for w in report.get("warnings", []) if "open-file" in w], report["warnings"]
    for step in lobby["steps"]:  # each measuring line ends on the figure the table shows
        mps = f"{step['moves_per_second']:,.0f}"
        assert f"lobby {step['players']}: measuring" in done.stderr
        assert f"{mps} moves/s, {step['players']} in" in done.stderr, done.stderr[-3000:]
        rows = dict(summary_rows(report))
        assert rows[f"lobby of {step['players']} players"] == ""
    assert [v for k, v in summary_rows(report) if k == "  moves per second"] == [
        f"{s['moves_per_second']:,.0f}" for s in lobby["steps"]
    ]


@pytest.mark.slow
def test_idle_sessions_answer_pings_and_are_held_past_the_heartbeat() -> None:
    """--connections: idle players read, so the server's pings are answered, none is cut."""
    cmd = [
        sys.executable,
        "-m",
        "moose",
        "loadtest",
        "--spawn",
        "--games",
        "0",
        "--connections",
        "20",
        "--hold",
        "3",
        "--json",
    ]
    env = {**os.environ, "MOOSE_HEARTBEAT": "0.4"}  # pinged several times over the hold
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=220, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    conns = json.loads(done.stdout)["connections"]
    assert (conns["connected"], conns["errors"]) == (20, {})
