"""Terminal input that never blocks the event loop: stdin read in a daemon thread.

Works the same when stdin is a pipe (tests, scripts) and when it is a terminal.
On a terminal, `keys=True` switches it to cbreak mode so the typed text can be
drawn inside a live screen (`buffer`) instead of being echoed over it.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

_EOF_KEYS = {"\x04"}  # Ctrl-D: in cbreak mode the terminal no longer turns it into EOF
_BACKSPACE = {"\x7f", "\x08"}


class Line(NamedTuple):
    """A typed line and when its typing began (time.monotonic()): its first key on a
    terminal, its arrival when piped. A move number is bound to the turn on screen then."""

    text: str
    at: float


class InputReader:
    """Lines typed on stdin, as an asyncio queue; `None` marks the end of input."""

    def __init__(self, *, keys: bool = False, on_change: Callable[[], None] | None = None) -> None:
        self.keys = keys
        self.on_change = on_change
        self.buffer = ""
        self._began: float | None = None  # when the line in `buffer` began to be typed
        self._fd = sys.stdin.fileno()
        self._queue: asyncio.Queue[Line | None] = asyncio.Queue()
        # One line handed over and not yet taken, at most: a line is stamped when the
        # reader gets to it, so a flood of piped lines (`yes 1 | moose play`) is not
        # all stamped before the menu it is meant for (and cannot fill memory).
        self._room = threading.Semaphore(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._saved: Any = None

    def start(self) -> None:
        """Start reading (and enter cbreak mode on a terminal when `keys`)."""
        self._loop = asyncio.get_running_loop()
        if self.keys:
            import termios
            import tty

            self._saved = termios.tcgetattr(self._fd)
            tty.setcbreak(self._fd)
        # A daemon thread: a read blocked on stdin cannot be interrupted, and must
        # not keep the process alive. os.read avoids the sys.stdin buffer's lock,
        # which a daemon thread would otherwise hold at interpreter exit.
        threading.Thread(target=self._pump, name="moose-stdin", daemon=True).start()

    def close(self) -> None:
        """Give the terminal back its settings."""
        if self._saved is not None:
            import termios

            with contextlib.suppress(termios.error):
                termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)
            self._saved = None

    async def get(self) -> str | None:
        """The next line typed, or None at the end of input."""
        line = await self.get_line()
        return None if line is None else line.text

    async def get_line(self) -> Line | None:
        """The next line typed with when it began, or None at the end of input."""
        line = await self._queue.get()
        if line is None:
            self._queue.put_nowait(None)
        else:
            self._room.release()
        return line

    def _pump(self) -> None:
        # Ctrl-C and SIGTERM go to the main thread, whose event loop handles them: a
        # safeguard (asyncio.run sets no wake-up fd), not a cure seen to work.
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        # A multi-byte character may be split between reads: the decoder keeps the part.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while True:
            try:
                data = os.read(self._fd, 1 if self.keys else 4096)
            except OSError:
                data = b""
            if not data:
                self._emit(None)
                return
            for char in decoder.decode(data):
                if not self._key(char):
                    self._emit(None)
                    return

    def _key(self, char: str) -> bool:
        if char in _EOF_KEYS:
            return False
        if char in "\r\n":
            began = self._began if self._began is not None else time.monotonic()
            line, self.buffer, self._began = self.buffer, "", None
            self._emit(Line(line, began))
        elif char in _BACKSPACE:
            self.buffer = self.buffer[:-1]
            self._changed()
        elif char.isprintable():
            if self._began is None:
                self._began = time.monotonic()
            self.buffer += char
            self._changed()
        return True

    def _emit(self, line: Line | None) -> None:
        assert self._loop is not None
        if line is not None:
            self._room.acquire()  # in the reading thread: until the last line was taken
        with contextlib.suppress(RuntimeError):  # the loop closed while we waited
            self._loop.call_soon_threadsafe(self._queue.put_nowait, line)
        self._changed()

    def _changed(self) -> None:
        if self.keys and self.on_change is not None and self._loop is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self.on_change)
