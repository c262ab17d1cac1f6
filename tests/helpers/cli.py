"""`moose` commands as real subprocesses, driven line by line as a person would."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

ASK = "Type a move number"
# The last line of a game played to its end; a tie on the lowest score says how doors
# decided it (the note may wrap on a live screen).
FINAL = r"Final: scores .*won( \(a tie[^)]*\))?\.\s+You (won!|lost\.)"


@dataclass
class Run:
    """What a finished `moose` subprocess printed."""

    code: int
    out: list[str] = field(default_factory=list)
    err: str = ""

    @property
    def text(self) -> str:
        """All of stdout."""
        return "".join(self.out)


async def spawn(*args: str) -> asyncio.subprocess.Process:
    """Start `python -m moose ARGS` with pipes for stdin, stdout and stderr."""
    env = {**os.environ, "COLUMNS": "120", "PYTHONUNBUFFERED": "1"}
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moose",
        *args,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def drive(
    proc: asyncio.subprocess.Process,
    answer: Callable[[str, Run], str | None] = lambda line, run: "1" if ASK in line else None,
) -> Run:
    """Read the output to the end, typing `answer(line)` (when not None) after each line."""
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    run = Run(code=-1)
    while line := (await proc.stdout.readline()).decode():
        run.out.append(line)
        typed = answer(line, run)
        if typed is not None:
            proc.stdin.write(typed.encode() + b"\n")
            await proc.stdin.drain()
    run.err = (await proc.stderr.read()).decode()
    run.code = await proc.wait()
    return run


async def admin(*args: str) -> Run:
    """Run `moose admin ARGS` to the end (through its module: the shared venv's `moose`
    entry points predate the command); what it printed."""
    env = {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moose_server.commands.admin",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    return Run(await proc.wait(), out.decode().splitlines(keepends=True), err.decode())
