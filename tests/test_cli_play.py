"""`moose play` and `moose bots` as real subprocesses against a real server.

The player's stdin is a pipe: the test reads the output line by line and types
a move number whenever the command asks for one, as a person (or tmux) would.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import re
import struct
import sys
import termios

import aiohttp
import pytest

import moose
from moose.commands.bots import spread
from moose_server.storage.embedded import free_port
from moose_server.storage.keys import instance_key

from helpers import ASK, FINAL, Run, Serve, drive, make_due, open_store, play_seat, spawn, until

pytestmark = pytest.mark.slow  # `moose play` and `moose bots` as subprocesses


def assert_finished(run: Run) -> None:
    """The game ran to its end and the command exited cleanly."""
    assert run.code == 0, run.text + run.err
    assert "Traceback" not in run.err, run.err
    assert re.search(FINAL, run.text), run.text
    assert "draw pile" in run.text  # the board was drawn


async def test_play_a_game_from_the_queue_against_a_bot(url: str) -> None:
    proc = await spawn("play", "--url", url, "--name", "alice", "--players", "2")
    bot = asyncio.create_task(moose.play_bot(url, "greedy", min_players=2, max_players=2))
    asked: list[str] = []

    def answer(line: str, run: Run) -> str | None:
        if ASK not in line:
            return None
        asked.append(line)
        return "99\nhello\n1" if len(asked) == 1 else "1"

    run = await drive(proc, answer)
    (result,) = await bot
    assert_finished(run)
    assert "choose a move from 1 to" in run.text and "type a move number" in run.text
    assert f"game {result.game}: you are seat {1 - result.seat} of 2" in run.text
    assert "waiting in the queue for a table of 2-2 players" in run.text
    assert "you take the largest there is" not in run.text  # one size: no larger table
    assert "alice" in run.text and "(you)" in run.text
    # Each seat's rating (a newcomer's, provisional), the bot marked; the change at the end.
    bot_name = result.names[result.seat]
    seats = [f"{bot_name} [bot] 540?", "alice 540?"]
    seats = seats if result.seat == 0 else seats[::-1]
    assert f"seats: 0 {seats[0]}, 1 {seats[1]}  (`/mute SEAT`" in run.text  # numbered
    assert "rating" in run.text and re.search(r"Your rating: \d+\? \([+-]\d+\)\.", run.text)


async def test_play_creates_a_table_with_server_bots_and_starts_it(url: str) -> None:
    proc = await spawn(
        "play", "--url", url, "--name", "host", "--create", "3", "--bots", "greedy,random"
    )
    run = await drive(proc)
    assert_finished(run)
    code = re.search(r"table (\w+) created with 3 seats", run.text)
    assert code, run.text
    assert f"moose play --code {code[1]} --url {url}" in run.text  # not the default server
    assert f"table {code[1]}: 3/3 seats" in run.text
    assert "of 3" in run.text
    assert "seats: 0 host 540?, 1 greedy-bot 1 [bot] -, 2 random-bot 1 [bot] -" in run.text
    assert "Your rating" not in run.text  # a private table is unrated


async def test_play_joins_a_table_by_code_and_the_host_starts_it(url: str) -> None:
    async with moose.connect(url, name="host") as host:
        table = await host.create_table(2)
        proc = await spawn("play", "--url", url, "--name", "guest", "--code", table["code"])
        async for msg in host.events():
            if msg["type"] == "table" and all(msg["seats"]):
                break
        await host.start_table(table["code"])
        playing = asyncio.create_task(play_seat(host))
        run = await drive(proc)
        await playing
    assert_finished(run)
    assert f"table {table['code']}: 2/2 seats: 0 host, 1 guest" in run.text


async def test_host_types_start_before_the_table_is_full(url: str) -> None:
    proc = await spawn("play", "--url", url, "--name", "host", "--create", "4")

    async def guest(code: str) -> None:
        async with moose.connect(url, name="guest") as client:
            await client.join_table(code)
            await play_seat(client)

    joined: list[asyncio.Task[None]] = []

    def answer(line: str, run: Run) -> str | None:
        found = re.search(r"table (\w+) created", line)
        if found:
            joined.append(asyncio.create_task(guest(found[1])))
        if re.search(r"table \w+: 2/4 seats", line):
            return "start"
        return "1" if ASK in line else None

    run = await drive(proc, answer)
    await asyncio.gather(*joined)
    assert_finished(run)
    assert "type `start` to start" in run.text and "of 2" in run.text


async def test_play_against_moose_bots_in_another_process(url: str) -> None:
    player = await spawn("play", "--url", url, "--name", "alice", "--players", "2")
    bots = await spawn("bots", "--url", url, "--count", "1", "--games", "1", "--players", "2")
    run, bots_run = await asyncio.gather(drive(player), drive(bots))
    assert_finished(run)
    assert bots_run.code == 0, bots_run.text + bots_run.err
    assert "1 game finished" in bots_run.text and "errors: 0" in bots_run.text


async def test_moose_bots_play_until_enough_games_finished(url: str) -> None:
    args = ["--count", "3", "--games", "4", "--players", "2-3", "--bot", "random", "--seed", "7"]
    run = await drive(await spawn("bots", "--url", url, *args))
    assert run.code == 0, run.text + run.err
    finished = re.search(r"(\d+) games finished", run.text)
    assert finished and int(finished[1]) >= 4, run.text
    for name in ("random-1", "random-2", "random-3"):
        assert name in run.text
    assert "errors: 0" in run.text


async def test_moose_bots_without_games_stop_after_one_game_each(url: str) -> None:
    # Two bots at one table finish one game; before, the default target was
    # COUNT games, so they queued again and waited for a second game forever.
    args = ["--count", "2", "--players", "2", "--bot", "random", "--seed", "3"]
    run = await drive(await spawn("bots", "--url", url, *args))
    assert run.code == 0, run.text + run.err
    assert "1 game finished" in run.text, run.text
    assert re.search(r"random-1\s*│\s*1\s*│", run.text), run.text
    assert re.search(r"random-2\s*│\s*1\s*│", run.text), run.text
    assert "errors: 0" in run.text


async def test_commands_say_when_the_server_is_unreachable() -> None:
    url = f"ws://127.0.0.1:{free_port()}/ws"
    for args in (["play"], ["bots", "--count", "2"], ["watch", "g_0123456789"]):
        run = await drive(await spawn(*args, "--url", url))
        assert run.code == 1
        assert f"cannot reach {url}: is `moose serve` running?" in run.text + run.err
        assert "Traceback" not in run.err


async def test_play_on_a_terminal_draws_a_live_screen_and_reads_keys(url: str) -> None:
    """On a pseudo-terminal: a live screen, typed keys in cbreak mode, the end kept on screen."""
    main, other = pty.openpty()
    fcntl.ioctl(other, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moose",
        "play",
        "--url",
        url,
        "--name",
        "alice",
        "--players",
        "2",
        stdin=other,
        stdout=other,
        stderr=other,
        env={**os.environ, "TERM": "xterm"},
    )
    os.close(other)
    bot = asyncio.create_task(moose.play_bot(url, "greedy", min_players=2, max_players=2))
    screen = bytearray()
    ended, drawn = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()

    def readable() -> None:
        try:
            data = os.read(main, 65536)
        except OSError:  # the other end closed: the process is gone
            data = b""
        if not data:
            loop.remove_reader(main)
            ended.set()
        screen.extend(data)
        drawn.set()

    async def type_keys() -> None:
        # A player who presses 1 and Enter when the screen says it is their move,
        # at a person's pace: every key redraws the screen, and a flood of keys
        # once made the command fall ever further behind on a busy machine.
        typed_at = 0
        while True:
            await drawn.wait()
            drawn.clear()
            if b"Your move" in screen[max(0, typed_at - 16) :]:
                typed_at = len(screen)
                os.write(main, b"1\r")
                await asyncio.sleep(0.2)

    loop.add_reader(main, readable)
    typing = asyncio.create_task(type_keys())
    try:
        code = await proc.wait()
        await ended.wait()
    finally:
        typing.cancel()
        loop.remove_reader(main)
        os.close(main)
    await bot
    raw = screen.decode(errors="replace")
    assert "\x1b[?1049h" in raw  # the alternate screen
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    assert code == 0, text[-3000:]
    assert re.search(FINAL, text), text[-3000:]
    assert "Traceback" not in text


def test_ctrl_c_in_a_client_command_exits_with_130(monkeypatch: pytest.MonkeyPatch) -> None:
    from moose import cli
    from moose.commands import bots, play, watch

    async def interrupted(*args: object) -> int:
        raise KeyboardInterrupt

    for module, argv in ((play, ["play"]), (bots, ["bots"]), (watch, ["watch", "g_0"])):
        monkeypatch.setattr(module, "_main", interrupted)
        assert cli.main(argv) == 130


def test_bots_given_several_urls_start_spread_over_them() -> None:
    urls = "ws://a/ws, ws://b/ws,ws://c/ws"
    assert spread(urls, 0) == ["ws://a/ws", "ws://b/ws", "ws://c/ws"]
    assert spread(urls, 1) == ["ws://b/ws", "ws://c/ws", "ws://a/ws"]
    assert spread(urls, 3) == spread(urls, 0)
    assert spread("ws://one/ws", 5) == ["ws://one/ws"]


async def test_moose_bots_play_over_two_instances(serve: Serve) -> None:
    first, second = await serve(), await serve()
    args = ["--count", "2", "--games", "1", "--players", "2"]
    run = await drive(await spawn("bots", "--url", f"{first.url},{second.url}", *args))
    assert run.code == 0, run.text + run.err
    assert "1 game finished" in run.text and "errors: 0" in run.text


async def unavailable_sent(http: str) -> float:
    """How many `unavailable` errors the server has sent (its /metrics)."""
    async with aiohttp.ClientSession() as session, session.get(f"{http}/metrics") as resp:
        text = await resp.text()
    found = re.search(r'^moose_errors_total\{code="unavailable"\} (\S+)$', text, re.M)
    return float(found[1]) if found else 0.0


async def test_moose_bots_count_the_errors_of_a_redis_outage(moose_serve, redis_factory) -> None:
    redis_server = redis_factory(appendonly=True)
    proc = moose_serve("--redis", redis_server.url, "--match-wait", "0.2")
    args = ["--count", "4", "--games", "40", "--players", "2", "--bot", "random"]
    driving = asyncio.create_task(drive(await spawn("bots", "--url", proc.url, *args)))
    # The first games are played from the client's burst of requests and last
    # some 80 ms, less than a clean stop takes: the outage could begin with every
    # bot idle in the queue, where nothing is asked of the server. From the third
    # pair of games on, the client paces each bot at 15 requests a second, so a
    # game lasts over a second and the outage meets its next move.
    async with asyncio.timeout(60):
        while proc.log.read_text().count("dealt for") < 5:
            await asyncio.sleep(0.02)
    await asyncio.to_thread(redis_server.stop)  # clean: the AOF keeps every write
    # Redis comes back once the server has refused a bot's request for it: the
    # bots have an error to count, however slow the machine.
    await until(lambda: unavailable_sent(proc.http))
    await asyncio.to_thread(redis_server.start)
    run = await driving
    assert run.code == 0, run.text + run.err
    finished = re.search(r"(\d+) games finished", run.text)
    assert finished and int(finished[1]) >= 40, run.text  # games under way are played out
    # Before: "errors: 0", as if nothing had happened.
    assert re.search(r"errors: [1-9]\d* \(unavailable \d+: requests the server refused", run.text)


async def test_play_says_when_an_account_took_the_kept_guests_name(url: str) -> None:
    from moose import _saved

    async with moose.connect(url, name="carol") as guest:
        _saved.save(url, "carol", guest.token)
    async with moose.connect(url, name="carol") as other:
        await other.register("lantern moose quill 88")
    proc = await spawn("play", "--url", url, "--name", "carol", "--create", "2", "--bots", "greedy")
    run = await drive(proc)
    assert_finished(run)
    assert "an account took the name 'carol' meanwhile: you play as 'carol-2'" in run.text
    assert "seats: 0 carol-2 540?" in run.text


async def test_play_shows_table_chat_and_says_typed_lines(url: str) -> None:
    async with moose.connect(url, name="host") as host:
        table = await host.create_table(2)
        proc = await spawn("play", "--url", url, "--name", "guest", "--code", table["code"])
        async for msg in host.events():
            if msg["type"] == "table" and all(msg["seats"]):
                break
        await host.start_table(table["code"])
        async for msg in host.events():
            if msg["type"] == "match":
                game, seat = msg["game"], msg["seat"]
                break
        await host.say("[bold]hello[/bold] <b>guest</b>", game=game)
        playing = asyncio.create_task(play_seat(host, game=game, seat=seat))

        def answer(line: str, run: Run) -> str | None:
            if "[chat] host (seat 0):" in line:
                return "/say hi host"
            return "1" if ASK in line else None

        run = await drive(proc, answer)
        await playing
        said = await host.chat_history(game)
    assert_finished(run)
    assert "[chat] host (seat 0): [bold]hello[/bold] <b>guest</b>" in run.text  # text, no markup
    assert [(m["name"], m["text"]) for m in said][-1] == ("guest", "hi host")


async def test_play_mutes_a_seat_of_its_private_table_before_the_start(url: str) -> None:
    proc = await spawn("play", "--url", url, "--name", "host", "--create", "3")
    guest: list[asyncio.Task[None]] = []

    async def bob(code: str) -> None:
        async with moose.connect(url, name="bob") as client:
            await client.join_table(code)
            await client.say("first", code=code)
            await muted.wait()
            await client.say("hidden", code=code)
            said_hidden.set()
            await left.wait()

    muted, said_hidden, left = asyncio.Event(), asyncio.Event(), asyncio.Event()

    def answer(line: str, run: Run) -> str | None:
        found = re.search(r"table (\w+) created", line)
        if found:
            guest.append(asyncio.create_task(bob(found[1])))
        if "[chat] bob: first" in line:
            return "/mute 1"  # the seat number the table line shows
        if "bob muted" in line:
            muted.set()
        if "[chat] host: after" in line:
            left.set()
            return "quit"
        return None

    async def say_after_bob() -> None:
        await said_hidden.wait()
        assert proc.stdin is not None
        proc.stdin.write(b"/say after\n")
        await proc.stdin.drain()

    driving = asyncio.create_task(drive(proc, answer))
    while not guest:
        await asyncio.sleep(0.05)
    await say_after_bob()
    run = await driving
    await guest[0]
    assert "seats: 0 host, 1 bob" in run.text
    assert "[chat] host: after" in run.text and "hidden" not in run.text, run.text


async def test_play_and_watch_say_when_a_turn_goes_on_past_its_deadline(
    serve: Serve, redis_url: str
) -> None:
    # Heartbeats far apart: the one the test makes stale stays so (test_countdown.py).
    instance = await serve(turn_time=600, outage_grace=60, instance_ttl=600, instance_id="i_p")
    proc = await spawn(
        "play", "--url", instance.url, "--name", "host", "--create", "2", "--bots", "greedy"
    )
    assert proc.stdout is not None and proc.stdin is not None
    seen: list[str] = []
    while ASK not in (line := (await proc.stdout.readline()).decode()):
        assert line, "".join(seen)
        seen.append(line)
    game = re.search(r"game (\S+): you are seat", "".join(seen))
    code = re.search(r"table (\w+) created", "".join(seen))
    assert game and code, "".join(seen)
    watch = await spawn("watch", game[1], "--url", instance.url, "--code", code[1])
    assert watch.stdout is not None
    while "following the game from here" not in (line := (await watch.stdout.readline()).decode()):
        assert line, "the spectator saw no game"
    # Its instance looks dead (a stale heartbeat) and its time is up: the turn is spared.
    async with open_store(redis_url) as store:
        await store.redis.pexpire(instance_key("i_p"), 60_000)
    await make_due(redis_url, game[1])
    while "turn goes on" not in (line := (await proc.stdout.readline()).decode()):
        assert line, "".join(seen)
        seen.append(line)
    assert line.endswith("] your connection dropped: your turn goes on, 60s more\n"), line
    # A spectator (`moose watch`) is told too.
    while "turn goes on" not in (line := (await watch.stdout.readline()).decode()):
        assert line, "the spectator was not told"
    assert line.endswith("] host's connection dropped: their turn goes on, 60s more\n"), line
    proc.stdin.write(b"1\n")
    await proc.stdin.drain()
    run = await drive(proc)
    assert_finished(run)
    assert (await drive(watch)).code == 0
