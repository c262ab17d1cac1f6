"""`moose watch` as a real subprocess, following a game played by library clients."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import moose
from moose.client import Client

from helpers import drive, play_seat, spawn

pytestmark = pytest.mark.slow  # each test runs `moose watch`


async def first_match(client: Client) -> tuple[str, int]:
    """Wait for the client's next match: its game and seat."""
    async for msg in client.events():
        if msg["type"] == "match":
            return msg["game"], msg["seat"]
    raise AssertionError("no match")


async def watch_a_game(url: str, *args: str) -> tuple[list[str], int, list[dict[str, Any]]]:
    """Start a game, start `moose watch`, then play the game out; its lines and exit code."""
    async with moose.connect(url, name="alice") as alice:
        bot = asyncio.create_task(moose.play_bot(url, "greedy", min_players=2, max_players=2))
        await alice.queue(2, 2)
        game, seat = await first_match(alice)
        proc = await spawn("watch", game, "--url", url, *args)
        assert proc.stdout is not None
        first = (await proc.stdout.readline()).decode()  # watching before alice moves on
        _, _, events = await play_seat(alice, game=game, seat=seat)
        run = await drive(proc)
        await bot
    assert run.code == 0, run.text + run.err
    return [first, *run.out], seat, events


async def test_watch_json_prints_one_event_per_line_to_the_end(url: str) -> None:
    lines, _, played = await watch_a_game(url, "--json")
    msgs = [json.loads(line) for line in lines]
    assert all(m["type"] == "event" for m in msgs)
    assert msgs[0]["event"]["kind"] == "state"
    seqs = [m["seq"] for m in msgs]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # every event, once, in order
    assert seqs[-1] == played[-1]["seq"] and msgs[-1]["view"]["over"]
    for m in msgs:
        assert m["view"]["seat"] is None and "hand" not in m["view"] and not m.get("legal")
    # What the spectator saw is the public part of what the player saw.
    seen = {m["seq"]: m for m in played}
    for m in msgs[1:]:
        mine = dict(seen[m["seq"]]["view"])
        mine.pop("hand")
        assert m["view"] == {**mine, "seat": None}


async def test_watch_prints_readable_lines_and_the_final_board(url: str) -> None:
    lines, _, played = await watch_a_game(url)
    text = "".join(lines)
    assert text.startswith(f"[{lines[0][1:].split(']')[0]}] following the game from here")
    assert f"[{played[-1]['seq']}] game over: scores" in text, text
    assert " played " in text and "draw pile" in text
    assert text.count("[bot]") >= 2  # the greedy seat on the first board and the last


async def test_watch_an_unknown_game_says_so(url: str) -> None:
    run = await drive(await spawn("watch", "g_0000000000", "--url", url))
    assert run.code == 1
    assert "cannot watch g_0000000000: " in run.err and "no_such_game" in run.err
    assert "Traceback" not in run.err


async def test_watch_without_a_game_lists_the_live_games(url: str) -> None:
    async with moose.connect(url, name="alice") as alice, moose.connect(url, name="bob") as bob:
        await alice.queue(2, 2)
        await bob.queue(2, 2)
        game, _ = await first_match(alice)
        async with asyncio.timeout(10):  # listed once dealt: just after the match is sent
            while not (await alice.games())["games"]:
                await asyncio.sleep(0.2)
        run = await drive(await spawn("watch", "--url", url, "--json"))
        assert run.code == 0, run.err
        (line,) = run.out
        assert [g["game"] for g in json.loads(line)["games"]] == [game]
        run = await drive(await spawn("watch", "--url", url))
        assert run.code == 0, run.err
        assert game in run.text and "alice" in run.text and "players online" in run.text


async def test_watch_shows_the_spectators_chat_from_before_it_came(url: str) -> None:
    async with moose.connect(url, name="alice") as alice, moose.connect(url, name="eve") as eve:
        bot = asyncio.create_task(moose.play_bot(url, "greedy", min_players=2, max_players=2))
        await alice.queue(2, 2)
        game, seat = await first_match(alice)
        await eve.watch(game)
        await eve.say("<i>go alice</i>", game=game)
        proc = await spawn("watch", game, "--url", url)
        assert proc.stdout is not None
        first = (await proc.stdout.readline()).decode()
        await play_seat(alice, game=game, seat=seat)
        run = await drive(proc)
        await bot
    assert run.code == 0, run.text + run.err
    assert "[chat] eve: <i>go alice</i>" in first + run.text
