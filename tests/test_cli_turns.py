"""A typed move number answers the turn whose moves were on screen when it was typed."""

from __future__ import annotations

import asyncio
import re

import pytest

import moose
from moose._turns import LATE_GRACE, TurnMenus

from helpers import ASK, Run, Serve, drive, spawn


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
    url = (await serve(turn_time=1.0)).url
    proc = await spawn("play", "--url", url, "--name", "alice", "--players", "2")
    bot = asyncio.create_task(moose.play_bot(url, "greedy", min_players=2, max_players=2))
    state = {"typed_late": False, "told": False}

    def answer(line: str, run: Run) -> str | None:
        if not state["typed_late"]:
            if re.search(r"\] you .*\(timeout\)", line):  # the first menu was let run out
                state["typed_late"] = True
                return "1"
            return None
        if "too late" in line:
            state["told"] = True
        return "1" if ASK in line and state["told"] else None

    run = await drive(proc, answer)
    await bot
    assert run.code == 0, run.text + run.err
    assert re.search(r"Final: scores .*won\.", run.text), run.text
    after = run.text.split("(timeout)", 1)[1]
    told = after.index("too late: your time ran out and the server played that turn")
    # Nothing of ours was played between the timeout and "too late": the number
    # typed for the turn that ran out did not land on the next one.
    assert not re.search(r"\] you (played|discarded|passed|sprang|let)", after[:told]), run.text
