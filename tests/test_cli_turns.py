"""A typed move number answers the turn whose moves were on screen when it was typed."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

import moose
from moose._turns import LATE_GRACE, TurnMenus

from helpers import ASK, FINAL, Run, Serve, drive, play_seat, spawn


def test_a_number_typed_before_the_menu_answers_no_turn() -> None:
    menus = TurnMenus()
    menus.shown(7, at=100.0)
    assert menus.answered_by(99.5) is None
    assert menus.answered_by(100.2) == 7


def test_an_away_event_keeps_the_menu_and_its_time() -> None:
    menus = TurnMenus()
    menus.shown(7, at=100.0)
    menus.carried(8)
    assert menus.answered_by(100.1) == 8


def test_the_first_number_after_a_timeout_is_late_for_a_moment_only() -> None:
    menus = TurnMenus()
    menus.shown(3, at=10.0)
    menus.ran_out()
    assert menus.answered_by(10.5) is None  # no menu since the timeout
    menus.ran_out()
    menus.shown(9, at=20.0)
    assert menus.answered_by(20.0 + LATE_GRACE / 2) is None  # meant for the turn that ran out
    assert menus.answered_by(20.0 + LATE_GRACE / 2) == 9  # told "too late": read as usual
    menus.ran_out()
    menus.shown(12, at=30.0)
    assert menus.answered_by(30.0 + LATE_GRACE * 2) == 12


@pytest.mark.slow
async def test_a_number_typed_after_the_turn_timed_out_is_too_late(serve: Serve) -> None:
    url = (await serve(turn_time=3.0)).url
    proc = await spawn("play", "--url", url, "--name", "alice", "--players", "2")
    typed = asyncio.Event()  # alice's late number is in the pipe

    async def after_the_late_number(msg: dict[str, Any]) -> None:
        # bob's next move (and so alice's next menu) comes once the late number
        # was typed: it was typed for the turn that ran out, before the next.
        event = msg["event"]
        if event["kind"] == "move" and event.get("auto") == "timeout" and not typed.is_set():
            await typed.wait()

    async def bob() -> None:
        async with moose.connect(url, name="bob") as client:
            await client.queue(2, 2)
            await play_seat(client, on_event=after_the_late_number)

    def answer(line: str, run: Run) -> str | None:
        if not typed.is_set():
            if re.search(r"\] you .*\(timeout\)", line):  # the first menu was let run out
                typed.set()
                return "1"
            return None
        return "1" if ASK in line and "too late" in run.text else None

    playing = asyncio.create_task(bob())
    run = await drive(proc, answer)
    await playing
    assert run.code == 0, run.text + run.err
    assert re.search(FINAL, run.text), run.text
    after = run.text.split("(timeout)", 1)[1]
    told = after.index("too late: your time ran out and the server played that turn")
    # Nothing of ours was played between the timeout and "too late": the number
    # typed for the turn that ran out did not land on the next one.
    assert not re.search(r"\] you (played|discarded|passed|sprang|let)", after[:told]), run.text
