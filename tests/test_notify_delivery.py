"""Notices sent from the delivery stream: Web Push to a push service on loopback.

Each test runs a real `Sender` over the test Redis, one round at a time, against
`helpers.push.PushService`, and reads each push as a browser would (decrypted
with the subscription's keys, its VAPID token checked).
"""

from __future__ import annotations

import base64
import dataclasses
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from py_vapid import Vapid

from moose import rules
from moose_server.notify import (
    Mailer,
    Notice,
    Notifier,
    NotifyStore,
    Pusher,
    Sender,
    is_correspondence,
    public_key,
)
from moose_server.play import Game, Seat
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import NOTICES_KEY
from moose_server.storage.store import Store

from helpers.push import STALL, Browser, PushService, vapid_claims
from helpers.servers import open_games

FAST = {"push_timeout": 2.0, "notify_backoff": 0.01, "notify_retries": 3}

MakeSender = Callable[..., Awaitable[Sender]]


@pytest.fixture
async def make_sender(redis_url: str) -> AsyncIterator[MakeSender]:
    """``sender = await make_sender(consumer="a", **settings)``: a Sender over the test Redis."""
    redis = await open_redis(redis_url, 4)
    vapid = Vapid()
    vapid.generate_keys()
    pushers: list[Pusher] = []

    async def make(consumer: str = "a", **changes: Any) -> Sender:
        settings = Settings(redis_url=redis_url, **{**FAST, **changes})
        pusher = await Pusher(vapid, "mailto:ops@example.org", settings.push_timeout).__aenter__()
        pushers.append(pusher)
        store = NotifyStore(redis, per_player=settings.push_per_player)
        sender = Sender(store, pusher, Mailer(settings), settings, consumer, Store(redis, 16))
        await store.join_group()
        return sender

    yield make
    for pusher in pushers:
        await pusher.__aexit__(None, None, None)
    await redis.aclose()


def your_move(player: str = "p1", game: str = "g1", seq: int = 7) -> Notice:
    """A "your move" notice."""
    return Notice(player, "your_move", game, "It is your move.", seq)


async def test_a_push_arrives_encrypted_for_the_subscription_with_a_valid_vapid_token(
    make_sender: MakeSender, push_service: PushService
) -> None:
    sender = await make_sender()
    browser = Browser(push_service.endpoint("b1"))
    assert await sender.store.subscribe("p1", browser.subscription())
    await sender.store.queue([your_move()])
    assert await sender.round() == 1
    got = push_service.received.get_nowait()
    assert browser.read(got) == {"kind": "your_move", "game": "g1", "text": "It is your move."}
    claims = vapid_claims(got, public_key(sender.pusher.vapid))
    assert claims["aud"] == f"http://127.0.0.1:{push_service.port}"
    assert claims["sub"] == "mailto:ops@example.org"
    assert int(got.headers["ttl"]) > 0


async def test_an_endpoint_that_answers_410_is_dropped(
    make_sender: MakeSender, push_service: PushService
) -> None:
    sender = await make_sender()
    for name in ("one", "two"):
        await sender.store.subscribe("p1", Browser(push_service.endpoint(name)).subscription())
    push_service.answers = [410, 201]  # whichever is pushed to first is gone
    await sender.store.queue([your_move()])
    assert await sender.round() == 1
    answered = {got.path: got.answered for got in _drain(push_service)}
    assert sorted(answered.values()) == [201, 410]
    [left] = await sender.store.subscriptions("p1")
    assert answered[left["endpoint"].split(str(push_service.port), 1)[1]] == 201


async def test_an_endpoint_that_stalls_is_tried_again_and_gets_the_notice(
    make_sender: MakeSender, push_service: PushService
) -> None:
    sender = await make_sender(push_timeout=0.3)
    browser = Browser(push_service.endpoint("slow"))
    await sender.store.subscribe("p1", browser.subscription())
    push_service.answers = [STALL, 201]
    await sender.store.queue([your_move()])
    assert await sender.round() == 1
    stalled, taken = _drain(push_service)
    assert (stalled.answered, taken.answered) == (STALL, 201)
    assert browser.read(taken)["kind"] == "your_move"
    assert len(await sender.store.subscriptions("p1")) == 1  # a timeout drops nothing


async def test_a_notice_marked_sent_is_acknowledged_when_taken_over_not_sent_again(
    make_sender: MakeSender, push_service: PushService
) -> None:
    """An instance that died between its send and its ack: the next one only acks."""
    dead = await make_sender(consumer="dead")
    browser = Browser(push_service.endpoint("b1"))
    await dead.store.subscribe("p1", browser.subscription())
    sent = your_move(seq=1)
    await dead.store.queue([sent])
    [_] = await dead.store.take("dead", 60_000, 10)  # taken, never acknowledged
    await dead.store.mark_sent(sent)
    heir = await make_sender(consumer="heir", notify_claim_idle=0)
    assert await heir.round() == 1  # the dead one's entry, taken over
    assert await _pending(heir) == 0
    # The next notice is the first thing the push service gets.
    await heir.store.queue([your_move(seq=2, game="g2")])
    assert await heir.round() == 1
    [got] = _drain(push_service)
    assert browser.read(got)["game"] == "g2"


async def test_one_notice_per_game_and_kind_within_the_quiet_interval(
    make_sender: MakeSender, push_service: PushService
) -> None:
    sender = await make_sender()
    browser = Browser(push_service.endpoint("b1"))
    await sender.store.subscribe("p1", browser.subscription())
    await sender.store.queue([your_move(seq=3), your_move(seq=5), your_move(game="g2", seq=5)])
    assert await sender.round() == 3
    games = sorted(browser.read(got)["game"] for got in _drain(push_service))
    assert games == ["g1", "g2"]


async def test_a_kind_turned_off_is_not_sent(
    make_sender: MakeSender, push_service: PushService
) -> None:
    sender = await make_sender()
    browser = Browser(push_service.endpoint("b1"))
    await sender.store.subscribe("p1", browser.subscription())
    await sender.store.set_prefs("p1", {"your_move": "0"})
    over = Notice("p1", "game_over", "g1", "Your game is over.", 9)
    await sender.store.queue([your_move(), over])
    assert await sender.round() == 2
    assert [browser.read(got)["kind"] for got in _drain(push_service)] == ["game_over"]


async def test_the_cap_of_subscriptions_per_player_keeps_a_known_one(
    make_sender: MakeSender, push_service: PushService
) -> None:
    sender = await make_sender(push_per_player=2)
    first, second, third = (Browser(push_service.endpoint(n)) for n in ("1", "2", "3"))
    assert await sender.store.subscribe("p1", first.subscription())
    assert await sender.store.subscribe("p1", second.subscription())
    assert not await sender.store.subscribe("p1", third.subscription())
    assert await sender.store.subscribe("p1", first.subscription())  # renewed, not new
    assert len(await sender.store.subscriptions("p1")) == 2


def _drain(service: PushService) -> list[Any]:
    """Every request the push service got so far, in order."""
    out = []
    while not service.received.empty():
        out.append(service.received.get_nowait())
    return out


async def _pending(sender: Sender) -> int:
    """Entries of the group taken and not acknowledged."""
    reply: Any = await sender.store.redis.call("XPENDING", NOTICES_KEY, "senders")
    return int(reply["pending"] if isinstance(reply, dict) else reply[0])


def correspondence_game(days: int | None = 3, bots: tuple[str | None, ...] = (None, None)) -> Game:
    """A 2-player game as play/ writes it: days per move (None: real time)."""
    state = rules.new_game(2, seed=1, dealer=0)
    seats = (["pa", "pb"], ["A", "B"], list(bots), [False] * 2, [0] * 2, [])
    return Game("g_corr", 4, 0, state, *seats, days=days)


async def test_a_correspondence_move_queues_your_move_for_the_seat_to_act_not_watching(
    make_sender: MakeSender, push_service: PushService
) -> None:
    sender = await make_sender()
    game = correspondence_game()
    to_act = game.players[rules.to_act(game.state)]  # type: ignore[index]
    watching: set[tuple[str, str]] = set()
    notifier = Notifier(sender.store, lambda p, g: (p, g) in watching, sender.wake, before=60)
    browser = Browser(push_service.endpoint("b1"))
    await sender.store.subscribe(to_act, browser.subscription())
    await notifier.turned(correspondence_game(days=None))  # real time: nothing
    watching.add((to_act, game.id))
    await notifier.turned(game)  # the player has the game open: nothing
    watching.clear()
    here = Notifier(sender.store, lambda p, g: False, sender.wake, before=60, here=lambda p: True)
    await here.turned(game)  # just dealt, the player has a socket here: nothing
    await notifier.turned(dataclasses.replace(game, version=5))
    assert await sender.round() == 1
    [got] = _drain(push_service)
    assert browser.read(got) == {"kind": "your_move", "game": "g_corr", "text": "It is your move."}


def test_only_an_integer_days_makes_a_game_correspondence() -> None:
    assert is_correspondence(correspondence_game(days=1))
    assert not is_correspondence(correspondence_game(days=None))
    assert not is_correspondence(dataclasses.replace(correspondence_game(), days=True))


def test_a_bot_to_act_is_told_nothing() -> None:
    from moose_server.notify.rules import turn_notices

    game = correspondence_game(bots=("greedy", "greedy"))
    assert turn_notices(game) == []
    assert base64  # keys come base64url-encoded (helpers.push)


@pytest.mark.slow
async def test_a_notice_taken_by_an_instance_killed_mid_send_is_sent_once_by_another(
    redis_url: str, make_sender: MakeSender, push_service: PushService
) -> None:
    heir = await make_sender(consumer="heir", notify_claim_idle=0)
    browser = Browser(push_service.endpoint("b1"))
    await heir.store.subscribe("p1", browser.subscription())
    push_service.answers = [STALL]  # the doomed instance's send never gets its answer
    await heir.store.queue([your_move(seq=1)])
    script = Path(__file__).parent / "helpers" / "notify_sender.py"
    doomed = subprocess.Popen([sys.executable, str(script), redis_url, "doomed", "3600"])
    try:
        stalled = await push_service.received.get()  # the doomed one is mid-send
    finally:
        doomed.kill()
        doomed.wait()
    assert stalled.answered == STALL
    assert await _pending(heir) == 1  # taken, never acknowledged
    assert await heir.round() == 1  # taken over
    [sent] = _drain(push_service)
    assert (sent.answered, browser.read(sent)["game"]) == (201, "g1")
    assert await _pending(heir) == 0
    assert await heir.round() == 0  # nothing left to send again
    await heir.store.queue([your_move(seq=2, game="g2")])
    assert await heir.round() == 1
    [after] = _drain(push_service)
    assert browser.read(after)["game"] == "g2"  # the next request is the next notice


@pytest.mark.parametrize("moved_since", [False, True])
async def test_time_running_out_goes_at_its_time_only_if_nobody_moved_since(
    redis_url: str, make_sender: MakeSender, push_service: PushService, moved_since: bool
) -> None:
    sender = await make_sender()
    async with open_games(redis_url, turn_time=30.0) as games:
        game = await games.create([Seat("pa", "A", None), Seat("pb", "B", None)], seed=1, dealer=0)
    to_act = game.players[rules.to_act(game.state)]
    assert to_act is not None
    browser = Browser(push_service.endpoint("b1"))
    await sender.store.subscribe(to_act, browser.subscription())
    # Told "your move" while looking: no notice now; the reminder is kept for its time,
    # which has come: the deadline is 30 s away, the reminder is for 60 s before it.
    notifier = Notifier(sender.store, lambda p, g: True, sender.wake, before=60)
    told = dataclasses.replace(game, version=game.version - (1 if moved_since else 0), days=1)
    await notifier.turned(told)
    await sender.store.queue([your_move(player=to_act, game="other")])  # a notice after it
    assert await sender.round() == 2  # the reminder, released, and the other notice
    kinds = sorted(browser.read(got)["kind"] for got in _drain(push_service))
    assert kinds == (["your_move"] if moved_since else ["time_running_out", "your_move"])


async def test_a_sender_makes_the_group_again_when_redis_lost_it(
    make_sender: MakeSender, push_service: PushService
) -> None:
    sender = await make_sender()
    browser = Browser(push_service.endpoint("b1"))
    await sender.store.subscribe("p1", browser.subscription())
    assert await sender.round() == 0  # joined
    await sender.store.redis.delete(NOTICES_KEY)  # the stream and its group are gone
    await sender.store.queue([your_move()])  # a new stream, without the group
    assert await sender.round() == 0  # NOGROUP: made again
    await sender.store.queue([your_move(game="g2")])
    assert await sender.round() == 2  # the group reads the stream from its start
    assert sorted(browser.read(got)["game"] for got in _drain(push_service)) == ["g1", "g2"]
