"""Heartbeats: silent sockets are pinged and cut when they do not answer; the work is spread."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator

import aiohttp

from moose_server.net.heartbeats import TICK, Heartbeats


class Sock:
    """A socket as the heartbeat sees it: it only notes when it was looked at."""

    def __init__(self, visits: list[tuple[float, Sock]]) -> None:
        self.visits = visits

    def beat(self, now: float, heartbeat: float) -> None:
        self.visits.append((now, self))


async def test_every_socket_is_looked_at_each_cycle_a_slice_at_a_time() -> None:
    visits: list[tuple[float, Sock]] = []
    socks = {Sock(visits) for _ in range(100)}
    heartbeat = 8 * TICK  # a cycle (heartbeat / 2) of 4 ticks: a quarter of them a tick
    task = asyncio.create_task(Heartbeats(socks, heartbeat).run())
    try:
        async with asyncio.timeout(30):
            while len({s for _, s in visits}) < len(socks):
                await asyncio.sleep(TICK)
    finally:
        task.cancel()
    slices: dict[float, int] = {}
    for now, _ in visits:
        slices[now] = slices.get(now, 0) + 1
    assert max(slices.values()) == math.ceil(len(socks) / 4)  # never all at once


@contextlib.asynccontextmanager
async def raw_socket(url: str) -> AsyncIterator[aiohttp.ClientWebSocketResponse]:
    """A socket whose pings and pongs the test sees (no autoping), hello said."""
    async with aiohttp.ClientSession() as session, session.ws_connect(url, autoping=False) as ws:
        await ws.send_json({"type": "hello", "protocol": 1, "name": "quiet"})
        assert (await ws.receive_json())["type"] == "welcome"
        yield ws


async def test_a_silent_socket_that_answers_pings_stays(moose_server):
    async with raw_socket(await moose_server(heartbeat=0.2)) as ws:
        for _ in range(3):  # three pings, each answered
            msg = await ws.receive(timeout=30)
            assert msg.type == aiohttp.WSMsgType.PING
            await ws.pong(msg.data)
        await ws.send_json({"type": "ping", "id": 1})
        answer = await ws.receive(timeout=30)
        while answer.type == aiohttp.WSMsgType.PING:
            await ws.pong(answer.data)
            answer = await ws.receive(timeout=30)
        assert answer.json()["type"] == "pong"


async def test_a_socket_that_never_answers_a_ping_is_cut(moose_server):
    async with raw_socket(await moose_server(heartbeat=0.2)) as ws:
        msg = await ws.receive(timeout=30)
        assert msg.type == aiohttp.WSMsgType.PING  # not answered
        while msg.type == aiohttp.WSMsgType.PING:
            msg = await ws.receive(timeout=30)
        assert msg.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR)


async def test_the_server_answers_a_clients_ping(moose_server):
    async with raw_socket(await moose_server()) as ws:
        await ws.ping(b"are you there")
        msg = await ws.receive(timeout=30)
        assert (msg.type, msg.data) == (aiohttp.WSMsgType.PONG, b"are you there")
