"""`moose admin` against real `moose serve` processes over one test Redis.

Raw protocol clients (PROTOCOL.md frames) on two instances; `moose admin` as a
subprocess. A ban issued on one side holds on the other: waited for, never timed.
"""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import redis

from moose_server.storage.keys import ModerationKeys

from helpers import (
    RawClient,
    account_socket,
    admin,
    drive,
    serve_several,
    spawn,
    table_game,
    until,
)

PASSWORD = "tr0ub4dor&3 moose house"
ENV = {"MOOSE_BAN_REFRESH": "1"}


async def again(ws_client: Any, url: str, token: str) -> dict[str, Any]:
    """A new socket's answer to a hello with `token` (its close code too, if it closed)."""
    client: RawClient = await ws_client(url, None)
    answer = await client.hello(token=token)
    if answer["type"] == "error":
        answer["closed"] = await client.closed()
    await client.close()
    return answer


async def test_a_ban_holds_on_the_other_instance_and_closes_open_sockets(
    moose_serve, redis_url, ws_client
):
    first, second = serve_several(moose_serve, redis_url, ENV)
    mallory = await account_socket(ws_client, first.url, "mallory", PASSWORD)
    elsewhere: RawClient = await ws_client(second.url, None)
    assert (await elsewhere.hello(token=mallory.token))["type"] == "welcome"

    run = await admin(
        "--redis",
        redis_url,
        "--by",
        "mod1",
        "ban",
        "mallory",
        "--for",
        "1h",
        "--reason",
        "spamming tables",
    )
    assert run.code == 0, run.err
    assert "banned account mallory" in run.text and "heard by 2 instance(s)" in run.text

    # The socket already open on the other instance is told why, then closed.
    error = await elsewhere.expect(type="error", code="banned")
    assert error["reason"] == "spamming tables"
    assert 3_500_000 < error["retry_after"] <= 3_601_000 and error["until"] > 0
    assert await elsewhere.closed() == 4003
    assert await mallory.closed() == 4003
    refused = await again(ws_client, second.url, mallory.token)
    assert (refused["code"], refused["closed"]) == ("banned", 4003)
    # A login with the password is refused too; another player is not.
    other: RawClient = await ws_client(second.url, None)
    login = await other.request("hello", protocol=1, name="mallory", password=PASSWORD)
    assert login["code"] == "banned"
    assert (await (await ws_client(second.url, None)).hello("alice"))["type"] == "welcome"

    for proc in (first, second):  # each instance logs what it applied
        assert f"moderation: ban account:{mallory.player} by mod1" in proc.log.read_text()
    bans = await admin("--redis", redis_url, "bans")
    assert "mallory" in bans.text and "spamming tables" in bans.text
    run = await admin("--redis", redis_url, "--by", "mod2", "unban", "mallory", "--reason", "ok")
    assert run.code == 0, run.err

    async def welcomed() -> bool:  # a token of before the ban works no more: the password
        sock: RawClient = await ws_client(second.url, None)
        login = await sock.request("hello", protocol=1, name="mallory", password=PASSWORD)
        return login["type"] == "welcome"

    await until(welcomed, timeout=10)
    audit = await admin("--redis", redis_url, "audit")
    rows = [line for line in audit.out if "mallory" in line]
    assert "unban" in rows[0] and "mod2" in rows[0] and " ban " in rows[1] and "mod1" in rows[1]
    assert "spamming tables" in rows[1]


async def test_a_banned_address_is_refused_at_hello_and_on_the_api(
    moose_serve, redis_url, ws_client
):
    [server] = [moose_serve("--redis", redis_url, env=ENV)]
    open_before: RawClient = await ws_client(server.url, "bob")
    run = await admin(
        "--redis",
        redis_url,
        "ban",
        "--address",
        "127.0.0.0/24",
        "--for",
        "10m",
        "--reason",
        "flood",
    )
    assert run.code == 0, run.err
    assert "banned address 127.0.0.0/24" in run.text
    assert (await open_before.expect(type="error", code="banned"))["reason"] == "flood"
    assert await open_before.closed() == 4003

    client: RawClient = await ws_client(server.url, None)
    refused = await client.hello("carol")
    assert refused["code"] == "banned" and 0 < refused["retry_after"] <= 600_000
    assert "your address is banned" in refused["message"]
    assert await client.closed() == 4003
    try:
        urllib.request.urlopen(f"{server.http}/api/leaderboard", timeout=5)
        raise AssertionError("a banned address got an API answer")
    except urllib.error.HTTPError as exc:
        assert exc.code == 403
        assert json.loads(exc.read())["error"] == "banned"
        assert 0 < int(exc.headers["Retry-After"]) <= 600

    # A wrong address is refused by moose admin, and nothing is banned by it.
    bad = await admin("--redis", redis_url, "ban", "--address", "not-an-ip", "--reason", "x")
    assert bad.code == 1 and "not an IP address" in bad.err
    assert (await admin("--redis", redis_url, "bans")).text.count("address") == 1

    assert (await admin("--redis", redis_url, "unban", "--address", "127.0.0.1/24")).code == 0

    async def welcomed() -> bool:
        fresh: RawClient = await ws_client(server.url, None)
        answer = await fresh.hello("carol")
        await fresh.close()
        return answer["type"] == "welcome"

    await until(welcomed, timeout=10)
    with urllib.request.urlopen(f"{server.http}/api/leaderboard", timeout=5) as resp:
        assert resp.status == 200


async def test_ending_a_session_closes_its_sockets_on_every_instance(
    moose_serve, redis_url, ws_client
):
    first, second = serve_several(moose_serve, redis_url, ENV)
    carol: RawClient = await ws_client(first.url, "carol")  # a guest: named by player id
    twin: RawClient = await ws_client(second.url, None)
    assert (await twin.hello(token=carol.token))["type"] == "welcome"
    bystander: RawClient = await ws_client(second.url, "dave")

    run = await admin("--redis", redis_url, "end-session", carol.player, "--reason", "cool off")
    assert run.code == 0, run.err
    assert await carol.closed() == 4004 and await twin.closed() == 4004
    assert twin.ws.close_code == 4004
    assert (await bystander.request("ping"))["type"] == "pong"
    # Not banned: the player may come back.
    assert (await again(ws_client, second.url, carol.token))["type"] == "welcome"
    audit = await admin("--redis", redis_url, "audit")
    assert "end_session" in audit.text and "cool off" in audit.text


async def test_a_seat_taken_over_is_played_by_the_bot_until_its_player_returns(
    moose_serve, redis_url, ws_client
):
    first, second = serve_several(moose_serve, redis_url, ENV)
    erin: RawClient = await ws_client(first.url, "erin")
    ivan: RawClient = await ws_client(second.url, "ivan")  # plays whenever asked
    game, [seat, _] = await table_game([erin, ivan])
    run = await admin("--redis", redis_url, "takeover", game, "erin", "--reason", "afk")
    assert run.code == 0, run.err
    away = await erin.expect(type="event", game=game, event={"kind": "away", "seat": seat})
    rng = random.Random(7)

    async def bot_played() -> dict[str, Any] | None:
        msg = await ivan.expect(type="event", game=game)
        event = msg["event"]
        if event["kind"] == "move" and event["seat"] == seat and msg["seq"] > away["seq"]:
            return msg if event["auto"] == "bot" else None
        if msg["legal"]:
            answer = await ivan.request(
                "move", game=game, seq=msg["seq"], move=rng.choice(msg["legal"])
            )
            assert answer["type"] == "moved" or answer["code"] == "stale_seq", answer
        return None

    played = await until(bot_played, timeout=30, every=0)
    assert played["event"]["auto"] == "bot"

    # Erin comes back (any message): the seat is theirs again.
    assert (await erin.request("ping"))["type"] == "pong"
    await erin.expect(type="event", game=game, event={"kind": "back", "seat": seat})
    wrong = await admin("--redis", redis_url, "takeover", game, "nobody", "--reason", "x")
    assert wrong.code == 1 and "no player" in wrong.err
    audit = await admin("--redis", redis_url, "audit")
    assert "takeover" in audit.text and game in audit.text and "afk" in audit.text


async def test_refusals_list_a_flooding_client_and_its_limit(moose_serve, redis_url, ws_client):
    server = moose_serve("--redis", redis_url, "--rate", "5", "--burst", "5", env=ENV)
    flooder: RawClient = await ws_client(server.url, "flood")
    for n in range(30):
        await flooder.send({"type": "ping", "id": n})
    assert (await flooder.expect(type="error", code="rate_limited"))["retry_after"] > 0

    async def listed() -> str:
        run = await admin("--redis", redis_url, "refusals")
        found = "rate_limited:messages" in run.text and flooder.player in run.text
        return run.text if found else ""

    text = await until(listed, timeout=20, every=0.2)
    heaviest = text[text.index("Heaviest users") :]
    assert "address 127.0.0.1" in heaviest and f"player {flooder.player} flood" in heaviest


async def test_a_report_from_a_raw_client_is_listed_and_metered(moose_serve, redis_url, ws_client):
    server = moose_serve("--redis", redis_url, env=ENV)
    await account_socket(ws_client, server.url, "grace", PASSWORD)
    # From the command line (a player's first report from this address)...
    cli = await drive(
        await spawn("report", "grace", "--reason", "cheats", "--name", "judy", "--url", server.url)
    )
    assert cli.code == 0 and "reported grace" in cli.text, cli.err
    # ...and from a raw client.
    frank: RawClient = await ws_client(server.url, "frank")
    answer = await frank.request("report", player="grace", reason="rude\nname")
    assert answer["type"] == "reported" and answer["name"] == "grace"

    for wrong, code in [
        ({"player": "nobody-here", "reason": "x"}, "no_such_player"),
        ({"player": "frank", "game": "g_none", "reason": "x"}, "no_such_game"),
        ({"player": frank.player, "reason": "me"}, "bad_message"),
        ({"player": "grace", "reason": "   "}, "bad_message"),
        ({"player": "grace", "reason": "x" * 201}, "bad_message"),
    ]:
        assert (await frank.request("report", **wrong))["code"] == code, wrong
    for _ in range(3):  # 5 from this address in all
        assert (await frank.request("report", player="grace", reason="again"))["type"] == "reported"
    limited = await frank.request("report", player="grace", reason="once more")
    assert limited["code"] == "rate_limited" and limited["retry_after"] > 0
    with redis.Redis.from_url(redis_url) as r:
        assert r.xlen(ModerationKeys().reports) == 5  # the refused ones kept nothing

    run = await admin("--redis", redis_url, "reports")
    assert run.code == 0, run.err
    assert "rude name" in run.text and "grace" in run.text and "frank" in run.text
    assert "cheats" in run.text and "judy" in run.text


async def test_moose_admin_reaches_the_bundled_redis_of_a_laptop_server(
    moose_serve, ws_client, tmp_path: Path
):
    data = tmp_path / "d"
    server = moose_serve("--data-dir", str(data), env=ENV)
    heidi: RawClient = await ws_client(server.url, "heidi")
    run = await admin("--data-dir", str(data), "ban", heidi.player, "--reason", "test")
    assert run.code == 0, run.err
    assert await heidi.closed() == 4003
    missing = await admin("--data-dir", str(tmp_path / "none"), "bans")
    assert missing.code == 1 and "no moose serve runs" in missing.err
