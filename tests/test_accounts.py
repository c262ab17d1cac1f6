"""Accounts: claiming a name, logging in elsewhere, passwords, logging out everywhere.

The cross-instance cases run two real `moose serve` processes over one Redis.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis as redis_sync

from moose_server.accounts.identity import name_key
from moose_server.storage.keys import profile_key

from helpers import RawClient, ServeProcess

PASSWORD = "correct horse battery"


def two_instances(
    moose_serve: Callable[..., ServeProcess], redis_url: str, env: dict[str, str] | None = None
) -> list[ServeProcess]:
    procs = [
        moose_serve("--redis", redis_url, wait=False, env=env, log=f"serve{n}.log")
        for n in range(2)
    ]
    return [p.wait_ready() for p in procs]


async def login(client: RawClient, name: str, password: str) -> dict[str, Any]:
    """Say hello with an account's name and password; remember the welcome like `hello`."""
    answer = await client.request("hello", protocol=1, name=name, password=password)
    if answer["type"] == "welcome":
        client.player, client.token, client.name = answer["player"], answer["token"], answer["name"]
    return answer


def profile(redis_url: str, player: str) -> dict[str, str]:
    with redis_sync.Redis.from_url(redis_url) as r:
        raw = r.hgetall(profile_key(player))
    return {k.decode(): v.decode() for k, v in raw.items()}


def test_look_alike_names_share_a_key():
    assert name_key("Alice") == name_key("ALICE") == name_key("\u0430lice")  # Cyrillic a
    assert name_key("bob") == name_key("B0B") == name_key("b\u043eb")
    assert name_key("alice") != name_key("alicia")


async def test_a_guest_claims_their_name_and_logs_in_on_another_instance(
    moose_serve, redis_url, ws_client
):
    one, two = two_instances(moose_serve, redis_url)
    guest = await ws_client(one.url, "alice")
    guest_token = guest.token
    registered = await guest.request("register", password=PASSWORD)
    assert registered["type"] == "registered", registered
    assert (registered["player"], registered["name"]) == (guest.player, "alice")
    stored = profile(redis_url, guest.player)
    assert stored["pw"].startswith("scrypt$") and PASSWORD not in str(stored)

    elsewhere = await ws_client(two.url, None)
    welcome = await login(elsewhere, "ALICE", PASSWORD)
    assert welcome["type"] == "welcome", welcome
    assert (welcome["player"], welcome["name"], welcome["account"]) == (guest.player, "alice", True)
    # The guest token from before the claim is refused; the account's own works anywhere.
    again = await ws_client(one.url, None)
    assert (await again.hello(token=guest_token))["code"] == "token_revoked"
    assert (await again.hello(token=registered["token"]))["player"] == guest.player


async def test_log_out_everywhere_refuses_older_tokens_on_every_instance(
    moose_serve, redis_url, ws_client
):
    one, two = two_instances(moose_serve, redis_url)
    a = await ws_client(one.url, "carol")
    await a.request("register", password=PASSWORD)
    b = await ws_client(two.url, None)
    await login(b, "carol", PASSWORD)
    old = b.token
    answer = await a.request("logout_all")
    assert answer["type"] == "logged_out"
    assert await b.closed() == 4001  # the other session, on the other instance, is closed
    on_two = await ws_client(two.url, None)
    assert (await on_two.hello(token=old))["code"] == "token_revoked"
    assert (await on_two.hello(token=answer["token"]))["type"] == "welcome"
    assert (await a.request("ping"))["type"] == "pong"  # this socket goes on


async def test_changing_the_password_checks_the_old_one_and_logs_out_the_others(
    moose_serve, redis_url, ws_client
):
    one, two = two_instances(moose_serve, redis_url)
    a = await ws_client(one.url, "dora")
    await a.request("register", password=PASSWORD)
    b = await ws_client(two.url, None)
    await login(b, "dora", PASSWORD)
    wrong = await a.request("change_password", password="not it at all", new_password="x" * 9)
    assert wrong["code"] == "bad_login"
    short = await a.request("change_password", password=PASSWORD, new_password="short")
    assert short["code"] == "bad_password"
    assert profile(redis_url, a.player)["gen"] == "1"  # nothing changed
    changed = await a.request("change_password", password=PASSWORD, new_password="tr0ub4dor&3")
    assert changed["type"] == "password_changed"
    assert await b.closed() == 4001
    c = await ws_client(two.url, None)
    assert (await login(c, "dora", PASSWORD))["code"] == "bad_login"
    assert (await login(c, "dora", "tr0ub4dor&3"))["player"] == a.player


async def test_failed_logins_are_limited_per_account_and_address_across_instances(
    moose_serve, redis_url, ws_client
):
    # 3 failures of one address on one account at once, then one more every 10 s
    # (tests/test_logins.py: other addresses, and the owner's, are not refused).
    env = {"MOOSE_LOGIN_ATTEMPTS": "3", "MOOSE_LOGIN_WINDOW": "30"}
    one, two = two_instances(moose_serve, redis_url, env)
    owner = await ws_client(one.url, "erin")
    await owner.request("register", password=PASSWORD)
    attacker = await ws_client(two.url, None)
    for guess in ("password1", "letmein99", "qwertyuiop"):
        assert (await login(attacker, "erin", guess))["code"] == "bad_login"
    limited = await login(attacker, "Erin", "12345678")
    assert limited["code"] == "rate_limited" and 0 < limited["retry_after"] <= 10_000
    # The count is shared by every instance: the right password from that address waits too.
    honest = await ws_client(one.url, None)
    assert (await login(honest, "erin", PASSWORD))["code"] == "rate_limited"
    await asyncio.sleep(limited["retry_after"] / 1000 + 0.2)
    # A fresh socket: the one above may have been closed meanwhile (4408, no hello in time).
    honest = await ws_client(one.url, None)
    assert (await login(honest, "erin", PASSWORD))["player"] == owner.player


@pytest.mark.slow  # two scrypt hashes of 128 MiB, ~0.4 s each
async def test_account_names_are_unique_by_case_and_look_alike_letters(moose_server, ws_client):
    url = await moose_server()
    bob = await ws_client(url, "Bob")
    assert (await bob.request("register", password=PASSWORD))["type"] == "registered"
    for look_alike in ("bob", "B0B", "b\u043eb"):  # the last with a Cyrillic o
        taken = await (await ws_client(url, None)).hello(look_alike)
        assert taken["code"] == "name_taken", look_alike
    robert = await ws_client(url, "robert")
    assert (await robert.request("register", password="x")).get("code") == "bad_password"
    assert (await robert.request("register", password=PASSWORD))["type"] == "registered"
    again = await robert.request("register", password=PASSWORD)
    assert again["code"] == "already_registered"
    guest = await ws_client(url, "gus")
    assert (await guest.request("logout_all"))["code"] == "not_registered"


@pytest.mark.parametrize(
    ("bad", "rule"),
    [
        ("", None),
        ("a" * 129, None),
        ("moose1234", "at least 10 characters"),
        ("Password123", "most common"),
        ("1234567890", "most common"),
    ],
)
async def test_a_bad_password_changes_nothing(bad, rule, moose_server, ws_client, redis_url):
    url = await moose_server()
    guest = await ws_client(url, "fay")
    refused = await guest.request("register", password=bad)
    assert refused["code"] in ("bad_password", "bad_message")
    assert rule is None or (refused["code"] == "bad_password" and rule in refused["message"])
    assert profile(redis_url, guest.player) == {}


def test_moose_account_registers_changes_the_password_and_logs_out(
    moose_serve: Callable[..., ServeProcess], redis_url: str, tmp_path: Path
):
    import os
    import subprocess
    import sys

    server = moose_serve("--redis", redis_url)

    def account(action: str, **env: str) -> subprocess.CompletedProcess[str]:
        cmd = [
            sys.executable,
            "-m",
            "moose",
            "account",
            action,
            "--name",
            "gina",
            "--url",
            server.url,
        ]
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=60, env={**os.environ, **env}
        )

    made = account("register", MOOSE_PASSWORD=PASSWORD)
    assert made.returncode == 0 and "gina is an account now" in made.stdout, made.stderr
    assert PASSWORD not in made.stdout + made.stderr
    again = account("register", MOOSE_PASSWORD=PASSWORD)
    assert again.returncode == 1 and "already_registered" in again.stderr
    elsewhere = account("register", MOOSE_PASSWORD=PASSWORD, XDG_CONFIG_HOME=str(tmp_path))
    assert elsewhere.returncode == 1 and "name_taken" in elsewhere.stderr
    wrong = account("logout-all", MOOSE_PASSWORD="not the one")
    assert wrong.returncode == 1 and "bad_login" in wrong.stderr
    assert account("logout-all", MOOSE_PASSWORD=PASSWORD).returncode == 0
    changed = account("password", MOOSE_PASSWORD=PASSWORD, MOOSE_NEW_PASSWORD="new one here")
    assert changed.returncode == 0, changed.stderr
    assert account("logout-all", MOOSE_PASSWORD="new one here").returncode == 0


async def test_moose_account_register_claims_the_guest_moose_play_kept(
    moose_serve: Callable[..., ServeProcess], redis_url: str
):
    """The guest whose token `moose play` kept becomes the account: same player id."""
    import os
    import sys

    from moose import _saved
    from moose.client import Client

    server = moose_serve("--redis", redis_url)
    async with Client(server.url, name="hugo") as guest:
        _saved.save(server.url, "hugo", guest.token)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moose",
        "account",
        "register",
        "--name",
        "hugo",
        "--url",
        server.url,
        env={**os.environ, "MOOSE_PASSWORD": PASSWORD},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err
    assert f"hugo is an account now ({guest.player})" in out.decode()
    async with Client(server.url, name="hugo", password=PASSWORD) as again:
        assert again.player == guest.player and again.account
