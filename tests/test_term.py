"""The terminal's line reader (moose/_term.py) over a real pipe: what a line's time
says, when lines pour in faster than `moose play` takes them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Iterator

import pytest

from moose._term import InputReader


@pytest.fixture
def piped_stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """stdin read from a fresh pipe; yields the end to write to."""
    read, write = os.pipe()
    monkeypatch.setattr(sys, "stdin", os.fdopen(read, "r"))
    yield write
    with contextlib.suppress(OSError):  # a test may have closed it
        os.close(write)


async def test_a_flood_of_piped_lines_is_stamped_as_each_is_taken(piped_stdin: int) -> None:
    # `yes 1 | moose play`: a hundred answers wait in the pipe before any menu shows.
    os.write(piped_stdin, b"1\n" * 100)
    reader = InputReader()
    reader.start()
    first = await reader.get_line()
    await asyncio.sleep(0.2)  # time for a reader that reads ahead to read everything
    menu_shown = time.monotonic()
    lines = [await reader.get_line() for _ in range(4)]
    assert first is not None and all(line is not None for line in lines)
    # Only the line waiting in the queue and the one the reading thread holds
    # predate the menu: the next ones were read from the pipe after it, so they
    # answer it rather than being refused as typed for an earlier turn.
    assert [line.at >= menu_shown for line in lines if line] == [False, False, True, True]


async def test_the_end_of_input_is_said_every_time_it_is_asked(piped_stdin: int) -> None:
    os.write(piped_stdin, b"2\n")
    reader = InputReader()
    reader.start()
    assert await reader.get() == "2"
    os.close(piped_stdin)
    assert await reader.get() is None
    assert await reader.get() is None
