"""The client library survives dropped sockets and restarting servers, missing nothing.

Sockets are cut from the test (the transport aborted, as a network failure
would) or closed by a draining server (close code 1012); the game is then
checked event by event against its record.
"""

from __future__ import annotations

import asyncio
from typing import Any

import moose
from moose.bots import make_bot
from moose.client import Client, ServerError, is_final
from moose_server.play.games import Games
from moose_server.play.seats import Seat
from moose_server.settings import Settings
from moose_server.storage.embedded import free_port
from moose_server.storage.keys import PLAYERS_CHANNEL, move_field

from helpers import Serve, aof_copy, aof_restore, check_views, open_store, play_seat

Message = dict[str, Any]


def cut_at(client: Client, *seqs: int) -> Any:
    """An on_event hook that cuts the client's socket after the events with these seqs."""

    async def hook(msg: Message) -> None:
        if msg["seq"] in seqs:
            client._abort()

    return hook


async def test_dropped_socket_resumes_with_no_missing_seq(url: str) -> None:
    async with moose.connect(url, name="alice") as client:
        player = client.player
        bot = asyncio.create_task(moose.play_bot(url, "greedy", min_players=2, max_players=2))
        await client.queue(2, 2)
        game, seat, events = await play_seat(client, on_event=cut_at(client, 3, 9, 10))
        await bot
        record = await client.record(game)
        assert client.reconnects == 3
        assert client.player == player  # the token brought back the same player and seat
    check_views(events, record, seat)  # seq 1..N, each once, each the right view


async def test_move_in_flight_is_resent_with_the_same_move_id(url: str) -> None:
    sent: list[Message] = []
    async with moose.connect(url, name="alice") as client:
        loop = asyncio.get_running_loop()

        def trace(way: str, msg: Message) -> None:
            if way == "send" and msg["type"] == "move":
                sent.append(msg)
                if len(sent) in (1, 4):
                    # Right after the frame is written: the server applies the move
                    # and its answer is lost with the socket.
                    loop.call_soon(client._abort)

        client.trace = trace
        bot = asyncio.create_task(moose.play_bot(url, "greedy", min_players=2, max_players=2))
        await client.queue(2, 2)
        game, seat, events = await play_seat(client)
        await bot
        record = await client.record(game)
    ids = [m["move_id"] for m in sent]
    assert ids[0] == ids[1] and ids[3] == ids[4]  # resent as they were
    assert sent[0] == sent[1] and len(set(ids)) == len(ids) - 2
    check_views(events, record, seat)  # and each applied once


async def test_a_repeated_move_id_gets_the_first_answer(url: str) -> None:
    async with moose.connect(url, name="alice") as client:
        bot = asyncio.create_task(moose.play_bot(url, "greedy", min_players=2, max_players=2))
        await client.queue(2, 2)
        async for msg in client.events():
            if msg["type"] == "event" and msg.get("legal"):
                break
        fields = {"game": msg["game"], "move": msg["legal"][0], "seq": msg["seq"], "move_id": "x-1"}
        first = await client._request("move", **fields)
        again = await client._request("move", **fields)
        assert (first["seq"], again["seq"]) == (msg["seq"] + 1, msg["seq"] + 1)
        await client.close()
        bot.cancel()


async def test_dropped_socket_while_queued_queues_again(url: str) -> None:
    async with moose.connect(url, name="alice") as client:
        await client.queue(2, 2)
        client._abort()
        bot = asyncio.create_task(moose.play_bot(url, "greedy", min_players=2, max_players=2))
        _, _, events = await play_seat(client)
        await bot
        assert events[-1]["view"]["over"] and client.reconnects == 1


async def test_restarting_server_sends_clients_to_the_next_instance(serve: Serve) -> None:
    first = await serve()
    restarted: list[Any] = []

    async def restart(msg: Message) -> None:
        if msg["seq"] == 5:
            await first.stop()  # drains: every socket is closed with 1012
            restarted.append(await serve(port=first.port))

    async with moose.connect(first.url, name="alice") as client:
        bot = asyncio.create_task(moose.play_bot(first.url, "greedy", min_players=2, max_players=2))
        await client.queue(2, 2)
        game, seat, events = await play_seat(client, on_event=restart)
        results = await bot
        record = await client.record(game)
        assert client.reconnects == 1 and restarted
    assert results[0].game == game
    check_views(events, record, seat)


async def test_a_list_of_urls_skips_a_dead_one_and_reconnects_to_the_next(serve: Serve) -> None:
    first, second = await serve(), await serve()
    dead = f"ws://127.0.0.1:{free_port()}/ws"  # nothing listens there
    moved: list[str] = []

    async def drain_first(msg: Message) -> None:
        if msg["seq"] == 5 and client.url == first.url:
            await first.stop()  # close 1012: the client goes on to the next URL in the list
            moved.append(client.url)

    async with moose.connect([dead, first.url, second.url], name="alice") as client:
        assert client.url == first.url  # the dead one was skipped at open
        bot = asyncio.create_task(
            moose.play_bot(second.url, "greedy", min_players=2, max_players=2)
        )
        await client.queue(2, 2)
        game, seat, events = await play_seat(client, on_event=drain_first)
        await bot
        record = await client.record(game)
        assert client.reconnects == 1 and client.url == second.url and moved
    check_views(events, record, seat)


async def test_a_followed_game_list_comes_again_after_a_reconnect(serve: Serve) -> None:
    server = await serve(live_interval=0.1)
    async with moose.connect(server.url, name="fan") as fan:
        assert (await fan.games(follow=True))["games"] == []
        port = server.port
        await server.stop()  # drained: close 1012, the client reconnects at once
        await serve(port=port, live_interval=0.1)
        async with moose.connect(server.url, name="alice") as alice:
            await alice.queue(2, 2)
            async with moose.connect(server.url, name="bob") as bob:
                await bob.queue(2, 2)
                game, _ = await _first_match(alice)
                async with asyncio.timeout(15):
                    async for msg in fan.events():
                        if msg["type"] == "game_list" and msg["games"]:
                            break
                assert [g["game"] for g in msg["games"]] == [game] and "id" not in msg


async def _first_match(client: Client) -> tuple[str, int]:
    async for msg in client.events():
        if msg["type"] == "match":
            return msg["game"], msg["seat"]
    raise AssertionError("no match")


async def test_a_move_redis_lost_after_answering_it_is_sent_again_with_its_move_id(
    moose_serve, redis_factory, ws_client
) -> None:
    # appendfsync always: the AOF copied is exactly what Redis had at that moment.
    redis_server = redis_factory(appendonly=True, extra=["--appendfsync", "always"])
    proc = moose_serve("--redis", redis_server.url, "--poll-interval", "0.05")
    sent: list[Message] = []
    async with moose.connect(proc.url, name="alice") as alice:
        alice.trace = lambda _, msg: sent.append(msg) if msg["type"] in ("move", "moved") else None
        bob = await ws_client(proc.url, "bob")
        table = await alice.create_table(2)
        await bob.request("join_table", code=table["code"])
        await alice.start_table(table["code"])
        turn = await alice_s_turn(alice, bob)
        copy = aof_copy(redis_server)
        moved = await alice.move(turn["game"], turn["legal"][0], seq=turn["seq"])
        assert moved["seq"] == turn["seq"] + 1
        redis_server.kill()  # Redis loses the move it answered
        aof_restore(redis_server, copy)
        await asyncio.to_thread(redis_server.start)
        async with asyncio.timeout(30):
            async for msg in alice.events():
                if msg["type"] == "event" and msg["event"]["kind"] == "state":
                    break
        assert msg["seq"] == turn["seq"] and msg["legal"] is None  # answered already
        async with asyncio.timeout(30):
            while len(sent) < 4 or sent[-1]["type"] != "moved":  # move, moved, again
                await asyncio.sleep(0.05)
    first, again = [m for m in sent if m.get("move_id")]
    assert again["move_id"] == first["move_id"] and again["move"] == first["move"]
    async with open_store(redis_server.url) as store:
        event = await store.event(turn["game"], turn["seq"] + 1)
    assert event is not None and event.event["move"] == turn["legal"][0]
    assert event.event["auto"] is None  # alice's own move, not a timeout


async def test_every_move_redis_lost_is_sent_again_in_order_with_its_move_id(
    moose_serve, redis_factory
) -> None:
    # Both seats move several times in the writes Redis loses: each client sends
    # its moves again as the game, replayed, comes back to the events they
    # answered. Before, only a move answering the `state`'s own seq was sent again.
    redis_server = redis_factory(appendonly=True, extra=["--appendfsync", "always"])
    proc = moose_serve("--redis", redis_server.url, "--poll-interval", "0.05")
    acked: list[tuple[str, int, int, Message, str]] = []  # player, seat, seq, move, move id
    copy: list[Any] = []
    playing = asyncio.Event()
    playing.set()

    async def play(client: Client, seat: int) -> None:
        bot, answered = make_bot("greedy", seed=seat), 0
        async for msg in client.events():
            if msg["type"] != "event" or is_final(msg):
                if msg["type"] == "event":
                    return
                continue
            if msg["event"]["kind"] == "state":
                answered = 0  # the game as it is now
            if not msg["legal"] or msg["view"]["to_act"] != seat or msg["seq"] < answered:
                continue
            await playing.wait()
            move, move_id = bot.choose(msg["view"], msg["legal"]), f"{seat}-{len(acked)}"
            try:
                moved = await client.move("g_lost", move, seq=msg["seq"], move_id=move_id)
            except ServerError as exc:
                assert exc.code in ("stale_seq", "not_your_turn", "unavailable"), exc
                continue  # a move answering an event Redis lost
            answered = moved["seq"]
            acked.append((client.player or "", seat, moved["seq"], move, move_id))
            if len(acked) == 4:
                copy.append(aof_copy(redis_server))  # the moves from here on are lost
            elif len(acked) == 10:
                playing.clear()

    async with (
        moose.connect(proc.url, name="alice") as alice,
        moose.connect(proc.url, name="bob") as bob,
    ):
        seats = [Seat(alice.player, "alice", None), Seat(bob.player, "bob", None)]
        async with open_store(redis_server.url) as store:
            await Games(store, Settings(redis_url=redis_server.url)).create(
                seats, game_id="g_lost", seed=5
            )
        players = [asyncio.create_task(play(c, n)) for n, c in enumerate((alice, bob))]
        async with asyncio.timeout(30):
            while len(acked) < 10:
                await asyncio.sleep(0.01)
            redis_server.kill()  # Redis loses the last 6 moves it answered
            aof_restore(redis_server, copy[0])
            await asyncio.to_thread(redis_server.start)
            playing.set()
            await asyncio.gather(*players)
    async with open_store(redis_server.url) as store:
        events = {e.seq: e.event for e in await store.events("g_lost")}
        for player, seat, seq, move, move_id in acked:
            again = await store.redis.hget(
                store.keys_of("g_lost").moves, move_field(player, move_id)
            )
            assert again is not None, (seat, seq, move)  # before: lost, for all but one
            assert events[int(again)] == {"kind": "move", "seat": seat, "move": move, "auto": None}


async def alice_s_turn(alice: Client, bob: Any) -> Message:
    """Play bob's turns (first legal move) until an event asks alice for a move."""
    async for msg in alice.events():
        if msg["type"] != "event":
            continue
        if msg["legal"]:
            return msg
        if msg["view"]["to_act"] != msg["view"]["seat"] and not msg["view"]["over"]:
            bob_event = await bob.expect(type="event", seq=msg["seq"])
            if bob_event["legal"]:
                await bob.request(
                    "move", game=msg["game"], seq=msg["seq"], move=bob_event["legal"][0]
                )
    raise AssertionError("the events ended")


async def test_a_game_dealt_again_under_the_id_of_one_that_ended_is_played(
    moose_serve, redis_factory
) -> None:
    """Redis loses a game the clients saw end; its table is dealt again under the
    same id (as the matchmaker does after a lost deal): the clients play the new game."""
    redis_server = redis_factory(appendonly=True, extra=["--appendfsync", "always"])
    proc = moose_serve("--redis", redis_server.url, "--poll-interval", "0.05")
    async with (
        moose.connect(proc.url, name="alice") as alice,
        moose.connect(proc.url, name="bob") as bob,
    ):
        seats = [Seat(alice.player, "alice", None), Seat(bob.player, "bob", None)]
        copy = aof_copy(redis_server)  # before the game: Redis will come back to this
        async with open_store(redis_server.url) as store:
            games = Games(store, Settings(redis_url=redis_server.url))
            await games.create(seats, game_id="g_again", seed=1)
            async with asyncio.timeout(30):
                await asyncio.gather(play_seat(alice), play_seat(bob))  # to its end
        for client in (alice, bob):  # a new socket: it follows no finished game
            client._abort()
        async with asyncio.timeout(30):
            while alice.reconnects < 1 or bob.reconnects < 1 or alice.active_games:
                await asyncio.sleep(0.05)
        redis_server.kill()  # Redis loses the whole game
        aof_restore(redis_server, copy)
        await asyncio.to_thread(redis_server.start)
        async with open_store(redis_server.url) as store:
            games = Games(store, Settings(redis_url=redis_server.url))
            async with asyncio.timeout(30):
                while not (await store.redis.client.pubsub_numsub(PLAYERS_CHANNEL))[0][1]:
                    await asyncio.sleep(0.05)
            await games.create(seats, game_id="g_again", seed=2)  # dealt again
            async with asyncio.timeout(30):  # before: the clients dropped its events
                results = await asyncio.gather(play_seat(alice), play_seat(bob))
            game = await games.load("g_again")
    assert game.state.over
    for played, _, events in results:
        assert (played, events[0]["seq"], events[-1]["seq"]) == ("g_again", 1, game.version)
