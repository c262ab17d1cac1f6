"""Per-client limits: join-code guesses, reports, follows and blocks (in Redis, shared
by every instance) and the socket caps of an instance (per address and in all), over
real sockets and Redis. A request a limit refuses takes nothing (tests/test_limiter.py
checks every limit of the table on Redis alone)."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from moose_server.limits.limiter import Limited, Limiter
from moose_server.limits.limits import CodeGuard
from moose_server.matchmaking.matchmaker import MatchError
from moose_server.moderation.store import ModerationStore
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.store import Store

from helpers import RawClient


@pytest.fixture
async def store(redis_url: str) -> Any:
    gw = await open_redis(redis_url, 8)
    yield Store(gw, 16)
    await gw.aclose()


async def test_refused_requests_use_up_the_guesses_and_successes_do_not(store):
    guard = CodeGuard(Limiter(store, Settings(code_guesses=3, code_guess_interval=60)))
    for _ in range(10):  # an honest host: every request succeeds, none is counted
        async with guard.attempt("198.51.100.1", "p_host"):
            pass
    for _ in range(3):
        with pytest.raises(MatchError):
            async with guard.attempt("203.0.113.9", "p_eve"):
                raise MatchError("bad_code", "no such table")
    with pytest.raises(Limited) as err:
        async with guard.attempt("203.0.113.9", "p_eve"):
            raise AssertionError("a limited request must not be tried")
    assert err.value.code == "rate_limited"
    assert 0 < err.value.fields["retry_after"] <= 60_000
    # Per address and per player: eve from another address, and another player from eve's.
    for address, player in (("192.0.2.1", "p_eve"), ("203.0.113.9", "p_mallory")):
        with pytest.raises(Limited):
            async with guard.attempt(address, player):
                pass
    async with guard.attempt("192.0.2.1", "p_mallory"):  # neither is eve's
        pass


@pytest.mark.slow
async def test_a_guess_earns_back_one_try_per_interval(store):
    # A second: long enough that the try right after the first is refused however busy
    # the machine, short enough to wait for the try it earns back.
    guard = CodeGuard(Limiter(store, Settings(code_guesses=1, code_guess_interval=1.0)))
    with pytest.raises(MatchError):
        async with guard.attempt("203.0.113.9", "p_eve"):
            raise MatchError("bad_code", "no such table")
    with pytest.raises(Limited) as err:
        async with guard.attempt("203.0.113.9", "p_eve"):
            pass
    assert 0 < err.value.fields["retry_after"] <= 1000
    await asyncio.sleep(err.value.fields["retry_after"] / 1000 + 0.05)
    async with guard.attempt("203.0.113.9", "p_eve"):
        pass


async def connect_as(url: str, address: str | None, name: str, token: str = "") -> RawClient:
    """A raw socket whose X-Forwarded-For says `address`; hello said."""
    session = aiohttp.ClientSession()
    headers = {"X-Forwarded-For": address} if address else {}
    ws = await session.ws_connect(url, headers=headers, max_msg_size=0)
    client = RawClient(ws, True)
    client.session = session  # type: ignore[attr-defined]
    welcome = await client.hello(name=name, token=token)
    assert welcome["type"] == "welcome", welcome
    return client


async def close_all(clients: list[RawClient]) -> None:
    for client in clients:
        await client.close()
        await client.session.close()  # type: ignore[attr-defined]


async def test_join_code_guesses_are_limited_per_address_and_player_across_instances(
    moose_server,
):
    limits = {"code_guesses": 3, "code_guess_interval": 60, "trusted_proxies": "127.0.0.1"}
    one, two = await moose_server(**limits), await moose_server(**limits)
    clients: list[RawClient] = []
    try:
        host = await connect_as(one, "198.51.100.1", "host")
        clients.append(host)
        code = (await host.request("create_table", players=2))["code"]
        eve = await connect_as(one, "203.0.113.9", "eve")
        clients.append(eve)
        codes = [await eve.request("join_table", code="ZZZZZZZZ") for _ in range(3)]
        assert [c["code"] for c in codes] == ["bad_code"] * 3
        # The right code now: refused before it is looked at, on the other instance too.
        for client in [eve, await connect_as(two, "203.0.113.9", "eve2")]:
            clients.append(client)
            refused = await client.request("join_table", code=code)
            assert refused["code"] == "rate_limited" and refused["retry_after"] > 0, refused
        # Eve, back with her token from another address: the player is limited too.
        back = await connect_as(two, "192.0.2.77", "", token=eve.token)
        clients.append(back)
        assert (await back.request("join_table", code=code))["code"] == "rate_limited"
        # Someone else from elsewhere joins; the table was never touched meanwhile.
        friend = await connect_as(two, "192.0.2.5", "friend")
        clients.append(friend)
        joined = await friend.request("join_table", code=code)
        assert [s and s["name"] for s in joined["seats"]] == ["host", "friend"]
        # A full table costs a stranger a guess, as a bad code does.
        mallory = await connect_as(one, "192.0.2.99", "mallory")
        clients.append(mallory)
        answers = [(await mallory.request("join_table", code=code))["code"] for _ in range(4)]
        assert answers == ["table_full"] * 3 + ["rate_limited"]
    finally:
        await close_all(clients)


async def test_reports_are_limited_across_instances_and_a_refused_one_takes_nothing(
    moose_server, redis_url
):
    limits = {"report_burst": 2, "report_interval": 600, "trusted_proxies": "127.0.0.1"}
    one, two = await moose_server(**limits), await moose_server(**limits)
    clients: list[RawClient] = []
    try:
        grace = await connect_as(one, "198.51.100.1", "grace")
        clients.append(grace)
        registered = await grace.request("register", password="tr0ub4dor&3 moose house")
        assert registered["type"] == "registered", registered
        eve = await connect_as(one, "203.0.113.9", "eve")
        clients.append(eve)
        for _ in range(2):
            assert (await eve.request("report", player="grace", reason="x"))["type"] == "reported"
        # Eve's third, from another address on the other instance: her own limit refuses it.
        back = await connect_as(two, "192.0.2.77", "", token=eve.token)
        clients.append(back)
        for _ in range(3):
            refused = await back.request("report", player="grace", reason="again")
            assert refused["code"] == "rate_limited" and 0 < refused["retry_after"] <= 600_000
        # The refusals took nothing from that address: its next two reports are kept.
        bob = await connect_as(two, "192.0.2.77", "bob")
        clients.append(bob)
        for _ in range(2):
            assert (await bob.request("report", player="grace", reason="y"))["type"] == "reported"
        assert (await bob.request("report", player="grace", reason="z"))["code"] == "rate_limited"
        client = await open_redis(redis_url, 1)
        try:
            kept = await ModerationStore(client).reports(10)
        finally:
            await client.aclose()
        assert len(kept) == 4
    finally:
        await close_all(clients)


async def test_a_follow_refused_for_any_reason_costs_no_add_of_the_hour(moose_server, ws_client):
    url = await moose_server(social_adds_per_hour=3, follows_max=1)
    ann, bob, cat, dan, eli = [await ws_client(url, n) for n in ("ann", "bob", "cat", "dan", "eli")]
    assert (await ann.request("follow", player=bob.player))["type"] == "followed"
    for _ in range(3):
        refused = await ann.request("follow", player=cat.player)
        assert refused["code"] == "too_many_follows", refused
    assert (await ann.request("block", player=cat.player))["type"] == "blocked"
    assert (await ann.request("block", player=dan.player))["type"] == "blocked"
    limited = await ann.request("block", player=eli.player)  # the hour's third was the last
    assert limited["code"] == "rate_limited" and limited["retry_after"] > 0, limited


async def test_a_socket_watches_its_limit_of_arenas_and_a_refusal_changes_nothing(
    moose_server, ws_client
):
    url = await moose_server(arenas_watched=1, arenas="people:hourly:30m:2-4,bots:hourly:30m:2-4")
    ann = await ws_client(url, "ann")
    arenas = [a["id"] for a in (await ann.request("arenas"))["arenas"]]
    assert len(arenas) >= 2, arenas  # at least the next of each recurring arena
    assert (await ann.request("watch_arena", arena=arenas[0]))["type"] == "arena"
    refused = await ann.request("watch_arena", arena=arenas[1])
    assert refused["code"] == "too_many_watched" and "retry_after" not in refused, refused
    assert (await ann.request("watch_arena", arena=arenas[0]))["type"] == "arena"  # still on
    assert (await ann.request("unwatch_arena", arena=arenas[0]))["type"] == "arena_unwatched"
    assert (await ann.request("watch_arena", arena=arenas[1]))["type"] == "arena"


async def test_forwarded_for_is_ignored_from_an_untrusted_peer(moose_server):
    url = await moose_server(code_guesses=2, code_guess_interval=60)  # trusts no proxy
    clients: list[RawClient] = []
    try:
        for address in ("203.0.113.1", "203.0.113.2"):
            client = await connect_as(url, address, "eve")
            clients.append(client)
            assert (await client.request("join_table", code="ZZZZZZZZ"))["code"] == "bad_code"
        # Both came from 127.0.0.1 whatever they wrote: its two guesses are spent.
        third = await connect_as(url, "203.0.113.3", "eve")
        clients.append(third)
        assert (await third.request("join_table", code="ZZZZZZZZ"))["code"] == "rate_limited"
    finally:
        await close_all(clients)


async def test_sockets_over_the_caps_are_refused_before_the_upgrade(moose_server):
    url = await moose_server(max_sockets=4, max_sockets_per_address=2, trusted_proxies="127.0.0.1")
    session = aiohttp.ClientSession()
    try:
        open_ = [
            await session.ws_connect(url, headers={"X-Forwarded-For": "192.0.2.1"})
            for _ in range(2)
        ]
        with pytest.raises(aiohttp.WSServerHandshakeError) as err:
            await session.ws_connect(url, headers={"X-Forwarded-For": "192.0.2.1"})
        assert err.value.status == 429 and err.value.headers["Retry-After"]
        open_ += [
            await session.ws_connect(url, headers={"X-Forwarded-For": f"192.0.2.{i}"})
            for i in (2, 3)
        ]
        with pytest.raises(aiohttp.WSServerHandshakeError) as err:
            await session.ws_connect(url, headers={"X-Forwarded-For": "192.0.2.9"})
        assert err.value.status == 503  # full: a balancer tries another instance
        await open_.pop().close()
        async with asyncio.timeout(30):  # the server sees the close soon after
            while len(open_) < 4:
                try:
                    open_.append(
                        await session.ws_connect(url, headers={"X-Forwarded-For": "192.0.2.9"})
                    )
                except aiohttp.WSServerHandshakeError:
                    await asyncio.sleep(0.05)
        assert len(open_) == 4
        async with session.get(
            url.replace("ws://", "http://").removesuffix("/ws") + "/metrics"
        ) as r:
            text = await r.text()
        assert 'moose_sockets_refused_total{reason="address"} 1.0' in text
        assert 'moose_sockets_refused_total{reason="full"}' in text
    finally:
        for ws in open_:
            await ws.close()
        await session.close()


@pytest.mark.slow
async def test_a_socket_that_says_no_hello_is_closed_with_4408(moose_server, ws_client):
    url = await moose_server(hello_timeout=2.0)  # ample for `polite`, on a busy machine too
    silent = await ws_client(url, None)
    talker = await ws_client(url, None)
    assert (await talker.request("ping"))["code"] == "hello_required"  # talking is not hello
    polite = await ws_client(url, "polite")
    assert await silent.closed() == 4408
    assert await talker.closed() == 4408
    assert (await polite.request("ping"))["type"] == "pong"  # hello said in time: stays
