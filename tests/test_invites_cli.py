"""`moose play` and the challenges: sent with --challenge, and answered by typed lines.

`moose play` runs as a real subprocess against a real server with a pipe for
stdin; a bot client that accepts challenges, or a challenger written with the
Python client, is on the other side.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moose.client import Client

from helpers import ASK, Run, drive, spawn

pytestmark = pytest.mark.slow  # `moose play` as a subprocess

PASSWORD = "lantern moose quill 88"
FAST = dict(turn_time=1.0, answer_time=1.0)


async def _account(url: str, name: str, bot: bool = False) -> Client:
    client = Client(url, name=name, bot=bot)
    await client.open()
    await client.register(PASSWORD)
    return client


def _finished(run: Run) -> None:
    assert run.code == 0, run.text + run.err
    assert "Traceback" not in run.err, run.err


async def test_play_challenges_a_bot_account_that_accepts_and_they_play(moose_server):
    url = await moose_server(**FAST)
    robo = await _account(url, "robo", bot=True)
    try:
        playing = asyncio.create_task(robo.run_bot("greedy", 1, accept_challenges=True))
        proc = await spawn(
            "play", "--url", url, "--name", "hana", "--challenge", "robo", "--players", "2"
        )
        run = await drive(proc)
        [result] = await playing
        _finished(run)
        assert "challenge sent to robo (2 seats, unrated)" in run.text, run.text
        assert f"the challenge with robo was accepted: game {result.game}" in run.text
        assert f"game {result.game}: you are seat" in run.text
    finally:
        await robo.close()


async def test_play_shows_a_challenge_declines_it_with_a_reason_then_accepts(
    moose_server, monkeypatch
):
    url = await moose_server(**FAST)
    gus = await _account(url, "gus")
    await gus.close()
    alice = await _account(url, "alice")
    monkeypatch.setenv("MOOSE_PASSWORD", PASSWORD)
    playing = asyncio.create_task(alice.run_bot("greedy", 1, accept_challenges=True))
    news: list[dict[str, Any]] = []
    tasks: list[asyncio.Task[Any]] = []

    async def challenge() -> None:
        await alice.challenge("gus", 2)
        async for msg in alice.challenges(incoming=False):
            news.append(msg)
            if msg["status"] == "declined":
                await alice.challenge("gus", 2)

    offers = 0

    def answer(line: str, run: Run) -> str | None:
        nonlocal offers
        if "waiting in the queue" in line and not tasks:
            tasks.append(asyncio.get_running_loop().create_task(challenge()))
        if "challenges you to a table of 2" in line:
            offers += 1
            return "decline not_rated" if offers == 1 else "accept"
        return "1" if ASK in line else None

    try:
        proc = await spawn("play", "--url", url, "--name", "gus", "--login", "--players", "2")
        run = await drive(proc, answer)
        [result] = await playing
        _finished(run)
        assert "you declined alice's challenge" in run.text and "you accepted" in run.text
        assert news[0]["status"] == "declined" and news[0]["reason"] == "not_rated"
        assert f"game {result.game}: you are seat" in run.text
    finally:
        for task in tasks:
            task.cancel()
        await alice.close()
