"""`moose play` (and the commands beside it) where a game ends or a player comes back."""

from __future__ import annotations

import argparse
import asyncio
import re

import pytest

import moose
from moose.commands import account

from helpers import ASK, Run, Serve, drive, play_seat, spawn


@pytest.mark.slow
async def test_an_abandoned_game_is_explained_at_its_end(serve: Serve) -> None:
    url = (await serve(turn_time=0.3, away_after=1)).url
    proc = await spawn("play", "--url", url, "--name", "alice", "--create", "2", "--bots", "greedy")
    run = await drive(proc, lambda line, run: None)  # alice never moves: away, then abandoned
    assert run.code == 0, run.text + run.err
    assert "game abandoned: every player was away" in run.text
    assert "Final: abandoned, nobody won" in run.text, run.text
    assert "You lost" not in run.text


@pytest.mark.slow
async def test_a_seat_taken_back_shows_the_ratings(url: str) -> None:
    bot = asyncio.create_task(moose.play_bot(url, "greedy", min_players=2, max_players=2))
    first = await spawn("play", "--url", url, "--name", "alice", "--players", "2")
    left = await drive(first, lambda line, run: "quit\nquit" if ASK in line else None)
    assert "you left" in left.text, left.text + left.err
    again = await drive(await spawn("play", "--url", url, "--name", "alice"))
    await bot
    assert again.code == 0, again.text + again.err
    assert "taking your seat back in game" in again.text
    seats = re.search(r"seats: .*", again.text)
    assert seats and re.search(r"\d alice 540\?", seats[0]), again.text
    assert "[bot] 540?" in seats[0]


@pytest.mark.slow
async def test_rematch_after_the_others_left_says_so(url: str) -> None:
    proc = await spawn(
        "play", "--url", url, "--name", "alice", "--create", "2", "--start-when-full", "--stay"
    )
    guests: list[asyncio.Task[None]] = []
    over = asyncio.Event()  # alice's game is over and she stays

    async def guest(code: str) -> None:
        async with moose.connect(url, name="bob") as bob:
            await bob.join_table(code)
            await play_seat(bob)
        # bob's socket is closed: he has left the table

    def answer(line: str, run: Run) -> str | None:
        found = re.search(r"table (\w+) created", line)
        if found:
            guests.append(asyncio.create_task(guest(found[1])))
        if line.startswith("game over: `rematch`"):
            over.set()
            return None
        if "no rematch" in line or "refused" in line:
            return "quit"
        return "1" if ASK in line else None

    async def rematch_once_bob_left() -> None:
        await asyncio.gather(*guests)
        await over.wait()
        assert proc.stdin is not None
        proc.stdin.write(b"rematch\n")
        await proc.stdin.drain()

    driving = asyncio.create_task(drive(proc, answer))
    while not guests:
        await asyncio.sleep(0.05)
    await rematch_once_bob_left()
    run = await driving
    assert "no rematch: the other players have left the table" in run.text, run.text
    assert "bad_message" not in run.text


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [["report", "bob", "--reason", "rude"], ["following", "--follow", "bob"]]
)
async def test_a_guest_named_alone_is_not_found_and_the_command_says_what_works(
    url: str, command: list[str]
) -> None:
    async with moose.connect(url, name="bob"):  # a guest called bob is online
        run = await drive(await spawn(*command, "--name", "alice", "--url", url))
    assert run.code == 1
    assert "only an account's name or a player id (p_...) names a player" in run.err, run.err
    assert "Traceback" not in run.err


def test_a_new_password_is_asked_twice(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    typed = iter(["new password one", "new password two"])
    monkeypatch.setenv("MOOSE_PASSWORD", "the old password")
    monkeypatch.delenv("MOOSE_NEW_PASSWORD", raising=False)
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(typed))
    args = argparse.Namespace(action="password", name="gina", url="ws://127.0.0.1:9/ws")
    assert account.run(args) == 2  # refused before any connection is tried
    assert "the passwords differ" in capsys.readouterr().err
