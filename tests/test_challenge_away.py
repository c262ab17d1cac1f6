"""Correspondence challenges to a player away, over the wire: raw protocol clients
against a running instance, a push service and an SMTP server on loopback.

A challenge with `days` to an account that is not connected waits for them
(`correspondence_challenge_ttl`), sends them a `challenge_received` notice (push,
else mail to a confirmed address), and is listed in their next `welcome`; they
accept it there. A real-time challenge to them is `player_offline` as before;
their setting of who may challenge them refuses as it does online, and a block
makes the challenge as any other, never told nor listed.
"""

from __future__ import annotations

import email
import re
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest

import moose
from moose_server.storage.embedded import free_port

from helpers import RawClient, Serve, account_socket
from helpers.mail import Inbox
from helpers.push import Browser, PushService

# The instance's sender looks at the stream every second when not woken.
pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery"
DAY_MS = 86_400_000
Connect = Callable[..., Awaitable[RawClient]]
Message = dict[str, Any]


def text_of(mail: email.message.Message) -> str:
    payload = mail.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode()


async def away(client: RawClient, prober: RawClient) -> None:
    """Close the client's socket and wait until its instance has seen it go: a real-time
    challenge to it is `player_offline` (each one that still reached it is taken back)."""
    await client.close()
    while (got := await prober.request("challenge", name=client.player)).get("status") == "open":
        await prober.request("challenge_cancel", challenge=got["challenge"])
    assert got["code"] == "player_offline", got


async def back(ws_client: Connect, url: str, client: RawClient) -> tuple[RawClient, Message]:
    """A new socket of the same account (by its token): the socket and its welcome."""
    again: RawClient = await ws_client(url, None)
    welcome = await again.hello(token=client.token)
    assert welcome["type"] == "welcome", welcome
    return again, welcome


async def test_a_days_challenge_waits_for_an_account_away_is_pushed_and_listed_at_hello(
    serve: Serve, ws_client: Connect, push_service: PushService
) -> None:
    url = (await serve()).url
    ann = await ws_client(url, "ann")
    bob = await account_socket(ws_client, url, "bob", PASSWORD)
    browser = Browser(push_service.endpoint("bob"))
    await bob.request("push_subscribe", subscription=browser.subscription())
    await away(bob, ann)
    offline = await ann.request("challenge", name="bob", players=2)  # real time: as before
    assert offline["code"] == "player_offline", offline

    sent = await ann.request("challenge", name="bob", players=2, days=3)
    assert sent["type"] == "challenge_offer" and sent["status"] == "open", sent
    assert sent["days"] == 3 and sent["to_player"] == bob.player
    now = (await ann.request("ping"))["server_time"]
    assert abs(sent["expires"] - now - 3 * DAY_MS) < 60_000  # three days, not a minute
    pushed = await push_service.received.get()
    assert pushed.path == "/push/bob"
    assert browser.read(pushed) == {
        "kind": "challenge_received",
        "challenge": sent["challenge"],
        "text": "ann challenges you to a game of 3 days a move.",
    }

    bob, welcome = await back(ws_client, url, bob)
    assert welcome["challenges"] == [{k: v for k, v in sent.items() if k != "id"}]
    accepted = await bob.request("challenge_accept", challenge=sent["challenge"])
    assert accepted["status"] == "started", accepted
    match = await bob.expect(type="match")
    assert match["days"] == 3 and (await ann.expect(type="match"))["game"] == match["game"]
    _, later = await back(ws_client, url, bob)  # answered: listed no more
    assert "challenges" not in later


async def test_a_guest_away_and_the_challenge_setting_refuse_as_online(
    serve: Serve, ws_client: Connect
) -> None:
    url = (await serve()).url
    ann, probe = await ws_client(url, "ann"), await ws_client(url, "probe")
    guest = await ws_client(url, None)  # a guest bot: a guest with a profile, found by id
    assert (await guest.request("hello", protocol=1, name="robo", bot=True))["bot"] is True
    guest.player = guest.received[-1]["player"]
    await away(guest, probe)
    refused = await ann.request("challenge", name=guest.player, days=3)
    assert refused["code"] == "player_offline", refused  # a guest away is not waited for
    bob = await account_socket(ws_client, url, "bob", PASSWORD)
    answer = await bob.request("challenge_setting", challenges="registered")
    assert answer["challenges"] == "registered"
    await away(bob, probe)
    refused = await ann.request("challenge", name="bob", days=3)
    assert refused["code"] == "not_allowed", refused
    assert "with an account" in refused["message"]
    _, welcome = await back(ws_client, url, bob)
    assert "challenges" not in welcome  # the refused one was never made


async def test_a_blocked_challenger_s_days_challenge_is_made_never_told_nor_listed(
    serve: Serve, ws_client: Connect, push_service: PushService
) -> None:
    url = (await serve()).url
    ann, cat = await ws_client(url, "ann"), await ws_client(url, "cat")
    bob = await account_socket(ws_client, url, "bob", PASSWORD)
    browser = Browser(push_service.endpoint("bob"))
    await bob.request("push_subscribe", subscription=browser.subscription())
    assert (await bob.request("block", player=ann.player))["type"] != "error"
    await away(bob, cat)
    quiet = await ann.request("challenge", name="bob", days=3)
    assert quiet["type"] == "challenge_offer" and quiet["status"] == "open", quiet  # as any
    told = await cat.request("challenge", name="bob", days=5)
    pushed = await push_service.received.get()  # the first push of all is cat's
    assert browser.read(pushed)["challenge"] == told["challenge"]
    _, welcome = await back(ws_client, url, bob)
    assert [c["challenge"] for c in welcome["challenges"]] == [told["challenge"]]


async def test_a_days_challenge_is_mailed_to_a_confirmed_address_without_push(
    serve: Serve, ws_client: Connect, inbox: tuple[Inbox, int]
) -> None:
    mails, port = inbox
    web = free_port()
    public = f"http://127.0.0.1:{web}"
    mail = {"smtp_host": "127.0.0.1", "smtp_port": port, "smtp_tls": "none", "public_url": public}
    url = (await serve(web, **mail)).url
    ann = await ws_client(url, "ann")
    bob = await account_socket(ws_client, url, "bob", PASSWORD)
    settings = await bob.request("notify_settings", email="bob@example.org")
    assert settings["challenge_received"] is True  # on unless turned off
    confirm = text_of(await mails.mails.get())
    found = re.search(r"http://\S+/notify/confirm\?\S+", confirm)
    assert found, confirm
    async with aiohttp.ClientSession() as http, http.get(found.group(0)) as resp:
        assert resp.status == 200
    await away(bob, ann)
    sent = await ann.request("challenge", name="bob", days=7)
    assert sent["status"] == "open", sent
    got = await mails.mails.get()
    assert got["To"] == "bob@example.org" and got["Subject"] == "You are challenged"
    body = text_of(got)
    assert "ann challenges you to a game of 7 days a move." in body
    assert f"Answer it: {public}/" in body and "/play/" not in body


async def test_the_client_library_hears_a_days_challenge_that_waited_for_it(
    serve: Serve, ws_client: Connect
) -> None:
    url = (await serve()).url
    ann = await ws_client(url, "ann")
    async with moose.connect(url, name="bob") as bob:
        token = (await bob.register(PASSWORD))["token"]
        player = bob.player
    while (got := await ann.request("challenge", name=player)).get("status") == "open":
        await ann.request("challenge_cancel", challenge=got["challenge"])  # not gone yet
    sent = await ann.request("challenge", name="bob", days=2)
    async with moose.connect(url, token=token) as bob:
        heard = bob.challenges()
        offer = await anext(heard)
        assert offer["challenge"] == sent["challenge"] and offer["days"] == 2
        await bob.challenge_accept(offer["challenge"])
        assert (await ann.expect(type="challenge_offer"))["status"] == "started"
