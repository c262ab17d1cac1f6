"""Hubs of instances over one real Redis, and sockets that keep what they are sent.

`Peer` stands for a socket; `instances` runs several hubs, each on its own
subscription (as an instance runs it) and channel, with a `Games` that commits
as the first of them; `subscribed`/`stopped` run one hub's subscription.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import redis.asyncio as aioredis

from moose import rules
from moose.messages import Reply
from moose_server.net.subscription import SILENT, Subscription
from moose_server.play.copies import Copies
from moose_server.play.games import Games
from moose_server.play.hub import Hub, Sub
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import wake_channel
from moose_server.storage.store import Store, connect

from helpers.timing import until

__all__ = [
    "Instances",
    "Peer",
    "checked_tasks",
    "instances",
    "is_true",
    "play_moves",
    "started",
    "stopped",
    "subscribed",
]


class Peer:
    """A socket that keeps the messages it is sent."""

    binary = False

    def __init__(self, player: str, seat: int | None) -> None:
        self.player = player
        self.subs: dict[str, Sub] = {}
        self.seat = seat
        self.got: list[dict[str, Any]] = []
        self.said: list[dict[str, Any]] = []  # player messages

    def send(self, message: dict[str, Any] | Reply) -> None:
        # As a text socket's client reads it: a Struct (an `event`) as its JSON map.
        self.got.append(msgspec.to_builtins(message) if isinstance(message, Reply) else message)

    def send_frame(self, payload: bytes) -> None:
        raise AssertionError("a text socket gets messages")

    def note_away(self, game: str) -> None:
        pass

    async def on_player_message(self, message: dict[str, Any]) -> None:
        self.said.append(message)


async def is_true(value: bool) -> bool:
    """`value`, awaitable: what `until` waits on."""
    return value


def started(
    hub: Hub, pubsub: Any, silent: float = SILENT
) -> tuple[asyncio.Future[None], asyncio.Event]:
    """The hub hearing its channels through a subscription, as an instance runs it;
    the subscription's `ready`."""
    running, subscription = subscribed(hub, pubsub, silent)
    return running, subscription.ready


def subscribed(
    hub: Hub, pubsub: Any, silent: float = SILENT
) -> tuple[asyncio.Future[None], Subscription]:
    """The hub hearing its channels through a subscription, running; the subscription."""
    subscription = Subscription(
        pubsub,
        hub.channels(),
        sharded=hub.sharded_channels(),
        subscribed=hub.subscribed,
        silent=silent,
    )
    return asyncio.ensure_future(subscription.run()), subscription


async def stopped(running: asyncio.Future[None], hub: Hub) -> None:
    """Stop a subscription started by `_started`, and the hub's deliveries."""
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    await hub.close()


async def checked_tasks(hub: Hub) -> None:
    """Every task the hub has started, to its end."""
    while hub._tasks:
        await asyncio.gather(*list(hub._tasks))


async def play_moves(games: Games, game_id: str, moves: int) -> None:
    """Play the first legal move of the seat to act, `moves` times (or to the end)."""
    for _ in range(moves):
        game = await games.load(game_id)
        if game.state.over:
            return
        player = game.players[rules.to_act(game.state)]
        await games.move(game_id, player, rules.legal_moves(game.state)[0])


@dataclass
class Instances:
    """Hubs of several instances over one real Redis, each on its own subscription and
    channel, and a `Games` that commits as the first of them (its hub a listener)."""

    client: aioredis.Redis
    store: Store
    hubs: list[Hub]
    channels: list[bytes]
    games: Games
    subscriptions: list[Subscription]
    copies: list[Copies]  # each hub's (its `woken`); `games` plays on the first

    async def followers(self, game: str) -> set[bytes]:
        """The channels the game's hash lists (lua/follow.lua)."""
        return set((await self.client.hget(self.store.keys_of(game).game, "w") or b"").split())


@contextlib.asynccontextmanager
async def instances(
    redis_url: str, *names: str, older: Sequence[str] = ()
) -> AsyncIterator[Instances]:
    client = connect(redis_url, 4)
    gw = await open_redis(redis_url, 8)
    pubsub_client = connect(redis_url, 1, blocking=True)
    store = Store(gw, 16)
    copies = [Copies(Settings()) for _ in names]  # each instance's; the first's play
    # An instance named in `older` hears no steps (the version before, mid-upgrade).
    channels = [wake_channel(name, name not in older) for name in names]
    hubs = [
        Hub(store, channel, woken=kept, steps=name not in older)
        for kept, channel, name in zip(copies, channels, names, strict=True)
    ]
    games = Games(store, Settings(), copies=copies[0], listeners=[hubs[0]], own_channel=channels[0])
    running = [subscribed(hub, pubsub_client) for hub in hubs]
    try:
        await until(lambda: is_true(all(sub.ready.is_set() for _, sub in running)))
        subscriptions = [sub for _, sub in running]
        yield Instances(client, store, hubs, channels, games, subscriptions, copies)
    finally:
        for (task, _), hub in zip(running, hubs, strict=True):
            await stopped(task, hub)
        await games.close()
        await pubsub_client.aclose()
        await client.aclose()
        await gw.aclose()
