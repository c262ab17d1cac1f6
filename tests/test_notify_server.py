"""Notices through a running instance: the socket messages, the mail links, push and mail.

A real server instance, a real SMTP server on loopback (aiosmtpd) and a push
service on loopback (helpers.push). A notice is queued on the delivery stream
as a game's commit on any instance queues it; the instance's own sender sends it.
"""

from __future__ import annotations

import email
import re
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import pytest

from moose_server.notify import Notice, NotifyStore
from moose_server.storage.connection import open_redis
from moose_server.storage.embedded import free_port

from helpers import RawClient, Serve
from helpers.mail import Inbox
from helpers.push import Browser, PushService, vapid_claims

# The instance's sender looks at the stream every second when not woken: over the
# fast lane's second.
pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery"
Connect = Callable[..., Awaitable[RawClient]]


@pytest.fixture
async def queue(redis_url: str) -> AsyncIterator[Callable[[Notice], Awaitable[None]]]:
    """Put a notice on the delivery stream, as a commit on any instance does."""
    redis = await open_redis(redis_url, 2)
    store = NotifyStore(redis, per_player=5)

    async def put(notice: Notice) -> None:
        await store.queue([notice])

    yield put
    await redis.aclose()


def body(mail: email.message.Message) -> str:
    """A mail's text."""
    payload = mail.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode()


def link(text: str, action: str) -> str:
    """The /notify/<action> link in a mail's text."""
    found = re.search(rf"http://\S+/notify/{action}\?\S+", text)
    assert found, text
    return found.group(0)


async def test_a_confirmed_address_gets_the_notice_a_gone_browser_did_not(
    serve: Serve,
    ws_client: Connect,
    inbox: tuple[Inbox, int],
    push_service: PushService,
    queue: Callable[[Notice], Awaitable[None]],
) -> None:
    mails, port = inbox
    web = free_port()
    public = f"http://127.0.0.1:{web}"
    mail = {"smtp_host": "127.0.0.1", "smtp_port": port, "smtp_tls": "none", "public_url": public}
    server = await serve(web, **mail)
    alice = await ws_client(server.url, "alice")
    welcome_player = (await alice.request("register", password=PASSWORD))["player"]
    settings = await alice.request("notify_settings", email="alice@example.org", your_move=True)
    assert settings["email"] == "alice@example.org" and not settings["email_confirmed"]
    confirm = await mails.mails.get()
    assert confirm["To"] == "alice@example.org"
    assert confirm["List-Unsubscribe"]
    async with aiohttp.ClientSession() as http, http.get(link(body(confirm), "confirm")) as r:
        assert r.status == 200
    assert (await alice.request("notify_settings"))["email_confirmed"]
    gone = Browser(push_service.endpoint("gone"))
    push_service.answers = [410]
    assert (await alice.request("push_subscribe", subscription=gone.subscription()))[
        "type"
    ] == "push_subscribed"
    await queue(Notice(welcome_player, "your_move", "g_x", "It is your move.", 3))
    notice = await mails.mails.get()
    assert "It is your move." in body(notice) and "/notify/unsubscribe?" in body(notice)
    assert f"{public}/play/g_x" in body(notice)
    assert (await push_service.received.get()).answered == 410
    assert (await alice.request("notify_settings"))["push"] == 0  # the gone browser dropped
    async with aiohttp.ClientSession() as http, http.get(link(body(notice), "unsubscribe")) as r:
        assert r.status == 200
    assert (await alice.request("notify_settings"))["email"] is None


async def test_a_browser_subscribed_from_the_socket_gets_the_push_signed_with_the_served_key(
    url: str,
    ws_client: Connect,
    push_service: PushService,
    queue: Callable[[Notice], Awaitable[None]],
) -> None:
    base = url.replace("ws://", "http://").removesuffix("/ws")
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/notify/key") as r:
            key = (await r.json())["key"]
        async with http.get(f"{base}/sw.js") as r:
            assert r.status == 200 and "javascript" in r.headers["Content-Type"]
            assert "showNotification" in await r.text()
    bob = await ws_client(url, "bob")
    assert (await bob.request("notify_settings"))["key"] == key
    player = bob.player
    browser = Browser(push_service.endpoint("bob"))
    await bob.request("push_subscribe", subscription=browser.subscription())
    await queue(Notice(player, "game_over", "g_y", "Your game is over.", 40))
    got = await push_service.received.get()
    assert browser.read(got) == {"kind": "game_over", "game": "g_y", "text": "Your game is over."}
    assert vapid_claims(got, key)["aud"] == f"http://127.0.0.1:{push_service.port}"


async def test_a_subscription_or_address_that_is_not_one_is_refused(
    url: str, ws_client: Connect, push_service: PushService
) -> None:
    carol = await ws_client(url, "carol")
    good = Browser(push_service.endpoint("c")).subscription()
    bad = [
        {"endpoint": "ftp://push.example/x", "keys": good["keys"]},
        {"endpoint": "http://push.example/x", "keys": good["keys"]},  # http off loopback
        {"endpoint": good["endpoint"], "keys": {**good["keys"], "auth": "AAAA"}},
        {"endpoint": good["endpoint"], "keys": {**good["keys"], "p256dh": "not*base64"}},
        {"endpoint": good["endpoint"]},
    ]
    for sub in bad:
        await carol.send({"type": "push_subscribe", "subscription": sub, "id": 1})
        assert (await carol.expect(type="error"))["code"] == "bad_message", sub
    await carol.send({"type": "notify_settings", "email": "carol@example.org", "id": 2})
    assert (await carol.expect(type="error"))["code"] == "not_registered"  # a guest
    settings = await carol.request("notify_settings")
    assert settings["push"] == 0 and settings["email"] is None


async def test_a_browser_unsubscribes_once_and_a_second_time_drops_nothing(
    url: str, ws_client: Connect, push_service: PushService
) -> None:
    dora = await ws_client(url, "dora")
    browser = Browser(push_service.endpoint("dora"))
    subscribed = await dora.request("push_subscribe", subscription=browser.subscription())
    assert subscribed["type"] == "push_subscribed", subscribed
    assert (await dora.request("notify_settings"))["push"] == 1
    endpoint = browser.subscription()["endpoint"]
    dropped = await dora.request("push_unsubscribe", endpoint=endpoint)
    assert dropped["type"] == "push_unsubscribed" and dropped["dropped"] is True, dropped
    again = await dora.request("push_unsubscribe", endpoint=endpoint)
    assert again["type"] == "push_unsubscribed" and again["dropped"] is False, again
    await dora.send({"type": "push_unsubscribe", "id": 9})  # no endpoint
    assert (await dora.expect(type="error"))["code"] == "bad_message"
    assert (await dora.request("notify_settings"))["push"] == 0
