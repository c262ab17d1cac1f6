"""CPU a process spends each time it sleeps in epoll and is woken, on this machine.

    python bench/bench_wake.py                 # gaps 0 (never sleeps), 100 us .. 2 ms
    python bench/bench_wake.py --gaps 0 1000 --count 5000 --rounds 3

Why: one server instance below full speed spends more CPU a move than at full
speed, and an instance of a game spread over two carries half the load. A
process that waits for its next event sleeps in `epoll_wait` and is woken when
it comes; at full speed it finds the next event ready and never sleeps. This
measures that cost alone, with no server in it: a child process sends one byte
every GAP microseconds (it spins between sends, so it never sleeps itself) to a
parent that waits in `select.epoll.poll` and reads it, as an asyncio loop does.
The parent's CPU (user + system, `getrusage`) a byte read is printed for each
gap; gap 0 is the baseline of the same run: the bytes come back to back, so the
parent rarely sleeps, and what a wake costs is the figure at a gap less that.
Rounds alternate the gaps; the median of the rounds is printed.
"""

from __future__ import annotations

import argparse
import os
import resource
import select
import socket
import statistics
import time


def one(gap_us: float, count: int) -> tuple[float, float]:
    """CPU us a byte read by a parent woken every `gap_us`, and its voluntary sleeps a byte."""
    parent, child = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the sender: spins between sends, so it never sleeps
        parent.close()
        gap = gap_us / 1e6
        for _ in range(count):
            until = time.monotonic() + gap
            while time.monotonic() < until:
                pass
            child.send(b"x")
        os._exit(0)
    child.close()
    poller = select.epoll()
    poller.register(parent.fileno(), select.EPOLLIN)
    before = resource.getrusage(resource.RUSAGE_SELF)
    got = 0
    while got < count:
        for _fd, _event in poller.poll(1.0):
            got += len(parent.recv(65536))
    after = resource.getrusage(resource.RUSAGE_SELF)
    os.waitpid(pid, 0)
    poller.close()
    parent.close()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu / count * 1e6, (after.ru_nvcsw - before.ru_nvcsw) / count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gaps", type=float, nargs="+", default=[0, 100, 500, 1000, 2000])
    ap.add_argument("--count", type=int, default=3000, help="bytes a run")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    runs: dict[float, list[tuple[float, float]]] = {g: [] for g in args.gaps}
    for _ in range(args.rounds):
        for gap in args.gaps:
            runs[gap].append(one(gap, args.count))
    base = statistics.median(cpu for cpu, _ in runs[args.gaps[0]])
    print(f"load {os.getloadavg()[0]:.1f}; {args.count} bytes a run, median of {args.rounds}")
    over = f"over gap {args.gaps[0]:.0f}"
    print(f"{'gap us':>8} {'CPU us a byte':>14} {'sleeps a byte':>14} {over:>12}")
    for gap in args.gaps:
        cpu = statistics.median(c for c, _ in runs[gap])
        sleeps = statistics.median(s for _, s in runs[gap])
        print(f"{gap:>8.0f} {cpu:>14.1f} {sleeps:>14.2f} {cpu - base:>+12.1f}")


if __name__ == "__main__":
    main()
