"""The client library against real server instances over a real Redis.

No mocks: every test starts `moose_server` on loopback ports (see `serve`) and
talks to it through real sockets. Nothing here asserts on durations.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from typing import Any

import pytest

import moose
from moose import fair, rules, search
from moose.client import (
    ConnectError,
    ConnectionLost,
    MooseError,
    ServerError,
)
from moose.search import SearchBot
from moose_server.storage.embedded import free_port

from helpers import Serve, check_views, play_seat

Message = dict[str, Any]


# -- no server -------------------------------------------------------------------------


def test_all_names_resolve() -> None:
    for name in moose.__all__:
        assert getattr(moose, name) is not None


@pytest.mark.slow
def test_import_moose_does_not_import_aiohttp() -> None:
    code = "import sys, moose, moose.cli; moose.cli.build_parser(); print('aiohttp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_errors_form_one_tree() -> None:
    for exc in (ConnectError, ConnectionLost, ServerError):
        assert issubclass(exc, MooseError)
    err = ServerError("illegal_move", "seat 1 holds no door")
    assert (err.code, err.message) == ("illegal_move", "seat 1 holds no door")


async def test_connect_to_nothing_raises_connect_error() -> None:
    with pytest.raises(ConnectError, match="cannot reach"):
        async with moose.connect(f"ws://127.0.0.1:{free_port()}/ws", name="alice"):
            pass


# -- one server --------------------------------------------------------------------------


async def test_hello_gives_player_token_and_clock(url: str) -> None:
    async with moose.connect(url, name="alice") as client:
        assert client.player and client.player.startswith("p_")
        assert client.token and client.name == "alice"
        offset = await client.ping()
        assert abs(offset) < 60_000  # one machine, one clock: any offset is small
    async with moose.connect(url, token=client.token) as again:
        assert (again.player, again.name) == (client.player, "alice")


@pytest.mark.parametrize("binary", [True, False])
async def test_requests_get_answers_and_errors_raise_with_code(url: str, binary: bool) -> None:
    async with moose.connect(url, name="alice", binary=binary) as client:
        assert (await client.queue(2, 3))["type"] == "queued"
        with pytest.raises(ServerError) as info:
            await client.queue(2, 3)
        assert info.value.code == "already_queued"
        assert (await client.leave_queue())["type"] == "left"
        with pytest.raises(ServerError) as info:
            await client.move("g_0000000000", {"action": "pass"})
        assert info.value.code == "no_such_game"
        table = await client.create_table(3)
        assert table["code"] and table["host"] == client.player


async def test_close_stops_the_reader_and_ends_events(url: str) -> None:
    client = moose.connect(url, name="alice")
    async with client:
        task = client._task
    assert task is not None and task.done()
    assert [msg async for msg in client.events()] == []
    with pytest.raises(ConnectionLost):
        await client.ping()


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
async def test_bots_play_full_games_through_the_queue(url: str, players: int) -> None:
    runs = [
        moose.play_bot(url, "greedy", games=1, min_players=players, max_players=players, seed=i)
        for i in range(players)
    ]
    results = [r for rs in await asyncio.gather(*runs) for r in rs]
    assert len({r.game for r in results}) == 1
    assert sorted(r.seat for r in results) == list(range(players))
    assert all(len(r.scores) == players and r.winners for r in results)
    assert sum(r.won for r in results) == len(results[0].winners)


async def test_fair_clients_send_seeds_that_the_record_holds(serve: Serve) -> None:
    url = (await serve(seed_time=60.0)).url  # only the seeds deal: a minute otherwise
    async with moose.connect(url, name="ann") as ann, moose.connect(url, name="bob") as bob:
        results = await asyncio.gather(
            *(c.run_bot("random", 1, min_players=2, max_players=2, fair=True) for c in (ann, bob))
        )
        game = results[0][0].game
        record = await ann.record(game)
        assert set(record["deal"]["seeds"]) == {ann.seeds[game], bob.seeds[game]}
        assert all(len(c.seeds[game]) == 32 for c in (ann, bob))
    assert fair.verify(record) == []


async def test_a_fair_private_table_is_dealt_once_both_seeds_are_in(serve: Serve) -> None:
    url = (await serve(seed_time=60.0)).url
    async with moose.connect(url, name="ann") as ann, moose.connect(url, name="bob") as bob:
        table = await ann.create_table(2, fair=True)
        await bob.join_table(table["code"], fair=True)
        await ann.start_table(table["code"])
        async with asyncio.timeout(20):  # the start event: both seeds came
            for client in (ann, bob):
                async for msg in client.events():
                    if msg["type"] == "event" and msg["event"]["kind"] == "start":
                        break
        assert ann.seeds.keys() == bob.seeds.keys() == {msg["game"]}


async def test_play_bot_with_fair_sends_a_seed(serve: Serve) -> None:
    url = (await serve(seed_time=60.0)).url
    runs = [
        moose.play_bot(url, "greedy", min_players=2, max_players=2, seed=i, fair=True)
        for i in range(2)
    ]
    [[result], _] = await asyncio.gather(*runs)
    async with moose.connect(url, name="look") as look:
        record = await look.record(result.game)
    assert all(record["deal"]["seeds"]) and fair.verify(record) == []


async def test_a_searching_bot_thinks_off_the_event_loop(url: str, monkeypatch: Any) -> None:
    # The bot waits until a coroutine of this loop lets it go: were it thinking
    # on the loop, that coroutine could not run and the wait would time out.
    entered, release = threading.Event(), threading.Event()
    waits: list[bool] = []
    choose = SearchBot.choose

    def held(self: SearchBot, view: Message, legal: list[Message]) -> Message:
        entered.set()
        waits.append(release.wait(10))
        return choose(self, view, legal)

    async def let_go() -> None:
        while not entered.is_set():
            await asyncio.sleep(0.01)
        release.set()

    monkeypatch.setattr(SearchBot, "choose", held)
    monkeypatch.setattr(search, "ITERATIONS", 4)
    two = {"games": 1, "min_players": 2, "max_players": 2}
    [searcher], [other], _ = await asyncio.gather(
        moose.play_bot(url, "mcts", seed=1, **two),
        moose.play_bot(url, "greedy", seed=2, **two),
        let_go(),
    )
    assert searcher.game == other.game
    assert waits and all(waits)


@pytest.mark.slow
async def test_run_bot_plays_several_games_in_a_row(url: str) -> None:
    results = await asyncio.gather(
        moose.play_bot(url, "greedy", games=3, min_players=2, max_players=2, seed=1),
        moose.play_bot(url, "random", games=3, min_players=2, max_players=2, seed=2),
    )
    assert [len(rs) for rs in results] == [3, 3]
    assert {r.game for r in results[0]} == {r.game for r in results[1]}


async def test_no_frame_holds_another_seats_hand(url: str) -> None:
    frames: list[Message] = []
    async with moose.connect(url, name="alice") as client:
        client.trace = lambda way, msg: frames.append(msg) if way == "recv" else None
        other = asyncio.create_task(moose.play_bot(url, "greedy", min_players=3, max_players=3))
        third = asyncio.create_task(moose.play_bot(url, "random", min_players=3, max_players=3))
        await client.queue(3, 3)
        game, seat, events = await play_seat(client)
        await asyncio.gather(other, third)
        record = await client.record(game)
    check_views(events, record, seat)
    for msg in frames:
        if msg["type"] == "event":
            assert set(msg["view"]) <= set(rules.view(rules.new_game(3, seed=0), 0)) | {
                "scores",
                "winners",
            }
            assert msg["view"]["seat"] == seat
        else:
            assert msg["type"] == "record" or "deck" not in str(msg)


@pytest.mark.slow
async def test_a_private_game_is_watched_with_its_code_also_after_a_reconnect(
    serve: Serve,
) -> None:
    # The host never moves: their turns time out, so the game goes on slowly.
    first, second = await serve(turn_time=0.5, away_after=1000), await serve(turn_time=0.5)
    async with moose.connect(first.url, name="host") as host:
        code = (await host.create_table(2))["code"]
        await host.add_bot(code, "greedy")
        await host.start_table(code)
        game = next(m for m in [await anext(aiter(host.events()))] if m["type"] == "match")
        async with moose.connect([first.url, second.url], name="fan") as fan:
            with pytest.raises(ServerError) as refused:
                await fan.watch(game["game"])
            assert refused.value.code == "not_in_game"
            await fan.watch(game["game"], code=code.lower())
            state = await anext(aiter(fan.events()))
            assert state["event"]["kind"] == "state" and state["view"]["seat"] is None
            await first.stop()  # 1012: the fan goes on to the second and watches again
            events = aiter(fan.events())
            while (await anext(events))["seq"] <= state["seq"] + 2:
                pass  # events committed after the reconnect come: the code was sent again
            assert fan.reconnects == 1 and fan.url == second.url
