"""deploy/nginx.conf in front of three real `moose serve` processes over one Redis.

nginx runs the very nginx.conf of the repo (symlinked into a temporary prefix,
beside an upstream file that lists three instances on loopback ports). Bots play
whole games through it; then one instance is killed (SIGKILL) or drained
(SIGTERM) in the middle of the games, and the games still finish: the client
library reconnects through nginx to another instance, which picks the games up
from Redis.

Needs nginx: skipped when it is not installed, except in CI (CI set), where a
missing nginx is a failure (.ci/run installs it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest

import moose
from moose import rules
from moose.bots import make_bot
from moose.client import Client, ServerError
from moose.protocol import PROTOCOL_VERSION
from moose_server.storage.embedded import EmbeddedRedis, free_port

from helpers import Certs, LoopbackPort, RawClient, make_certs, play_match, replay, until

pytestmark = pytest.mark.slow  # nginx and `moose serve` processes

Message = dict[str, Any]

NGINX_CONF = Path(__file__).resolve().parent.parent / "deploy" / "nginx.conf"
START_TIMEOUT = 30.0  # for a process to answer on its port
STOP_TIMEOUT = 10.0  # for a process to exit after SIGTERM (drain grace is 2 s here)
GAME_TIMEOUT = 60.0  # for a handful of bot games, a kill and the reconnects
SBIN = "/usr/sbin:/usr/local/sbin:/usr/local/nginx/sbin"  # not on a normal user's PATH


@pytest.fixture(scope="module")
def nginx_bin() -> str:
    """The nginx binary; skip without it, but fail in CI."""
    found = shutil.which("nginx") or shutil.which("nginx", path=SBIN)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but nginx is not installed (.ci/run installs nginx-light)")
        pytest.skip("nginx is not installed (apt-get install nginx-light); CI runs these tests")
    return found


# -- processes -----------------------------------------------------------------------


@dataclass
class Proc:
    """A child process whose output goes to log files."""

    name: str
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path

    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.process.poll() is None

    def tail(self, lines: int = 30) -> str:
        """The end of its output, for failure messages."""
        text = ""
        for path in (self.stdout, self.stderr):
            if path.exists():
                text += "".join(path.read_text(errors="replace").splitlines(True)[-lines:])
        return f"--- {self.name} (exit {self.process.poll()}) ---\n{text}"

    def send(self, sig: int = signal.SIGTERM) -> None:
        """Send `sig` if the process still runs."""
        if self.alive():
            self.process.send_signal(sig)

    def wait(self, timeout: float = STOP_TIMEOUT) -> int:
        """Wait for the exit (SIGKILL after `timeout`); the exit code."""
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout)


def spawn(name: str, cmd: list[str], folder: Path, env: dict[str, str] | None = None) -> Proc:
    """Start `cmd` with its stdout and stderr in files of `folder`."""
    out, err = folder / f"{name}.out", folder / f"{name}.err"
    with out.open("wb") as o, err.open("wb") as e:
        process = subprocess.Popen(cmd, stdout=o, stderr=e, stdin=subprocess.DEVNULL, env=env)
    return Proc(name, process, out, err)


def http_get(
    url: str,
    timeout: float = 5.0,
    headers: dict[str, str] | None = None,
    context: ssl.SSLContext | None = None,
) -> tuple[int, bytes]:
    """GET `url`: the status and the body (also for 4xx and 5xx answers)."""
    status, _, body = http_answer(url, timeout, headers, context)
    return status, body


def http_answer(
    url: str,
    timeout: float = 5.0,
    headers: dict[str, str] | None = None,
    context: ssl.SSLContext | None = None,
) -> tuple[int, Any, bytes]:
    """GET `url`: the status, the headers and the body (also for 4xx and 5xx answers)."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def wait_ok(proc: Proc, url: str) -> None:
    """Wait until `url` answers 200; fail with the process' output if it never does."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if not proc.alive():
            break
        try:
            if http_get(url, timeout=2.0)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    pytest.fail(f"{url} did not answer 200 in time\n{proc.tail()}")


def moose_serve(redis_url: str, port: int, folder: Path) -> Proc:
    """`moose serve` on 127.0.0.1:`port` over the test Redis, tuned for quick tests."""
    cmd = [
        sys.executable,
        "-m",
        "moose",
        "serve",
        "--redis",
        redis_url,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--instance-id",
        f"i_{port}",
        "--match-wait",
        "0.2",
        "--poll-interval",
        "0.05",
        "--drain-grace",
        "2",
        "--log-level",
        "INFO",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOOSE_")}
    env["MOOSE_MATCH_INTERVAL"] = "0.05"
    env["MOOSE_TRUSTED_PROXIES"] = "127.0.0.1"  # nginx: its X-Forwarded-For names the client
    env["MOOSE_METRICS_FROM"] = "127.0.0.0/8,10.0.0.0/8"  # as compose.yaml: scrapers inside
    return spawn(f"moose-{port}", cmd, folder, env)


def tls_conf(port: int, certs: Certs) -> str:
    """deploy/nginx/tls.conf filled in as its comment asks: its lines uncommented, with
    this port and these certificate paths."""
    text = (NGINX_CONF.parent / "nginx" / "tls.conf").read_text()
    text = re.sub(r"^# (listen|ssl_certificate)", r"\1", text, flags=re.M)
    text = re.sub(r"^listen \d+", f"listen 127.0.0.1:{port}", text, flags=re.M)
    text = re.sub(r"^(ssl_certificate\s+)\S+;", rf"\g<1>{certs.cert};", text, flags=re.M)
    return re.sub(r"^(ssl_certificate_key\s+)\S+;", rf"\g<1>{certs.key};", text, flags=re.M)


def nginx_prefix(
    folder: Path, listen: int, upstreams: list[int], tls: tuple[int, Certs] | None = None
) -> Path:
    """A prefix holding a symlink to deploy/nginx.conf and the files it includes; with
    `tls`, nginx also serves TLS on that port with those certificates."""
    prefix = folder / "nginx"
    (prefix / "nginx").mkdir(parents=True)
    (prefix / "nginx.conf").symlink_to(NGINX_CONF)
    lines = [f"server 127.0.0.1:{port} max_fails=1 fail_timeout=10s;\n" for port in upstreams]
    (prefix / "nginx" / "upstream.conf").write_text("".join(lines))
    # A test stands for a client at any address by sending X-Forwarded-For from
    # 127.0.0.1 (nginx's realip module takes it as the client's address then).
    (prefix / "nginx" / "listen.conf").write_text(
        f"listen 127.0.0.1:{listen};\nset_real_ip_from 127.0.0.1;\n"
        "real_ip_header X-Forwarded-For;\n"
    )
    conf = NGINX_CONF.parent / "nginx" / "tls.conf"
    (prefix / "nginx" / "tls.conf").write_text(tls_conf(*tls) if tls else conf.read_text())
    return prefix


def nginx_cmd(nginx_bin: str, prefix: Path, *extra: str) -> list[str]:
    """The nginx command line for `prefix`, in the foreground."""
    return [
        nginx_bin,
        "-p",
        f"{prefix}/",
        "-c",
        str(prefix / "nginx.conf"),
        "-g",
        f"daemon off; pid {prefix}/nginx.pid;",
        *extra,
    ]


@dataclass
class Cluster(LoopbackPort):
    """Three instances behind nginx (`url` and `http` go through nginx)."""

    port: int  # nginx
    instances: list[Proc]
    ports: list[int]
    nginx: Proc
    tls: tuple[int, Certs] | None = None  # nginx's TLS port and its certificates
    procs: list[Proc] = field(default_factory=list)
    marks: tuple[int, int] = (0, 0)  # where the current test's part of nginx's logs begins

    def tails(self) -> str:
        """Every process' last lines, for failure messages."""
        return "\n".join(p.tail() for p in [*self.instances, self.nginx])

    def mark(self) -> Cluster:
        """Start the logs afresh for the next test (on a cluster tests share)."""
        self.marks = (self.nginx.stdout.stat().st_size, self.nginx.stderr.stat().st_size)
        return self

    def access_log(self) -> str:
        """nginx's access log since the mark."""
        return self.nginx.stdout.read_bytes()[self.marks[0] :].decode(errors="replace")

    def error_log(self) -> str:
        """nginx's error log since the mark."""
        return self.nginx.stderr.read_bytes()[self.marks[1] :].decode(errors="replace")

    def upstreams_of_sockets(self) -> set[str]:
        """The instances that WebSockets went to, from nginx's access log (closed ones)."""
        return set(re.findall(r'"GET /ws HTTP/1\.1" 101 .*?upstream=(\S+)', self.access_log()))


@contextlib.contextmanager
def running_cluster(
    nginx_bin: str, redis_url: str, folder: Path, certs: Certs | None = None
) -> Iterator[Cluster]:
    """Three `moose serve` processes over `redis_url`, and nginx in front of them
    (serving TLS too with `certs`)."""
    ports = [free_port() for _ in range(3)]
    instances = [moose_serve(redis_url, port, folder) for port in ports]
    listen = free_port()
    tls = (free_port(), certs) if certs else None
    prefix = nginx_prefix(folder, listen, ports, tls)
    nginx = spawn("nginx", nginx_cmd(nginx_bin, prefix), folder)
    cluster = Cluster(listen, instances, ports, nginx, tls)
    try:
        for proc, port in zip(instances, ports, strict=True):
            wait_ok(proc, f"http://127.0.0.1:{port}/readyz")
        wait_ok(nginx, f"{cluster.http}/healthz")
        yield cluster
    finally:
        nginx.send()
        nginx.wait()
        for proc in instances:
            proc.send()
        for proc in instances:
            proc.wait()


@pytest.fixture
def own_cluster(nginx_bin: str, redis_url: str, tmp_path: Path) -> Iterator[Cluster]:
    """A cluster for one test, over the test Redis: for tests that stop an instance."""
    with running_cluster(nginx_bin, redis_url, tmp_path) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def shared_cluster(nginx_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One cluster, over a Redis of its own, for the tests that leave it as it was.

    Starting three instances and nginx takes seconds; the tests that share it come
    last in this file, so that it is not running beside the others' clusters.
    """
    folder = tmp_path_factory.mktemp("shared-cluster")
    redis = EmbeddedRedis(folder / "redis", port=free_port(), appendonly=False)
    certs = make_certs(folder / "certs")
    with redis, running_cluster(nginx_bin, redis.url, folder, certs) as cluster:
        yield cluster


@pytest.fixture
def cluster(shared_cluster: Cluster) -> Cluster:
    """The shared cluster, its logs read from the start of this test."""
    return shared_cluster.mark()


# -- nginx alone -----------------------------------------------------------------------


def test_nginx_accepts_the_deploy_conf(nginx_bin: str, tmp_path: Path) -> None:
    prefix = nginx_prefix(tmp_path, free_port(), [free_port(), free_port()])
    out = subprocess.run(nginx_cmd(nginx_bin, prefix, "-t"), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_nginx_accepts_the_tls_conf_once_filled_in(nginx_bin: str, tmp_path: Path) -> None:
    certs = make_certs(tmp_path / "certs")
    tls = (free_port(), certs)
    prefix = nginx_prefix(tmp_path, free_port(), [free_port()], tls)
    filled = (prefix / "nginx" / "tls.conf").read_text()
    assert (
        f"listen 127.0.0.1:{tls[0]} ssl;" in filled
        and f"ssl_certificate_key {certs.key};" in filled
    )
    out = subprocess.run(nginx_cmd(nginx_bin, prefix, "-t"), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


# -- an instance goes away (a cluster of its own) ----------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "drain"])
async def test_games_finish_when_an_instance_goes_away(own_cluster: Cluster, sig: int) -> None:
    cluster = own_cluster
    clients = [Client(cluster.url, name=f"bot{i}", reconnect_timeout=30.0) for i in range(4)]
    progress: dict[str, int] = {}
    try:
        async with asyncio.timeout(GAME_TIMEOUT):
            for client in clients:
                await client.open()
            tasks = [
                asyncio.create_task(play_slowly(c, seed=i, progress=progress))
                for i, c in enumerate(clients)
            ]
            # Both games are under way (a few moves in, none over) before the instance goes.
            while len(progress) < 2 or min(progress.values()) < 4:
                assert not any(t.done() for t in tasks), cluster.tails()
                await asyncio.sleep(0.02)
            victim = cluster.instances[0]
            victim.process.send_signal(sig)
            finished = await asyncio.gather(*tasks)
            try:
                code: int | None = await asyncio.to_thread(victim.process.wait, STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                code = None  # hung on its way out
            by_game: dict[str, list[tuple[int, Message]]] = {}
            for game, seat, view in finished:
                by_game.setdefault(game, []).append((seat, view))
            for game, seats in by_game.items():
                assert sorted(seat for seat, _ in seats) == [0, 1]
                scores = seats[0][1]["scores"]
                assert seats[1][1]["scores"] == scores
                check_record(await clients[0].record(game), scores)
    finally:
        for client in clients:
            await client.close()
    assert len(by_game) == 2
    # Four sockets over three instances: the victim held at least one of them.
    assert sum(c.reconnects for c in clients) >= 1, cluster.tails()
    # Drained: a clean exit within two drain graces, not a kill.
    assert code == (-signal.SIGKILL if sig == signal.SIGKILL else 0), victim.tail()


async def play_slowly(
    client: Client, *, seed: int, progress: dict[str, int], delay: float = 0.05
) -> tuple[str, int, Message]:
    """Queue for a 2-seat table and play it with a pause before each move."""
    bot = make_bot("greedy", seed=seed)

    async def turn(game: str, msg: Message) -> None:
        await asyncio.sleep(delay)
        try:
            await client.move(game, bot.choose(msg["view"], msg["legal"]), seq=msg["seq"])
        except ServerError as exc:
            assert exc.code in ("stale_seq", "not_your_turn"), exc

    await client.queue(2, 2)
    game, seat, events = await play_match(client, progress, turn)
    return game, seat, events[-1]["view"]


# -- through nginx ---------------------------------------------------------------------


def test_probes_go_through_nginx_to_every_instance(cluster: Cluster) -> None:
    status, body = http_get(f"{cluster.http}/healthz")
    assert status == 200 and json.loads(body) == {"ok": True}
    for _ in range(9):
        status, body = http_get(f"{cluster.http}/readyz")
        assert (status, json.loads(body)) == (200, {"ready": True})
    # No stickiness: with no sockets open, requests take turns over the instances
    # (the answer names none: nginx's access log says which one answered).
    seen = set(re.findall(r'"GET /readyz HTTP/1\.1" 200 .*?upstream=(\S+)', cluster.access_log()))
    assert seen == {f"127.0.0.1:{port}" for port in cluster.ports}


def test_metrics_are_proxied_and_other_paths_are_not(cluster: Cluster) -> None:
    direct = http_get(f"http://127.0.0.1:{cluster.ports[0]}/metrics")[0]
    assert http_get(f"{cluster.http}/metrics")[0] == direct
    assert http_get(f"{cluster.http}/nothing-here")[0] == 404
    assert http_get(f"{cluster.http}/healthz/../ws-not")[0] == 404


def test_the_browser_client_is_served_through_nginx(cluster: Cluster) -> None:
    pages = (
        "/",
        "/t/KX7P2M",
        "/w/g_9f8e7d6c5b",
        "/play/g_9f8e7d6c5b",
        "/p/ann",
        "/g/g_1",
        "/arena/a_1",
        "/arenas",
        "/leaderboard",
        "/leaderboard/bots",
        "/rules",
        "/account",
    )
    for path in pages:
        status, body = http_get(f"{cluster.http}{path}")
        assert status == 200 and b"<title>Moose House</title>" in body, (path, status)
    script = re.search(rb'src="(/static/[0-9a-f]+/app\.js)"', body)
    assert script is not None
    assert http_get(f"{cluster.http}{script.group(1).decode()}")[0] == 200


def test_a_browser_asking_for_a_path_nobody_has_gets_the_page_that_says_so(
    cluster: Cluster,
) -> None:
    html = {"Accept": "text/html,application/xhtml+xml"}
    status, body = http_get(f"{cluster.http}/no/such/page", headers=html)
    assert status == 404 and b"<title>Moose House</title>" in body
    status, body = http_get(f"{cluster.http}/metrics-not", headers=html)
    assert status == 404 and b"<title>Moose House</title>" in body
    # A program gets a plain 404, and no other route of an instance is reached.
    status, body = http_get(f"{cluster.http}/no/such/page")
    assert status == 404 and b"Moose House" not in body
    assert http_get(f"{cluster.http}/healthz/x", headers=html)[0] == 404


def test_tls_serves_the_same_routes_with_hsts(cluster: Cluster) -> None:
    assert cluster.tls is not None
    port, certs = cluster.tls
    https = f"https://127.0.0.1:{port}"
    context = certs.client_context()  # trusts the test's CA only, and checks the host
    status, headers, body = http_answer(f"{https}/healthz", context=context)
    assert (status, json.loads(body)) == (200, {"ok": True})
    assert headers["Strict-Transport-Security"] == "max-age=63072000; includeSubDomains"
    status, headers, body = http_answer(f"{https}/t/KX7P2M", context=context)
    assert status == 200 and b"<title>Moose House</title>" in body
    assert "Strict-Transport-Security" in headers
    # Over plain HTTP browsers ignore HSTS: nginx sends none.
    status, headers, _ = http_answer(f"{cluster.http}/healthz")
    assert status == 200 and "Strict-Transport-Security" not in headers


async def test_a_page_served_over_tls_opens_its_socket_and_no_other_site_can(
    cluster: Cluster,
) -> None:
    # nginx tells the instance the scheme and host the browser used (X-Forwarded-Proto,
    # X-Forwarded-Host); the instance trusts 127.0.0.1 as a proxy and checks Origin by it.
    assert cluster.tls is not None
    port, certs = cluster.tls
    url = f"wss://127.0.0.1:{port}/ws"
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(
            url, ssl=certs.client_context(), origin=f"https://127.0.0.1:{port}"
        ) as ws:
            await ws.send_json({"type": "hello", "protocol": PROTOCOL_VERSION, "name": "tls"})
            assert (await ws.receive_json(timeout=10))["type"] == "welcome"
        for foreign in (f"http://127.0.0.1:{port}", "https://evil.example"):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(url, ssl=certs.client_context(), origin=foreign)
            assert refused.value.status == 403, foreign
        # The page served over plain HTTP by nginx is its own origin there.
        async with session.ws_connect(cluster.url, origin=cluster.http) as ws:
            await ws.send_json({"type": "hello", "protocol": PROTOCOL_VERSION, "name": "plain"})
            assert (await ws.receive_json(timeout=10))["type"] == "welcome"


def test_metrics_and_readyz_answer_private_networks_only(cluster: Cluster) -> None:
    outside = {"X-Forwarded-For": "203.0.113.7"}  # a client on the internet (see listen.conf)
    inside = {"X-Forwarded-For": "10.1.2.3"}
    for path in ("/metrics", "/readyz"):
        assert http_get(f"{cluster.http}{path}", headers=outside)[0] == 403, path
        assert http_get(f"{cluster.http}{path}", headers=inside)[0] == 200, path
    for path in ("/healthz", "/api/leaderboard", "/"):
        assert http_get(f"{cluster.http}{path}", headers=outside)[0] == 200, path


async def test_nginx_limits_api_requests_per_address(cluster: Cluster) -> None:
    url = f"{cluster.http}/api/leaderboard"

    async def get(session: aiohttp.ClientSession, address: str) -> int:
        async with session.get(url, headers={"X-Forwarded-For": address}) as answer:
            return answer.status

    # 60 at once from one address: a burst of 20 (and 10 a second) pass, the rest get 429.
    async with aiohttp.ClientSession() as session:
        statuses = await asyncio.gather(*(get(session, "203.0.113.8") for _ in range(60)))
        other = await get(session, "203.0.113.9")
    assert set(statuses) == {200, 429} and statuses.count(200) >= 21, statuses
    assert "limiting requests" in cluster.error_log()
    assert other == 200  # another address is not held back by this one


async def test_bots_play_whole_games_through_nginx(cluster: Cluster) -> None:
    async with asyncio.timeout(GAME_TIMEOUT):
        results = await asyncio.gather(
            *(
                moose.play_bot(cluster.url, "greedy", 1, name=f"bot{i}", max_players=2, seed=i)
                for i in range(4)
            )
        )
    by_game: dict[str, list[moose.GameResult]] = {}
    for (result,) in results:
        by_game.setdefault(result.game, []).append(result)
    assert len(by_game) == 2, cluster.tails()
    for seats in by_game.values():
        assert sorted(r.seat for r in seats) == [0, 1]
        assert seats[0].scores == seats[1].scores and seats[0].winners == seats[1].winners
    async with asyncio.timeout(GAME_TIMEOUT):
        async with moose.connect(cluster.url, name="referee") as client:
            for game, seats in by_game.items():
                check_record(await client.record(game), seats[0].scores)
    # least_conn spreads four sockets over all three instances. A socket is logged
    # when it closes: give nginx a moment to write the last lines.
    expected = {f"127.0.0.1:{port}" for port in cluster.ports}

    async def logged() -> bool:
        return cluster.upstreams_of_sockets() == expected

    with contextlib.suppress(TimeoutError):
        await until(logged, timeout=30, every=0.1)
    assert cluster.upstreams_of_sockets() == expected, cluster.access_log()


def check_record(record: Message, scores: list[int]) -> None:
    """The game's record replays to its end with the scores the players saw."""
    state = replay(record)
    assert rules.is_over(state)
    assert rules.scores(state) == scores == record["result"]["scores"]


# -- limits per client address ------------------------------------------------------


async def open_sockets(url: str, address: str, count: int) -> tuple[list[Any], list[int]]:
    """Up to `count` sockets from `address` that said hello, all at once; the statuses
    of the handshakes refused."""
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(address, 0)))

    async def one(i: int) -> Any:
        try:
            client = RawClient(await session.ws_connect(url), True)
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status
        await client.hello(f"p{i}")
        return client

    done = await asyncio.gather(*(one(i) for i in range(count)))
    opened = [c for c in done if isinstance(c, RawClient)]
    opened.append(session)  # closed last by close_all
    return opened, [s for s in done if isinstance(s, int)]


async def close_all(opened: list[Any]) -> None:
    for item in opened:
        await item.close()


async def test_nginx_limits_new_sockets_per_address(cluster: Cluster) -> None:
    # 99 handshakes at once (under the 100 open sockets allowed): a burst of 40 (and 10
    # a second) pass, the rest get 429. All would pass only if they took 6 s to arrive.
    opened, refused = await open_sockets(cluster.url, "127.0.0.2", 99)
    try:
        assert len(opened) - 1 >= 41 and set(refused) == {429}, (len(opened), refused)
        assert "limiting requests" in cluster.error_log()
    finally:
        await close_all(opened)


async def test_nginx_limits_open_sockets_per_address(cluster: Cluster) -> None:
    # Sockets are opened as fast as the handshake limit lets them, until the 100 of one
    # address are open: the next is refused 429 for the open sockets, not the rate.
    opened: list[Any] = []
    try:
        async with asyncio.timeout(GAME_TIMEOUT):
            while len(opened) < 2 * 100:
                more, _ = await open_sockets(cluster.url, "127.0.0.3", 10)
                opened += more
                if len(more) < 11 and "limiting connections" in cluster.error_log():
                    break
                await asyncio.sleep(0.5)
        assert sum(isinstance(c, RawClient) for c in opened) == 100
        assert "limiting connections" in cluster.error_log()
        # Another address is not held back by this one.
        other, refused = await open_sockets(cluster.url, "127.0.0.4", 1)
        opened += other
        assert refused == []
    finally:
        await close_all(opened)
