"""Health and readiness endpoints, draining, and what a client gets when Redis goes away."""

from __future__ import annotations

import asyncio

import aiohttp
from aiohttp import web

from moose_server.app import STORE, WORK, create_app, drain
from moose_server.matchmaking.matchmaker import Matchmaker, MatchOptions
from moose_server.net.ws import DOORS
from moose_server.settings import Settings
from moose_server.storage.embedded import free_port
from moose_server.storage.scripts import CommitCall
from moose_server.storage.store import Store

from helpers import http_base, until


async def get(url: str) -> tuple[int, dict]:
    """Status and JSON body of a GET."""
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        return resp.status, await resp.json()


async def test_healthz_and_readyz_answer(moose_server):
    base = http_base(await moose_server())
    assert (await get(base + "/healthz"))[0] == 200
    assert (await get(base + "/readyz")) == (200, {"ready": True})


async def test_lost_redis_means_unavailable_and_not_ready(
    moose_server, ws_client, redis_factory, caplog
):
    redis = redis_factory(appendonly=False)
    url = await moose_server(redis_url=redis.url)
    base = http_base(url)
    client = await ws_client(url, "ann")
    redis.stop()
    answer = await client.request("ping")
    assert answer["type"] == "error" and answer["code"] == "unavailable"
    # Ready or not, nothing more: Redis' address and error are for the log alone.
    assert (await get(base + "/readyz")) == (503, {"ready": False})
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("not ready")]
    assert logged and str(redis.port) in logged[0], logged
    assert (await get(base + "/healthz"))[0] == 200  # alive, just not ready
    redis.start()
    assert (await client.request("ping"))["type"] == "pong"  # the same socket, once back


async def _true(value: bool) -> bool:
    return value


class Stuck:
    """A socket that never goes away: it holds a drain for the whole grace."""

    def close(self, code: int, message: str = "") -> None:
        """Ignore the request to reconnect."""


async def started(settings: Settings) -> tuple[web.Application, web.AppRunner]:
    """An app serving on `settings.port`."""
    app = create_app(settings)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", settings.port).start()
    return app, runner


async def test_draining_answers_503_and_takes_no_new_work(redis_url, ws_client, tmp_path):
    # The grace outlasts the test: the stuck socket holds the drain until it goes.
    settings = Settings(
        port=free_port(),
        redis_url=redis_url,
        data_dir=str(tmp_path),
        drain_grace=600,
        poll_interval=0.05,
        match_interval=0.05,
        match_wait=0,
    )
    app, runner = await started(settings)
    base = f"http://127.0.0.1:{settings.port}"
    try:
        polite = await ws_client(f"ws://127.0.0.1:{settings.port}/ws", "ann")
        doors = app[DOORS]
        stuck = Stuck()
        doors.open.add(stuck)  # type: ignore[arg-type]
        draining = asyncio.create_task(drain(app))
        assert await polite.closed() == 1012
        # Every loop that takes new work (deadlines, tables, arenas) has ended:
        # nothing can claim what appears from here on.
        await until(lambda: _true(all(task.done() for _, task in app[WORK])))
        assert (await get(base + "/readyz")) == (503, {"ready": False})
        async with aiohttp.ClientSession() as session, session.get(base + "/ws") as resp:
            assert resp.status == 503
        # New work appears: a deadline falls due, two tickets could make a table.
        store = Store(app[STORE].redis, settings.buckets)
        key = store.keys_of("g_due").deadlines
        await store.commit(
            CommitCall(
                game="g_due", expected=0, data={}, events=[({"kind": "start"}, {})], deadline_ms=50
            )
        )
        due = await store.redis.zscore(key, "g_due")
        others = Matchmaker(app[STORE].redis, MatchOptions(match_wait=0, instance="i_other"))
        await others.enqueue("p1", "bob", 2, 2)
        await others.enqueue("p2", "cid", 2, 2)
        assert not draining.done()  # the stuck socket holds the drain
        assert await store.redis.zscore(key, "g_due") == due  # a claim would push it on
        assert (await others.queue_sizes())["2"] == 2  # nobody seated
        doors.open.discard(stuck)  # type: ignore[arg-type]
        await asyncio.wait_for(draining, 10)  # the last socket gone, the drain ends
    finally:
        await runner.cleanup()


async def test_a_drain_gives_up_on_a_socket_that_stays_after_the_grace(redis_url, tmp_path):
    settings = Settings(
        port=free_port(), redis_url=redis_url, data_dir=str(tmp_path), drain_grace=0.3
    )
    app, runner = await started(settings)
    try:
        stuck = Stuck()
        app[DOORS].open.add(stuck)  # type: ignore[arg-type]
        await asyncio.wait_for(drain(app), 30)
        assert stuck in app[DOORS].open  # it never went: the drain gave up on it
    finally:
        await runner.cleanup()
