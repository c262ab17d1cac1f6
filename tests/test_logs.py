"""Structured logs: one JSON object a line, carrying the ids of what it is about."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from moose_server.ops.logs import JsonFormatter, TextFormatter, configure
from moose_server.settings import Settings

from helpers import table_game

Line = dict[str, Any]


def record(msg: str = "hello %s", *args: Any, **extra: Any) -> logging.LogRecord:
    """A log record as `log.info(msg, *args, extra=extra)` makes it."""
    logger = logging.getLogger("moose_server.test")
    return logger.makeRecord(logger.name, logging.INFO, __file__, 1, msg, args, None, extra=extra)


def test_json_lines_parse_and_carry_the_ids():
    line = JsonFormatter("i_1").format(
        record("hello %s", "p_1", event="hello", player="p_1", game=None, games=["g_1"])
    )
    assert "\n" not in line
    out = json.loads(line)
    assert out["message"] == "hello p_1" and out["level"] == "INFO"
    assert out["logger"] == "moose_server.test" and out["time"].endswith("Z")
    assert (out["instance"], out["event"], out["player"], out["games"]) == (
        "i_1",
        "hello",
        "p_1",
        ["g_1"],
    )
    assert "game" not in out  # a None field is left out


def test_json_lines_hold_the_traceback():
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        rec = record("request failed", event="internal_error", player="p_2")
        rec.exc_info = sys.exc_info()
    out = json.loads(JsonFormatter().format(rec))
    assert "RuntimeError: boom" in out["exc"] and out["player"] == "p_2"
    assert "instance" not in out


def test_text_lines_show_the_ids_after_the_message():
    rec = record("over", event="game_over", game="g_1", seq=9, scores=[1, 2])
    line = TextFormatter().format(rec)
    assert line.endswith("INFO moose_server.test: over [event=game_over game=g_1 seq=9]")
    assert TextFormatter().format(record("plain")).endswith("INFO moose_server.test: plain")


def test_the_log_format_is_a_setting():
    assert Settings().log_format == "text"
    assert Settings.from_env({"MOOSE_LOG_FORMAT": "json"}).log_format == "json"
    with pytest.raises(ValueError, match="log_format"):
        Settings(log_format="xml")
    with pytest.raises(ValueError, match="xml"):
        configure("xml")


class Captured:
    """The moose_server log lines written as JSON while a test runs."""

    def __init__(self, stream: io.StringIO) -> None:
        self.stream = stream

    def lines(self) -> list[Line]:
        """Every line so far, parsed."""
        return [json.loads(line) for line in self.stream.getvalue().splitlines()]

    async def wait_for(self, event: str, **fields: Any) -> list[Line]:
        """The lines of one event with those field values, once there is one."""
        async with asyncio.timeout(10):
            while not (found := find(self.lines(), event, **fields)):
                await asyncio.sleep(0.02)
        return found


@pytest.fixture
def json_log() -> Iterator[Captured]:
    """Capture every moose_server log line, debug too, through the JSON formatter."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter("i_test"))
    logger = logging.getLogger("moose_server")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield Captured(stream)
    logger.removeHandler(handler)
    logger.setLevel(level)


def find(lines: list[Line], event: str, **fields: Any) -> list[Line]:
    """The lines of one event with those field values."""
    return [
        x
        for x in lines
        if x.get("event") == event and all(x.get(k) == v for k, v in fields.items())
    ]


async def test_a_game_logs_its_events_with_game_and_player_ids(moose_server, ws_client, json_log):
    url = await moose_server(turn_time=0.1, answer_time=0.1, away_after=1, poll_interval=0.02)
    a, b = await ws_client(url, "ann"), await ws_client(url, "bob")
    game, _ = await table_game([a, b])
    # Each refused: not_your_turn or illegal_move, as the 0.1 s turns have moved on.
    codes = [
        ((await c.request("move", game=game, move={"action": "fly"}))["code"], c) for c in (a, b)
    ]
    while (await a.expect(type="event", game=game, timeout=60))["event"]["kind"] != "over":
        pass  # nobody moves: timeouts, away seats, then the server plays it out
    queued = await ws_client(url, "quinn")
    await queued.request("queue", min_players=3)
    await a.close()
    await json_log.wait_for("disconnect", player=a.player)

    lines = json_log.lines()
    assert all(line["instance"] == "i_test" for line in lines)
    assert len(find(lines, "connect")) == 3
    for client in (a, b, queued):
        assert find(lines, "hello", player=client.player)
    assert find(lines, "match", game=game)[0]["players"] == [a.player, b.player]
    assert find(lines, "game_start", game=game, seq=1)
    for code, client in codes:
        assert code in ("illegal_move", "not_your_turn")
        assert find(lines, "error", code=code, game=game, player=client.player)
    timeouts = find(lines, "timeout", game=game)
    assert timeouts and all(isinstance(t["seat"], int) and t["seq"] > 1 for t in timeouts)
    assert find(lines, "away", game=game)
    assert len(find(lines, "game_over", game=game)) == 1
    assert find(lines, "queue", player=queued.player)


async def test_a_socket_refused_many_times_logs_its_1st_10th_and_100th_refusal(
    moose_server, ws_client, json_log
):
    url = await moose_server(following_every=3600, burst=1000, rate=1000)
    client = await ws_client(url, "flo", binary=False)
    answers = [await client.request("following") for _ in range(121)]
    assert [a["type"] for a in answers] == ["following"] + ["error"] * 120
    assert {a["code"] for a in answers[1:]} == {"rate_limited"}
    await json_log.wait_for("error", code="rate_limited", player=client.player)
    await client.request("ping")  # every refusal's line, if any, is written by now
    lines = find(json_log.lines(), "error", code="rate_limited", player=client.player)
    assert [line["refusals"] for line in lines] == [1, 10, 100]
    assert lines[1]["message"].endswith("(refusal 10 of this socket)")


async def test_moose_serve_writes_json_lines(moose_serve, ws_client, redis_url):
    proc = moose_serve("--redis", redis_url, "--log-format", "json", "--instance-id", "i_logs")
    client = await ws_client(proc.url, "ann")
    await client.close()
    assert proc.stop() == 0
    lines = [json.loads(line) for line in proc.log.read_text().splitlines() if line.strip()]
    assert {line["instance"] for line in lines} == {"i_logs"}
    assert find(lines, "hello", player=client.player)
    assert find(lines, "disconnect", player=client.player)


async def test_the_disconnect_line_shows_the_close_code_the_server_sent(serve, ws_client, json_log):
    # On drain the server closes with 1012; the client answers with 1000, which
    # aiohttp reports as the socket's close code. The line must say 1012.
    instance = await serve()
    client = await ws_client(instance.url, "ann")
    await instance.stop()
    assert await client.closed() == 1012
    (line,) = await json_log.wait_for("disconnect", player=client.player)
    assert (line["close_code"], line["closed_by"]) == (1012, "server")
    assert "close code 1012 from the server" in line["message"]


async def test_the_disconnect_line_shows_the_client_s_own_close(moose_server, ws_client, json_log):
    client = await ws_client(await moose_server(), "bea")
    await client.close()
    (line,) = await json_log.wait_for("disconnect", player=client.player)
    assert (line["close_code"], line["closed_by"]) == (1000, "client")
