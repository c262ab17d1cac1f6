"""`moose arena` and `moose bots --arena` against a `moose serve` process."""

from __future__ import annotations

import asyncio
import contextlib
import sys

from moose.client import Client

from helpers import arena_servers, create_arena


async def moose(*args: str, stdin: bytes | None = None) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moose",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(stdin), 90)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


async def test_bots_join_an_arena_and_its_standings_are_watched(moose_serve, redis_url):
    [proc] = arena_servers(moose_serve, redis_url, 1)
    # Starting in 6 s: the commands below are members by then, however slow they start.
    await create_arena(redis_url, "a_cli", 0.15, start_in=6)  # 9 s
    code, listed = await moose("arena", "--url", proc.url)
    assert code == 0 and "a_cli" in listed and "upcoming" in listed, listed
    (bots, bots_out), (solo, solo_out), (watch, watched) = await asyncio.gather(
        moose("bots", "--url", proc.url, "--arena", "a_cli", "--count", "3", "--players", "2-3"),
        moose("arena", "join", "a_cli", "--bot", "greedy", "--name", "solo", "--url", proc.url),
        moose("arena", "watch", "a_cli", "--url", proc.url),
    )
    assert bots == 0 and "errors: 0" in bots_out, bots_out
    assert solo == 0 and "solo played" in solo_out, solo_out
    assert watch == 0 and "over" in watched and "won by" in watched, watched
    for name in ("greedy-1", "greedy-2", "greedy-3", "solo"):
        assert name in watched.split("won by")[0]


async def test_a_person_joins_an_arena_that_is_over_and_sees_its_standings(moose_serve, redis_url):
    [proc] = arena_servers(moose_serve, redis_url, 1)
    await create_arena(redis_url, "a_done", 0.01, who="people")
    await asyncio.sleep(1.5)
    code, out = await moose(
        "arena", "join", "a_done", "--name", "ann", "--plain", "--url", proc.url, stdin=b""
    )
    assert code == 0 and "a_done" in out and ("over" in out or "closing" in out), out
    code, out = await moose("bots", "--url", proc.url, "--arena", "a_done", "--games", "2")
    assert code == 2 and "no --games" in out


async def test_a_person_plays_an_arena_in_the_terminal_until_it_is_over(moose_serve, redis_url):
    [proc] = arena_servers(moose_serve, redis_url, 1)
    await create_arena(redis_url, "a_hand", 0.12, who="people", start_in=5)  # 7 s, from 5 s on
    person = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moose",
        "arena",
        "join",
        "a_hand",
        "--name",
        "ann",
        "--plain",
        "--players",
        "2-6",  # the arena seats 2-4: what it says
        "--url",
        proc.url,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert person.stdin is not None and person.stdout is not None
    async with Client(proc.url, name="bob") as bob:  # a person too, who plays as a bot would
        other = asyncio.create_task(bob.run_arena_bot("greedy", "a_hand"))
        async with asyncio.timeout(60):
            while person.returncode is None:
                person.stdin.write(b"1\n")  # the first move offered, whatever it is
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(person.wait(), 0.3)
            played = await other
    out = (await person.stdout.read()).decode()
    assert person.returncode == 0, out
    assert "waiting in arena a_hand for a table of 2-4 players" in out and played, out
    assert all(f"game {r.game}" in out for r in played), out
    assert "ann" in out.split("a_hand")[-1]  # the final standings
