"""The C heap under Python: how much of it glibc's malloc holds free, and handing that back.

Python frees a bytes or str object of more than 512 bytes with `free()`, and
glibc's malloc keeps what was freed for later: it returns memory to the OS only
from the top of its heap, and one object still alive above a freed region pins
all of it. A burst of clients that stop reading fills the heap with
the frames queued for them; once they are dropped those are freed, but the RSS
stayed where the burst left it (55 MiB, 361 at the peak, 361 after:
deploy/README.md, "Slow clients and memory"). `malloc_trim(0)` gives back every whole free page
wherever it lies (glibc >= 2.8), and `mallinfo2()` (glibc >= 2.33) says how
many bytes are free; both through ctypes, as no maintained package wraps them.
Elsewhere (musl, macOS) `Heap.open` finds no glibc and the instance never trims.
"""

from __future__ import annotations

import ctypes
import logging
import resource

__all__ = ["Heap"]

log = logging.getLogger(__name__)

_FIELDS = (
    "arena",
    "ordblks",
    "smblks",
    "hblks",
    "hblkhd",
    "usmblks",
    "fsmblks",
    "uordblks",
    "fordblks",
    "keepcost",
)


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _FIELDS]


class Heap:
    """glibc's malloc in this process: its free bytes, and a trim when enough are free."""

    def __init__(self, libc: ctypes.CDLL, threshold: int) -> None:
        self._libc = libc
        self.threshold = threshold  # free bytes that make a trim worth it

    @classmethod
    def open(cls, threshold: int) -> Heap | None:
        """The heap of this process, or None without glibc (>= 2.33) or with `threshold` 0."""
        if not threshold:
            return None
        try:
            libc = ctypes.CDLL(None)  # the process' own symbols: libc's, with no search
            libc.mallinfo2.restype = _Mallinfo2
            libc.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            return None  # not glibc, or one older than 2.33
        return cls(libc, threshold)

    def free(self) -> int:
        """Bytes malloc holds free (in its heaps, returned to the OS or not)."""
        return int(self._libc.mallinfo2().fordblks)

    def check(self) -> int:
        """Trim if `threshold` bytes or more are free; the bytes of RSS that went (0: none).

        The free count does not say which free pages are still resident (trimmed
        pages stay counted free, and reusing them makes them resident again), so
        every look with that much free trims: with nothing to hand back a trim
        takes ~2 ms, and the collector looks every few seconds.
        """
        if self.free() < self.threshold:
            return 0
        before = _rss()
        self._libc.malloc_trim(0)
        returned = max(0, before - _rss())
        level = logging.INFO if returned >= self.threshold else logging.DEBUG
        log.log(
            level,
            "returned %.0f MiB of freed memory to the OS",
            returned / 2**20,
            extra={"event": "malloc_trim"},
        )
        return returned


def _rss() -> int:
    """This process' resident set, in bytes."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()
    except OSError:
        return 0
