"""Credentials stay out of logs: `moose.redact.redact_url`, the log formatters, and the
whole output of a real `moose serve` whose Redis wants a password."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from typing import Any

import pytest
import redis

from moose.redact import redact_url
from moose_server.ops.logs import JsonFormatter, TextFormatter, plain_message, scrub

from helpers import readme_acl, workout

PASSWORD = "s3cret-Pa55word"
USER_PASSWORD = "moose-Us3r-pw"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"redis://:{PASSWORD}@10.0.0.5:6379/0", "redis://***@10.0.0.5:6379/0"),
        (f"redis://moose:{PASSWORD}@h:6379/0", "redis://moose:***@h:6379/0"),
        (
            f"rediss://moose:{PASSWORD}@h:6380/0?ssl_ca_certs=/etc/ca.pem",
            "rediss://moose:***@h:6380/0?ssl_ca_certs=/etc/ca.pem",
        ),
        (f"redis://h:6379/0?password={PASSWORD}&db=1", "redis://h:6379/0?password=***&db=1"),
        (
            f"redis://h/0?username=moose&ssl_keyfile_password={PASSWORD}",
            "redis://h/0?username=moose&ssl_keyfile_password=***",
        ),
        (
            f"redis+cluster://moose:{PASSWORD}@a:7000,b:7001",
            "redis+cluster://moose:***@a:7000,b:7001",
        ),
        (f"unix://:{PASSWORD}@/run/redis.sock?db=0", "unix://***@/run/redis.sock?db=0"),
        (f"redis://{PASSWORD}@h:6379", "redis://***@h:6379"),  # a lone userinfo may be one
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),  # nothing to hide: as given
        ("ws://127.0.0.1:8080/ws?x=1", "ws://127.0.0.1:8080/ws?x=1"),
    ],
)
def test_redact_url_masks_passwords_and_keeps_the_rest(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_a_url_that_cannot_be_parsed_is_masked_whole() -> None:
    assert redact_url(f"redis://:{PASSWORD}@[::1") == "***"


def _record(msg: str, *args: Any) -> logging.LogRecord:
    """A warning record with a traceback whose message holds a URL with a password."""
    logger = logging.getLogger("moose_server.test")
    try:
        raise ConnectionError(f"cannot reach redis://:{PASSWORD}@db:6379/0")
    except ConnectionError:
        info = sys.exc_info()
    return logger.makeRecord(logger.name, logging.WARNING, __file__, 1, msg, args, info)


@pytest.mark.parametrize("formatter", [TextFormatter(), JsonFormatter("i_1")], ids=["text", "json"])
def test_both_log_formats_redact_urls_in_messages_and_tracebacks(
    formatter: logging.Formatter,
) -> None:
    line = formatter.format(_record("Redis: %s", f"rediss://moose:{PASSWORD}@db:6380/0"))
    assert PASSWORD not in line
    assert "rediss://moose:***@db:6380/0" in line and "redis://***@db:6379/0" in line
    if isinstance(formatter, JsonFormatter):
        assert json.loads(line)["message"] == "Redis: rediss://moose:***@db:6380/0"


def test_scrub_leaves_text_without_secrets_alone() -> None:
    text = "Moose House i_1 listening on http://127.0.0.1:8080 (WebSocket at /ws)"
    assert scrub(text) == text


# -- a real moose serve ------------------------------------------------------------------


@pytest.mark.slow
async def test_moose_serve_prints_no_redis_password(moose_serve, redis_factory) -> None:
    # A Redis started with --requirepass, and an ACL user made from deploy/README.md's rules.
    port = redis_factory(appendonly=False, extra=["--requirepass", PASSWORD]).port
    with redis.Redis(port=port, password=PASSWORD) as admin:
        admin.execute_command("ACL", "SETUSER", "moose", *readme_acl(USER_PASSWORD))
    urls = {
        "password": f"redis://:{PASSWORD}@127.0.0.1:{port}/0",
        "acl_user": f"redis://moose:{USER_PASSWORD}@127.0.0.1:{port}/0",
        "query": f"redis://127.0.0.1:{port}/0?password={PASSWORD}",
    }
    for name, url in urls.items():
        with redis.Redis(port=port, password=PASSWORD) as admin:
            admin.flushall()  # each run registers the same account
        # DEBUG: every line any library writes; stdout and stderr both go to the log file.
        args = ("--redis", url, "--log-level", "DEBUG", "--match-wait", "0.2")
        server = await asyncio.to_thread(moose_serve, *args, log=f"{name}.log")
        done = await workout(server.url)
        assert all(len(r) == 1 for r in done["results"]), done
        assert await asyncio.to_thread(server.stop) == 0
        output = server.log.read_text(errors="replace")
        assert PASSWORD not in output and USER_PASSWORD not in output, name
        # As the text log writes a message: its "=" escaped, so no field can be planted.
        assert plain_message(f"Redis: {redact_url(url)}") in output, output[-3000:]


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_the_load_test_report_shows_no_redis_password(redis_factory) -> None:
    port = redis_factory(appendonly=False, extra=["--requirepass", PASSWORD]).port
    url = f"redis://:{PASSWORD}@127.0.0.1:{port}/0"
    cmd = [
        sys.executable,
        "-m",
        "moose",
        "loadtest",
        "--spawn",
        "--redis",
        url,
        "--games",
        "2",
        "--warmup",
        "1",
        "--duration",
        "1",
        "--drain",
        "60",
        "--no-ceilings",
        "--json",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=220)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["games"] >= 2 and report["redis"]["commands_per_move"] > 0  # it used Redis
    assert PASSWORD not in done.stdout + done.stderr
    assert report["options"]["redis"] == report["redis_url"] == redact_url(url)
