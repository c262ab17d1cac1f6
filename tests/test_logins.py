"""Logins against real `moose serve` processes, in PROTOCOL.md's JSON frames.

A registration flood stops at the limit per address while a real user's login
gets a hashing thread of its own; attackers failing from many addresses cannot
lock the owner out; a hash of the old scrypt parameters is replaced at login.
Several client addresses are X-Forwarded-For headers from a trusted loopback.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
import redis as redis_sync

from moose_server.errors import Refusal
from moose_server.limits.limiter import Limiter
from moose_server.limits.limits import Lockout
from moose_server.settings import Settings
from moose_server.storage.keys import NAMES_KEY, profile_key

from helpers import RawClient, ServeProcess, open_store

PASSWORD = "correct horse battery"
TRUSTED = {"MOOSE_TRUSTED_PROXIES": "127.0.0.1"}
Connect = Callable[..., Awaitable[RawClient]]


@pytest.fixture
async def connect() -> AsyncIterator[Connect]:
    """``c = await connect(url, address, name)``: a JSON socket from `address`, hello said
    as a guest `name` (None: no hello)."""
    session = aiohttp.ClientSession()
    clients: list[RawClient] = []

    async def open_(url: str, address: str, name: str | None = None) -> RawClient:
        ws = await session.ws_connect(url, headers={"X-Forwarded-For": address})
        client = RawClient(ws, binary=False)
        clients.append(client)
        if name is not None:
            assert (await client.hello(name))["type"] == "welcome"
        return client

    yield open_
    for client in clients:
        await client.close()
    await session.close()


async def login(client: RawClient, name: str, password: str) -> dict[str, Any]:
    return await client.request("hello", protocol=1, name=name, password=password)


async def register(client: RawClient, password: str, msg_id: int = 1) -> dict[str, Any]:
    """`register`, waiting long enough for a queue of 128 MiB hashes on a busy machine."""
    await client.send({"type": "register", "id": msg_id, "password": password})
    return await client.expect(timeout=120, id=msg_id)


def profile(redis_url: str, player: str) -> dict[str, str]:
    with redis_sync.Redis.from_url(redis_url) as r:
        return {k.decode(): v.decode() for k, v in r.hgetall(profile_key(player)).items()}


def accounts(redis_url: str) -> int:
    with redis_sync.Redis.from_url(redis_url) as r:
        return int(r.hlen(NAMES_KEY))


def old_hash(password: str) -> str:
    """A hash as the server made them before OWASP's parameters (N=2^14)."""
    salt = b"s" * 16
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)
    b64 = base64.b64encode
    return f"scrypt$16384$8$1${b64(salt).decode()}${b64(digest).decode()}"


async def test_a_registration_flood_stops_at_the_limit_and_a_login_goes_first(
    moose_serve: Callable[..., ServeProcess], redis_url: str, connect: Connect
):
    env = {**TRUSTED, "MOOSE_REGISTRATIONS_PER_HOUR": "3"}
    server = moose_serve("--redis", redis_url, env=env)
    owner = await connect(server.url, "192.0.2.1", "olga")
    assert (await owner.request("register", password=PASSWORD))["type"] == "registered"
    # One address: 3 accounts, then rate_limited, nothing kept of the refused ones.
    flood = [await connect(server.url, "203.0.113.1", f"flood{i}") for i in range(8)]
    answers = await asyncio.gather(*(register(c, f"{PASSWORD} {i}") for i, c in enumerate(flood)))
    assert sorted(a["type"] for a in answers) == ["error"] * 5 + ["registered"] * 3
    for client, answer in zip(flood, answers, strict=True):
        if answer["type"] == "error":
            assert answer["code"] == "rate_limited" and answer["retry_after"] > 0
            assert "pw" not in profile(redis_url, client.player)
    assert accounts(redis_url) == 4
    # Many addresses, one account each: they hash one at a time beside the logins' thread.
    spread = [await connect(server.url, f"198.51.100.{i}", f"spread{i}") for i in range(12)]
    pending = [asyncio.create_task(register(c, PASSWORD)) for c in spread]
    # Once one is answered, every frame of the flood has long been read and queued.
    await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    real_user = await connect(server.url, "192.0.2.2")
    welcome = await login(real_user, "olga", PASSWORD)
    unanswered = sum(not task.done() for task in pending)
    assert welcome["type"] == "welcome" and welcome["player"] == owner.player
    assert unanswered > len(pending) // 2, "the login waited behind the registrations"
    assert all(a["type"] == "registered" for a in await asyncio.gather(*pending))


async def test_the_owner_logs_in_while_attackers_keep_failing(
    moose_serve: Callable[..., ServeProcess], redis_url: str, connect: Connect
):
    # An attacker's socket stays without a good hello through all its guesses: the
    # hello timeout (10 s, and 128 MiB hashes on a busy machine) is not under test.
    env = {
        **TRUSTED,
        "MOOSE_LOGIN_ATTEMPTS": "3",
        "MOOSE_LOGIN_WINDOW": "300",
        "MOOSE_LOGIN_ADDRESS_ATTEMPTS": "4",
        "MOOSE_LOGIN_SLOW_AFTER": "2",
        "MOOSE_LOGIN_DELAY_STEP": "0.1",
        "MOOSE_LOGIN_DELAY_MAX": "0.5",
        "MOOSE_HELLO_TIMEOUT": "600",
    }
    one, two = [
        moose_serve("--redis", redis_url, env=env, wait=False, log=f"serve{n}.log")
        for n in range(2)
    ]
    one.wait_ready(), two.wait_ready()
    owner = await connect(one.url, "192.0.2.7", "erin")
    assert (await owner.request("register", password=PASSWORD))["type"] == "registered"
    # Five attacker addresses, on the other instance: 3 failures each, then refused.
    for n in range(1, 6):
        attacker = await connect(two.url, f"203.0.113.{n}")
        guesses = [await login(attacker, "erin", f"guess number {i}") for i in range(3)]
        assert [g["code"] for g in guesses] == ["bad_login"] * 3
        for password in ("guess number 4", PASSWORD):  # refused before it is checked
            refused = await login(attacker, "Erin", password)
            assert refused["code"] == "rate_limited" and refused["retry_after"] > 0
    # An address is also limited over every account it tries.
    attacker = await connect(two.url, "203.0.113.1")
    assert (await login(attacker, "nobody", "guess number 5"))["code"] == "bad_login"
    assert (await login(attacker, "someone", "guess number 6"))["code"] == "rate_limited"
    # The owner, from an address with no failures: slowed at most, never refused.
    home = await connect(one.url, "192.0.2.8")
    assert (await login(home, "erin", "a typo, surely"))["code"] == "bad_login"
    welcome = await login(home, "erin", PASSWORD)
    assert welcome["type"] == "welcome" and welcome["player"] == owner.player
    away = await connect(two.url, "192.0.2.9")
    assert (await login(away, "erin", PASSWORD))["player"] == owner.player


async def test_a_hash_of_the_old_parameters_is_replaced_at_the_next_login(
    moose_serve: Callable[..., ServeProcess], redis_url: str, connect: Connect
):
    server = moose_serve("--redis", redis_url)
    ivy = await connect(server.url, "192.0.2.1", "ivy")
    registered = await ivy.request("register", password=PASSWORD)
    with redis_sync.Redis.from_url(redis_url) as r:  # an account hashed at N=2^14
        r.hset(profile_key(ivy.player), "pw", old_hash(PASSWORD))
    wrong = await login(await connect(server.url, "192.0.2.2"), "ivy", "not the password")
    assert wrong["code"] == "bad_login"
    assert profile(redis_url, ivy.player)["pw"] == old_hash(PASSWORD)  # a failure changes nothing
    welcome = await login(await connect(server.url, "192.0.2.2"), "ivy", PASSWORD)
    assert welcome["player"] == ivy.player
    stored = profile(redis_url, ivy.player)
    assert stored["pw"].startswith("scrypt$131072$8$1$") and stored["gen"] == "1"
    again = await login(await connect(server.url, "192.0.2.3"), "ivy", PASSWORD)
    assert again["player"] == ivy.player  # the new hash verifies
    resumed = await (await connect(server.url, "192.0.2.4")).hello(token=registered["token"])
    assert resumed["player"] == ivy.player  # no session was logged out


async def test_an_accounts_failures_slow_its_logins_up_to_a_cap(redis_url: str):
    settings = Settings(login_slow_after=2, login_delay_step=0.02, login_delay_max=0.08)
    async with open_store(redis_url) as store:
        lockout = Lockout(Limiter(store, settings), settings)
        delays = []
        for n in range(9):  # 9 failures, each from an address of its own: none refused
            delays.append(await lockout.delay("erin"))
            with pytest.raises(Refusal):
                async with lockout.attempt(f"203.0.113.{n}", "erin"):
                    raise Refusal("bad_login", "no account has that name and password")
        delays.append(await lockout.delay("erin"))
        assert await lockout.delay("someone else") == 0
    expected = [0, 0, 0, 0.02, 0.04, 0.06, 0.08, 0.08, 0.08, 0.08]
    assert delays == pytest.approx(expected, abs=0.002)
