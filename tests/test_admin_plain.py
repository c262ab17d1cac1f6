"""`moose admin` prints names and reasons as plain text, and the text log format keeps
a name from passing for a field: a real `moose serve`, raw protocol clients
(PROTOCOL.md frames), `moose admin` as a subprocess.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from moose_server.ops.logs import TextFormatter

from helpers import RawClient, admin, until

PASSWORD = "tr0ub4dor&3 moose house"
# Each would be markup to rich: a crash, a link to another site, hidden text.
REASONS = [
    "closes [/] nothing",
    "see [link=https://evil.example]here[/link]",
    "[white on white]hidden[/]",
]
NAME = "m[/]x"  # a player's name is anyone's text too


@pytest.mark.slow  # a server and five `moose admin` runs
async def test_admin_listings_print_names_and_reasons_as_they_are(
    moose_serve, redis_url, ws_client
):
    server = moose_serve("--redis", redis_url, "--rate", "5", "--burst", "5")
    grace: RawClient = await ws_client(server.url, "grace")
    assert (await grace.request("register", password=PASSWORD))["type"] == "registered"
    frank: RawClient = await ws_client(server.url, NAME)
    assert frank.name == NAME, frank.name
    for reason in REASONS:
        answer = await frank.request("report", player="grace", reason=reason)
        assert answer["type"] == "reported", answer
    reports = await admin("--redis", redis_url, "reports")
    assert reports.code == 0, reports.err
    for text in [*REASONS, NAME]:
        assert text in reports.text, (text, reports.text)

    banned = await admin("--redis", redis_url, "ban", "grace", "--reason", REASONS[1])
    assert banned.code == 0 and REASONS[1] in banned.text, (banned.text, banned.err)
    for action in ("bans", "audit"):
        run = await admin("--redis", redis_url, action)
        assert run.code == 0 and REASONS[1] in run.text, (action, run.text, run.err)

    for n in range(30):  # a refusal of the player called NAME
        await frank.send({"type": "ping", "id": n})
    await frank.expect(type="error", code="rate_limited")

    async def listed() -> str:
        run = await admin("--redis", redis_url, "refusals")
        assert run.code == 0, run.err
        return run.text if frank.player in run.text else ""

    assert NAME in await until(listed, timeout=20, every=0.2)


def test_a_name_in_a_text_log_line_cannot_plant_fields_or_lines():
    name = "x [event=ban player=p_admin]\n2026-01-01 INFO fake: y"
    record = logging.LogRecord(
        "moose_server.test", logging.INFO, __file__, 1, "hello %s", (name,), None
    )
    extra: dict[str, Any] = {"event": "hello", "player": "p_1 event=ban", "game": "g_1"}
    record.__dict__.update(extra)
    line = TextFormatter().format(record)
    assert "\n" not in line
    assert line.count("[event=") == 1 and "player=p_admin" not in line, line
    assert line.endswith('[event=hello game=g_1 player="p_1 event=ban"]'), line
