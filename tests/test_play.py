"""`moose play` never leaves a person stuck: away seats, a closed terminal, a table left
before it starts, options that cannot work, URLs that are wrong, a quiet queue.

`moose play` runs as a real subprocess with piped stdin against a real server; the
other seats are library clients or server bots. Each test types what a new user
would and reads what the command says.
"""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis

import moose
from moose.bots import BOTS, make_bot
from moose.client import Client, ServerError, is_final
from moose_server.storage.embedded import free_port
from moose_server.storage.keys import mm_key

from helpers import ASK, FINAL, Run, Serve, drive, spawn

pytestmark = pytest.mark.slow  # each test runs `moose play`

Message = dict[str, Any]


async def slow_seat(client: Client, delay: float) -> None:
    """Play the next match's seat with a greedy bot, `delay` seconds before each move."""
    bot = make_bot("greedy", seed=1)
    game, seat = "", -1
    async for msg in client.events():
        if msg["type"] == "match" and not game:
            game, seat = msg["game"], msg["seat"]
        elif msg["type"] == "event" and msg["game"] == game:
            if is_final(msg):
                return
            if msg.get("legal") and msg["view"]["to_act"] == seat:
                await asyncio.sleep(delay)
                try:
                    await client.move(game, bot.choose(msg["view"], msg["legal"]), seq=msg["seq"])
                except ServerError as exc:
                    # The game moved on while we waited, or (a starved test machine:
                    # our turns timed out until the server played our seat) ended.
                    assert exc.code in ("stale_seq", "not_your_turn", "game_over"), exc
                    if exc.code == "game_over":
                        return


@pytest.fixture
async def opponent(serve: Serve) -> AsyncIterator[tuple[str, asyncio.Task[None]]]:
    """A server with 0.5 s turns and a queued opponent who takes 0.3 s a move."""
    url = (await serve(turn_time=0.5, answer_time=0.5)).url
    client = Client(url, name="slow")
    await client.open()
    await client.queue(2, 2)
    task = asyncio.create_task(slow_seat(client, 0.3))
    yield url, task
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await client.close()


async def test_any_line_typed_takes_an_away_seat_back(opponent) -> None:
    url, other = opponent
    proc = await spawn("play", "--url", url, "--name", "alice", "--players", "2")
    asked = 0

    def answer(line: str, run: Run) -> str | None:
        nonlocal asked
        if "you are away" in line:
            return ""  # Enter: before, handled locally, so the bot kept the seat
        if ASK in line:
            asked += 1
            return "1" if "you are back" in run.text else None  # the first turns time out
        return None

    run = await drive(proc, answer)
    await other
    assert run.code == 0, run.text + run.err
    text = run.text
    assert "you is away" not in text
    assert "you are away: the server plays for you" in text
    assert "press Enter, or type anything, to take your seat back" in text
    back = text.index("you are back")
    assert text.index("taking your seat back") < back
    # After it came back, alice made moves of her own (no `(timeout)` or `(bot)` mark).
    assert re.search(r"\] you (played|discarded|passed|sprang|let)[^(\n]*\n", text[back:])


async def test_closing_the_terminal_and_running_again_resumes_the_game(opponent) -> None:
    url, other = opponent
    first = await spawn("play", "--url", url, "--name", "alice", "--players", "2")
    assert first.stdout is not None
    async with asyncio.timeout(60):
        while ASK not in (await first.stdout.readline()).decode():
            pass
    first.kill()  # as a closed terminal would end it
    await first.wait()
    again = await spawn("play", "--url", url, "--name", "alice", "--players", "2")
    async with asyncio.timeout(60):  # before: queued as a new player, alone
        run = await drive(again)
    await other
    assert run.code == 0, run.text + run.err
    game = re.search(r"taking your seat back in game (g_\w+)", run.text)
    assert game, run.text
    assert f"game {game[1]}: you are seat" in run.text
    assert "waiting in the queue" not in run.text
    assert re.search(FINAL, run.text)


async def test_quit_during_a_game_asks_first(opponent) -> None:
    url, other = opponent
    proc = await spawn("play", "--url", url, "--name", "alice", "--players", "2")
    typed: list[str] = []

    def answer(line: str, run: Run) -> str | None:
        if ASK in line and not typed:
            typed.append("quit")
            return "quit"  # before: left at once
        if "type quit again to leave" in line and len(typed) == 1:
            typed.append("stay")
            return "stay"
        if ASK in line and len(typed) == 2:
            typed.append("quit")
            return "quit\nquit"
        return "1" if ASK in line else None

    run = await drive(proc, answer)
    assert run.code == 0, run.text + run.err
    assert run.text.count("the game is still on: if you leave") == 2
    assert "you left" in run.text and "Final: scores" not in run.text
    other.cancel()


@pytest.mark.parametrize("how", ["quit", "end of input", "ctrl-c"])
async def test_leaving_a_private_table_before_it_starts_frees_the_seat(url: str, how: str) -> None:
    async with moose.connect(url, name="host") as host:
        table = await host.create_table(3)
        proc = await spawn("play", "--url", url, "--name", "guest", "--code", table["code"])
        assert proc.stdout is not None and proc.stdin is not None
        async with asyncio.timeout(30):
            while "2/3 seats" not in (await proc.stdout.readline()).decode():
                pass
            if how == "quit":
                proc.stdin.write(b"quit\n")
            elif how == "end of input":
                proc.stdin.close()
            else:
                proc.send_signal(signal.SIGINT)
            await proc.wait()
            # Before: the guest's seat stayed taken, and was dealt in and timed out.
            async for msg in host.events():
                if msg["type"] == "table" and len([s for s in msg["seats"] if s]) == 1:
                    break
    assert proc.returncode == (130 if how == "ctrl-c" else 0)


async def test_bots_that_cannot_sit_are_refused_before_a_table_is_made(
    url: str, redis_url: str
) -> None:
    run = await drive(await spawn("play", "--url", url, "--create", "2", "--bots", "greedy,random"))
    assert run.code == 2
    assert "a table of 2 has 1 seat besides yours, and --bots names 2 bots" in run.err
    with redis.Redis.from_url(redis_url) as r:
        assert r.hlen(mm_key("tables")) == 0  # no table was made
    nowhere = f"ws://127.0.0.1:{free_port()}/ws"
    run = await drive(
        await spawn("play", "--url", nowhere, "--create", "3", "--bots", "greedy,foo")
    )
    assert run.code == 2, run.text  # before: "cannot reach", or a table then bad_code
    assert f"unknown bot 'foo': the bots are {', '.join(sorted(BOTS))}" in run.err


@pytest.mark.parametrize("shape", ["{base}", "{base}/", "http://127.0.0.1:{port}"])
async def test_a_url_without_the_ws_path_says_so(serve: Serve, shape: str) -> None:
    server = await serve()
    wrong = shape.format(base=server.url.removesuffix("/ws"), port=server.port)
    run = await drive(await spawn("play", "--url", wrong, "--name", "alice"))
    assert run.code == 1
    assert "is `moose serve` running?" not in run.text  # it is
    # `/` is the web page (200); any other path 404: either way, not a WebSocket
    assert re.search(rf"{re.escape(wrong)} answered HTTP \d+, not a WebSocket", run.text)
    assert f"the path is /ws, as in ws://127.0.0.1:{server.port}/ws" in run.text


async def test_the_queue_says_what_it_waits_for_and_how_long(serve: Serve) -> None:
    server = await serve(match_wait=1.5)
    proc = await spawn("play", "--url", server.url, "--name", "alone", "--players", "2-3")
    assert proc.stdout is not None
    lines: list[str] = []
    async with asyncio.timeout(60):
        while not any("still in the queue" in line for line in lines):
            lines.append((await proc.stdout.readline()).decode())
    proc.kill()
    await proc.wait()
    text = "".join(lines)
    assert "a table forms as soon as enough waiting players of close ratings fit one; " in text
    assert "after 1.5 s, " in text
    assert "you take the largest there is (2 or more)" in text
    assert re.search(r"still in the queue: \d+ s", text)
