"""Look-alike names over the wire: JSON text frames written from PROTOCOL.md, no project
client code, against a real `moose serve` process.

With `alice` an account, every look-alike of her name is refused as a guest
(`name_taken`, or `bad_message` for invisible characters) and as an account; a
guest whose name an account took meanwhile comes back under a fresh name and is
told so; distinct names in any script still pass.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
import redis as redis_sync

from moose_server.accounts.identity import hash_password
from moose_server.storage.keys import NAMES_KEY, NAMES_KEYED_KEY, profile_key

from helpers.wire import Wire

PASSWORD = "lantern moose quill 88"
Message = dict[str, Any]

LOOK_ALIKES = [
    "aIice",  # capital I
    "a1ice",  # digit one
    "\u0251lice",  # Latin alpha
    "\u0430lice",  # Cyrillic a
    "\u03b1lice",  # Greek alpha
    "\uff41\uff4c\uff49\uff43\uff45",  # fullwidth
    "ALICE",
    "alic\u0117",  # a combining dot above the e
]
# (name, the invisible character the refusal names)
INVISIBLES = [
    ("alice\ufe0f", "U+FE0F"),  # variation selector 16: shows as alice
    ("al\u200dice", "U+200D"),  # zero-width joiner
    ("alice\u180e", "U+180E"),  # Mongolian vowel separator
    ("alice\U000e0041", "U+E0041"),  # tag latin capital A
]


@pytest.fixture
async def wire() -> AsyncIterator[Callable[[str], Awaitable[Wire]]]:
    session = aiohttp.ClientSession()

    async def connect(url: str) -> Wire:
        return Wire(await session.ws_connect(url))

    yield connect
    await session.close()


async def account(connect: Callable[[str], Awaitable[Wire]], url: str, name: str) -> Message:
    """A guest named `name` who registers; the welcome's fields, as registered."""
    sock = await connect(url)
    welcome = await sock.hello(name=name)
    assert welcome["type"] == "welcome", welcome
    registered = await sock.ask("register", password=PASSWORD)
    assert registered["type"] == "registered", registered
    return registered


async def test_look_alikes_of_an_account_are_refused_as_guests(moose_serve, redis_url, wire):
    url = moose_serve("--redis", redis_url).url
    alice = await account(wire, url, "alice")
    for name in LOOK_ALIKES:
        refused = await (await wire(url)).hello(name=name)
        assert refused["type"] == "error" and refused["code"] == "name_taken", (name, refused)
        assert "log in" in refused["message"]
    for name, shown in INVISIBLES:
        refused = await (await wire(url)).hello(name=name)
        assert refused["code"] == "bad_message" and shown in refused["message"], refused
    # Nothing changed: alice logs in as before, by any look-alike of her name.
    again = await (await wire(url)).hello(name="aIice", password=PASSWORD)
    assert again["player"] == alice["player"] and again["name"] == "alice"


async def test_look_alikes_cannot_become_accounts(moose_serve, redis_url, wire):
    """A look-alike guest who came before the account cannot register once it exists,
    and an account's look-alike taken first keeps the real name out."""
    # The early sockets read nothing while the accounts are made (password hashing):
    # on a loaded machine that passed the heartbeat's 30 s, and the server cut them.
    url = moose_serve("--redis", redis_url, "--heartbeat", "600").url
    early = []
    for name in LOOK_ALIKES:
        sock = await wire(url)
        assert (await sock.hello(name=name))["type"] == "welcome"  # no account yet
        early.append(sock)
    await account(wire, url, "alice")
    for name, sock in zip(LOOK_ALIKES, early, strict=True):
        refused = await sock.ask("register", password=PASSWORD)
        assert refused["code"] == "name_taken", (name, refused)
        assert (await sock.ask("ping"))["type"] == "pong"  # still a guest, socket open
    first = await account(wire, url, "b0b")
    bob = await wire(url)
    assert (await bob.hello(name="Bob"))["code"] == "name_taken"
    login = await bob.hello(name="BOB", password=PASSWORD)
    assert login["player"] == first["player"] and login["name"] == "b0b"


async def test_a_guest_whose_name_was_registered_meanwhile_comes_back_renamed(
    moose_serve, redis_url, wire
):
    url = moose_serve("--redis", redis_url).url
    guest = await (await wire(url)).hello(name="carol")
    assert guest["type"] == "welcome" and "renamed_from" not in guest
    await account(wire, url, "Car0l")
    back = await (await wire(url)).hello(token=guest["token"])
    assert back["type"] == "welcome", back
    assert back["player"] == guest["player"] and back["account"] is False
    assert back["name"] == "carol-2" and back["renamed_from"] == "carol"
    # The new token carries the new name: no more renaming.
    again = await (await wire(url)).hello(token=back["token"])
    assert again["name"] == "carol-2" and "renamed_from" not in again
    # Another guest whose name was taken, with carol-2 an account too: the next free name.
    await account(wire, url, "carol-2")
    third = await (await wire(url)).hello(token=guest["token"])
    assert third["name"] == "carol-3" and third["renamed_from"] == "carol"


async def test_distinct_names_in_any_script_are_still_accepted(moose_serve, redis_url, wire):
    url = moose_serve("--redis", redis_url).url
    for name in ("alice", "Ann", "Anna", "\u041c\u0430\u0440\u0438\u044f", "\u674e\u96f7"):
        registered = await account(wire, url, name)
        assert registered["name"] == name
    for name in ("alicia", "\u041c\u0430\u0440\u0438\u043d\u0430", "\u674e\u96f6", "Annabel"):
        welcome = await (await wire(url)).hello(name=name)
        assert welcome["type"] == "welcome" and welcome["name"] == name, welcome


def test_accounts_keyed_the_old_way_are_re_keyed_at_start(moose_serve, redis_url):
    """The names index of an older server (keyed "alice", with no key version) is keyed
    anew when `moose serve` starts: the account logs in and its look-alikes are refused."""
    with redis_sync.Redis.from_url(redis_url) as r:
        r.hset(NAMES_KEY, "alice", "p_0123456789")
        r.hset(
            profile_key("p_0123456789"),
            mapping={"name": "alice", "gen": 1, "bot": 0, "pw": hash_password(PASSWORD)},
        )
    url = moose_serve("--redis", redis_url).url

    async def check() -> None:
        async with aiohttp.ClientSession() as session:
            wire = Wire(await session.ws_connect(url))
            login = await wire.hello(name="alice", password=PASSWORD)
            assert login["player"] == "p_0123456789", login
            wire = Wire(await session.ws_connect(url))
            assert (await wire.hello(name="aIice"))["code"] == "name_taken"

    asyncio.run(check())
    with redis_sync.Redis.from_url(redis_url) as r:
        assert r.hgetall(NAMES_KEY) == {b"allce": b"p_0123456789"}
        assert r.get(NAMES_KEYED_KEY)
