"""What every `moose` command does with its output: a reader that goes away (`| head`)
ends the command quietly, and `moose arena list` lists."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

from moose.cli import PIPE_CLOSED
from moose.client import Client

from helpers import create_arena

pytestmark = pytest.mark.slow  # each test runs a `moose` command


async def moose_to_a_closed_pipe(
    *args: str, read_first: bool
) -> tuple[asyncio.subprocess.Process, str]:
    """Start `moose ARGS` with stdout a pipe whose reader stops after the first line (or at
    once, with `read_first` False); the process and the line read."""
    read, write = os.pipe()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moose",
        *args,
        stdout=write,
        stderr=asyncio.subprocess.PIPE,
    )
    os.close(write)
    with os.fdopen(read, "rb") as reader:  # closed here: the reader has gone
        first = await asyncio.to_thread(reader.readline) if read_first else b""
    return proc, first.decode()


async def finish(proc: asyncio.subprocess.Process) -> tuple[int, str]:
    """The exit status and stderr of a process."""
    assert proc.stderr is not None
    err = (await asyncio.wait_for(proc.stderr.read(), 120)).decode()
    return await proc.wait(), err


async def test_a_command_whose_reader_left_ends_without_a_traceback() -> None:
    proc, _ = await moose_to_a_closed_pipe(
        "simulate", "--games", "20", "--players", "2", "--bots", "random", read_first=False
    )
    code, err = await finish(proc)
    assert code != 0 and err == ""  # rich's console ends so itself, with status 1


async def test_arena_list_lists_and_arena_watch_into_head_ends_cleanly(
    url: str, redis_url: str
) -> None:
    await create_arena(redis_url, "a_pipe", 5, start_in=600)
    lister = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moose",
        "arena",
        "list",
        "--url",
        url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await lister.communicate()
    assert lister.returncode == 0, err.decode()
    assert "a_pipe" in out.decode() and "upcoming" in out.decode()

    proc, first = await moose_to_a_closed_pipe(
        "arena", "watch", "a_pipe", "--url", url, read_first=True
    )
    assert "a_pipe" in first  # the standings were printed; then the reader left
    async with Client(url, name="ann", bot=True) as ann:
        await ann.join_arena("a_pipe", 2, 2)  # the standings change: printed to nobody
        code, err = await finish(proc)
    assert code == PIPE_CLOSED and "Traceback" not in err and "BrokenPipe" not in err, err
