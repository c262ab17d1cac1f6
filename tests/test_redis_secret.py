"""The Redis password stays out of the process list: a real `moose serve` on a Redis
with a password, given the URL the documented ways (MOOSE_REDIS_URL_FILE, the
Dockerfile's own command with MOOSE_REDIS_URL), has none of it in
/proc/PID/cmdline; `--redis` with a password still works but is warned of.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import redis

from moose_server.storage.embedded import free_port

PASSWORD = "cedar-lantern-4417-quiet"
DOCKERFILE = Path(__file__).resolve().parent.parent / "deploy" / "Dockerfile"


def cmdline(pid: int) -> str:
    """The process's command line as `ps` shows it (its arguments, space-separated)."""
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def password_redis(redis_factory) -> str:
    """The URL, password in it, of a Redis that refuses anyone without it."""
    port = redis_factory(appendonly=False, extra=["--requirepass", PASSWORD]).port
    return f"redis://:{PASSWORD}@127.0.0.1:{port}/0"


def test_a_url_in_a_file_keeps_the_password_out_of_the_command_line(
    moose_serve, redis_factory, tmp_path
):
    secret = tmp_path / "redis-url"
    secret.write_text(password_redis(redis_factory) + "\n")
    server = moose_serve(env={"MOOSE_REDIS_URL_FILE": str(secret)})
    assert server.proc is not None
    with redis.Redis.from_url(secret.read_text().strip()) as r:
        assert r.dbsize() > 0  # the server keeps its data there, not in a bundled Redis
    assert PASSWORD not in cmdline(server.proc.pid)
    assert "the Redis password is on the command line" not in server.log.read_text()


def test_the_password_on_the_command_line_is_warned_of(moose_serve, redis_factory):
    server = moose_serve("--redis", password_redis(redis_factory))
    assert server.proc is not None
    assert PASSWORD in cmdline(server.proc.pid)  # what the warning is about
    log = server.log.read_text()
    assert "the Redis password is on the command line" in log
    assert PASSWORD not in log


def test_url_and_url_file_both_given_is_refused(moose_serve, redis_url, tmp_path):
    secret = tmp_path / "redis-url"
    secret.write_text(redis_url)
    env = {"MOOSE_REDIS_URL": redis_url, "MOOSE_REDIS_URL_FILE": str(secret)}
    server = moose_serve(env=env, wait=False)
    assert server.proc is not None and server.proc.wait(30) == 2
    assert "not both" in server.log.read_text()


def docker_cmd() -> list[str]:
    """The Dockerfile's CMD (exec form), listening on loopback rather than every address."""
    (line,) = [ln for ln in DOCKERFILE.read_text().splitlines() if ln.startswith("CMD ")]
    argv = json.loads(line.removeprefix("CMD "))
    assert "--host 0.0.0.0" in argv[-1]
    return [*argv[:-1], argv[-1].replace("--host 0.0.0.0", "--host 127.0.0.1")]


@pytest.mark.slow
def test_the_dockerfile_command_keeps_the_password_out_of_ps(redis_factory, tmp_path):
    port = free_port()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("MOOSE_")
    }  # as a fresh container
    env |= {"PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}"}
    missing = subprocess.run(docker_cmd(), env=env, capture_output=True, text=True, timeout=30)
    assert missing.returncode == 2 and "set MOOSE_REDIS_URL" in missing.stderr
    env |= {
        "MOOSE_REDIS_URL": password_redis(redis_factory),
        "MOOSE_PORT": str(port),
        "MOOSE_DATA_DIR": str(tmp_path / "data"),
    }
    with (tmp_path / "docker.log").open("wb") as out:
        proc = subprocess.Popen(docker_cmd(), env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        ready(port, proc, tmp_path / "docker.log")
        seen = cmdline(proc.pid)  # `exec`: the shell became the server, PID and all
        assert re.search(r"moose serve", seen) and PASSWORD not in seen, seen
    finally:
        proc.terminate()
        proc.wait(30)


def ready(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until the server at `port` answers /readyz (it reached the Redis)."""
    for _ in range(600):
        assert proc.poll() is None, log.read_text()[-2000:]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError(log.read_text()[-2000:])
