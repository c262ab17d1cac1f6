"""Rematch and challenges over the wire: JSON text frames written from PROTOCOL.md alone
(no project client code), against two `moose serve` processes over one Redis.

Two seats accepting a rematch at once on two instances start one game with the
same seats, and its spectator is told where it went; a challenge flows from one
instance to the other and is played, declined with a reason, or expires; an
accept racing the expiry starts one game or none; the limits answer with their
codes and change nothing; challenging a player who is not connected fails with
`player_offline`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest

from helpers import serve_several
from helpers.wire import Wire

Message = dict[str, Any]
PASSWORD = "lantern moose quill 88"
# Short turns: an unattended private game is abandoned (finished) in a few seconds.
ENV = {
    "MOOSE_TURN_TIME": "0.3",
    "MOOSE_ANSWER_TIME": "0.3",
    "MOOSE_AUTO_DELAY": "0.2",
    "MOOSE_POLL_INTERVAL": "0.05",
    "MOOSE_CHALLENGES_OPEN": "2",
    "MOOSE_CHALLENGES_PER_HOUR": "5",
}

pytestmark = pytest.mark.slow


Connect = Callable[..., Awaitable[Wire]]


@pytest.fixture
async def wire() -> AsyncIterator[Connect]:
    session = aiohttp.ClientSession()

    async def connect(url: str, name: str, account: bool = False) -> Wire:
        sock = Wire(await session.ws_connect(url))
        welcome = await sock.ask("hello", protocol=1, name=name)
        assert welcome["type"] == "welcome", welcome
        sock.player = welcome["player"]
        if account:
            assert (await sock.ask("register", password=PASSWORD))["type"] == "registered"
        return sock

    yield connect
    await session.close()


@pytest.fixture
def two(moose_serve, redis_url) -> list[str]:
    """The URLs of two instances over one Redis."""
    return [p.url for p in serve_several(moose_serve, redis_url, ENV)]


async def finished_table(host: Wire, others: list[Wire]) -> tuple[str, str]:
    """A private table of these players, started, left alone until it is abandoned."""
    table = await host.ask("create_table", players=len(others) + 1)
    for sock in others:
        assert (await sock.ask("join_table", code=table["code"]))["type"] == "table"
    started = await host.ask("start_table", code=table["code"])
    assert started["type"] == "table", started
    match = await host.expect(type="match")
    while True:
        event = await host.expect(timeout=30, type="event", game=match["game"])
        if event["event"]["kind"] == "over":
            return match["game"], table["code"]


async def test_a_rematch_accepted_on_two_instances_at_once_starts_one_game(two, wire):
    alice, bob = await wire(two[0], "alice"), await wire(two[0], "bob")
    carol, dave = await wire(two[1], "carol"), await wire(two[1], "dave")
    old, code = await finished_table(alice, [bob, carol])
    assert (await dave.ask("watch", game=old, code=code))["type"] == "watching"
    offer = await alice.ask("rematch", game=old)
    assert offer["type"] == "rematch_offer" and offer["status"] == "open", offer
    assert sorted(offer["waiting"]) == ["bob", "carol"]
    for sock in (bob, carol):
        heard = await sock.expect(type="rematch_offer", game=old)
        assert heard["from"] == "alice" and heard["status"] == "open"
    answers = await asyncio.gather(
        bob.ask("rematch_accept", game=old), carol.ask("rematch_accept", game=old)
    )
    assert all(a["type"] == "rematch_offer" for a in answers), answers
    started = [a for a in answers if a["status"] == "started"]
    assert len(started) == 1, answers
    new = started[0]["next"]
    for sock in (alice, bob, carol):
        matches = [m for m in await sock.drain(1.5) if m["type"] == "match" and m["game"] != old]
        assert [m["game"] for m in matches] == [new], matches
        assert sorted(matches[0]["names"]) == ["alice", "bob", "carol"]
    moved = await dave.expect(type="rematch_started", game=old)
    assert moved["next"] == new
    assert (await dave.ask("watch", game=new, code=code))["type"] == "watching"
    # The rematch is over: a late accept is told so, and nothing starts again.
    again = await bob.ask("rematch_accept", game=old)
    assert again["type"] == "error" and again["code"] == "offer_closed", again
    assert again["next"] == new, again


async def test_a_declined_rematch_tells_every_seat_and_starts_nothing(two, wire):
    alice, bob = await wire(two[0], "alice"), await wire(two[1], "bob")
    old, _ = await finished_table(alice, [bob])
    await alice.ask("rematch", game=old)
    declined = await bob.ask("rematch_decline", game=old)
    assert declined["status"] == "declined" and declined["by"] == "bob", declined
    told = await alice.expect(type="rematch_offer", status="declined")
    assert told["by"] == "bob"
    late = await bob.ask("rematch_accept", game=old)
    assert late["code"] == "offer_closed", late
    stranger = await wire(two[1], "erin")
    refused = await stranger.ask("rematch", game=old)
    assert refused["code"] == "not_in_game", refused


async def test_a_challenge_crosses_instances_and_is_played_or_declined(two, wire):
    alice = await wire(two[0], "alice", account=True)
    bob = await wire(two[1], "bob", account=True)
    sent = await alice.ask("challenge", name="BOB", players=2, rated=True)
    assert sent["type"] == "challenge_offer" and sent["status"] == "open", sent
    heard = await bob.expect(type="challenge_offer", challenge=sent["challenge"])
    assert heard["from"] == "alice" and heard["rated"] is True and heard["players"] == 2
    bad = await bob.ask("challenge_decline", challenge=sent["challenge"], reason="busy")
    assert bad["code"] == "bad_message", bad
    accepted = await bob.ask("challenge_accept", challenge=sent["challenge"])
    assert accepted["status"] == "started" and accepted["game"], accepted
    told = await alice.expect(type="challenge_offer", status="started")
    assert told["game"] == accepted["game"]
    for sock in (alice, bob):
        match = await sock.expect(type="match", game=accepted["game"])
        assert sorted(match["names"]) == ["alice", "bob"]
    # Declined with a reason: the challenger hears which.
    for reason in ("later", "not_rated", "table_size", "generic"):
        sent = await alice.ask("challenge", name="bob", players=3, open=True)
        got = await bob.ask("challenge_decline", challenge=sent["challenge"], reason=reason)
        assert got["status"] == "declined" and got["reason"] == reason, got
        told = await alice.expect(type="challenge_offer", challenge=sent["challenge"])
        assert told["status"] == "declined" and told["reason"] == reason


async def test_challenge_limits_and_offline_players_answer_with_their_codes(two, wire):
    alice = await wire(two[0], "alice", account=True)
    bob = await wire(two[1], "bob", account=True)
    carol = await wire(two[1], "carol", account=True)
    await carol.ws.close()
    # Her instance notices the close a moment later: until then dora's challenge reaches
    # her (and is taken back). alice's own challenges are counted below.
    dora = await wire(two[0], "dora")
    while (offline := await dora.ask("challenge", name="carol")).get("status") == "open":
        await dora.ask("challenge_cancel", challenge=offline["challenge"])
    assert offline["code"] == "player_offline" and offline["message"] == "carol is not online"
    unknown = await alice.ask("challenge", name="nobody-here")
    assert unknown["code"] == "no_such_player", unknown
    itself = await alice.ask("challenge", name="alice")
    assert itself["code"] == "bad_message", itself
    first = await alice.ask("challenge", name="bob")
    await alice.ask("challenge", name="bob")
    third = await alice.ask("challenge", name="bob")
    assert third["code"] == "too_many_challenges", third
    stranger = await alice.ask("challenge_accept", challenge=first["challenge"])
    assert stranger["code"] == "no_such_challenge", stranger
    cancelled = await alice.ask("challenge_cancel", challenge=first["challenge"])
    assert cancelled["status"] == "cancelled", cancelled
    assert (await bob.ask("challenge_accept", challenge=first["challenge"]))["code"] == (
        "offer_closed"
    )
    for _ in range(3):  # the 3rd to 5th this hour, each cancelled: one stays open
        sent = await alice.ask("challenge", name="bob")
        assert sent["status"] == "open", sent
        await alice.ask("challenge_cancel", challenge=sent["challenge"])
    hourly = await alice.ask("challenge", name="bob")
    assert hourly["code"] == "rate_limited" and hourly["retry_after"] > 0, hourly


async def test_an_accept_racing_the_expiry_starts_one_game_or_none(moose_serve, redis_url, wire):
    env = ENV | {"MOOSE_CHALLENGE_TTL": "1", "MOOSE_CHALLENGES_PER_HOUR": "100"}
    urls = [p.url for p in serve_several(moose_serve, redis_url, env)]
    alice = await wire(urls[0], "alice", account=True)
    bob = await wire(urls[1], "bob", account=True)
    outcomes = set()
    for delay in (0.9, 0.95, 1.0, 1.02, 1.05, 1.1):
        sent = await alice.ask("challenge", name="bob")
        await asyncio.sleep(delay)
        answer = await bob.ask("challenge_accept", challenge=sent["challenge"])
        heard = [m for m in await alice.drain(1.5) if m.get("challenge") == sent["challenge"]]
        statuses = {m["status"] for m in heard}
        assert len(statuses) == 1, heard  # started or expired: never both
        if answer.get("status") == "started":
            assert statuses == {"started"}
            outcomes.add("started")
        else:
            assert answer["code"] == "expired" and statuses == {"expired"}, (answer, heard)
            outcomes.add("expired")
        await bob.drain(0.2)
    assert outcomes  # each round was one or the other


async def test_fresh_guests_of_one_address_share_its_challenges(moose_serve, redis_url, wire):
    # A player's own budget is large here; the address's, 3 an hour, is what holds.
    env = ENV | {"MOOSE_CHALLENGES_PER_HOUR": "100", "MOOSE_CHALLENGES_PER_ADDRESS_HOUR": "3"}
    urls = [p.url for p in serve_several(moose_serve, redis_url, env)]
    bob = await wire(urls[1], "bob", account=True)
    guests = [await wire(urls[n % 2], f"guest{n}") for n in range(4)]
    sent = [await g.ask("challenge", name="bob") for g in guests[:3]]
    assert [s.get("status") for s in sent] == ["open"] * 3, sent
    # The fourth fresh guest of the same address, on either instance, is refused.
    refused = await guests[3].ask("challenge", name="bob")
    assert refused["code"] == "rate_limited" and refused["retry_after"] > 0, refused
    assert "challenge" not in refused
    # bob hears the three challenges made, from the three guests that made them.
    heard = [await bob.expect(type="challenge_offer", challenge=s["challenge"]) for s in sent]
    assert [h["from"] for h in heard] == ["guest0", "guest1", "guest2"], heard
