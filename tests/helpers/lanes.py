"""The fast lane: which tests are `slow`, and a guard that keeps the mark true.

A test is slow when it starts a process (`moose serve`, a `moose` command, a
redis-server of its own, the Redis Cluster, nginx, a browser) or runs longer
than a second; ``pytest -n 4 -m "not slow"`` runs the rest (README.md says how long).
A test that takes one of `PROCESS_FIXTURES` is marked here, so that the mark
cannot be forgotten; any other test that starts a process carries the mark
itself, and `LaneGuard` makes an unmarked one fail, in either lane, instead of
slowing the fast lane down unseen.
"""

from __future__ import annotations

import multiprocessing.process
import subprocess
from collections.abc import Callable, Generator, Iterable
from typing import Any

import pytest

SLOW = "slow"

# Every fixture that starts a process when the test uses it.
PROCESS_FIXTURES = frozenset(
    {
        "moose_serve",  # `moose serve` subprocesses
        "redis_factory",  # redis-servers of the test's own
        "private_redis",
        "redis_cluster",  # three servers joined by CLUSTER MEET
        "redis_cluster_nodes",
    }
)

# A parametrized fixture whose one value starts a process: `backend_url` runs a
# test on one redis-server (fast) and then on the Redis Cluster (slow).
PROCESS_PARAMS = {"backend_url": "cluster"}

SLOW_AFTER = 1.0  # seconds: a test that takes longer belongs to the slow lane

# The session's redis-server: started once, shared, and what the fast lane runs on.
SHARED_PROCESS_FIXTURES = frozenset({"redis_server"})


def starts_a_process(item: pytest.Item) -> bool:
    """Whether `item` uses a fixture (or fixture value) that starts a process."""
    names = set(getattr(item, "fixturenames", ()))
    if names & PROCESS_FIXTURES:
        return True
    params = getattr(getattr(item, "callspec", None), "params", {})
    return any(params.get(name) == value for name, value in PROCESS_PARAMS.items())


def mark_slow(items: Iterable[pytest.Item]) -> None:
    """Mark `slow` every item that starts a process through a fixture."""
    for item in items:
        if item.get_closest_marker(SLOW) is None and starts_a_process(item):
            item.add_marker(SLOW)


class ProcessInFastTest(RuntimeError):
    """A test not marked `slow` (or a fixture set up for it) tried to start a process."""


class LaneGuard:
    """A pytest plugin: marks tests `slow`, and refuses processes to the others.

    While a test not marked `slow` runs (its fixtures too, whatever their
    scope, but for `SHARED_PROCESS_FIXTURES`), starting a process raises
    `ProcessInFastTest`; one that runs over `SLOW_AFTER` seconds is named at the
    end of the run. Popen's `_execute_child` is under subprocess.run,
    asyncio's subprocesses, the embedded redis-server and Playwright (refused
    there, Popen closes its pipes as after any failed start); multiprocessing's
    Process is under ProcessPoolExecutor.
    """

    def __init__(self) -> None:
        self.test: pytest.Item | None = None
        self.shared = False
        self.originals: list[tuple[type, str, Callable[..., Any]]] = []
        self.times: dict[str, float] = {}  # setup + call + teardown of unmarked tests

    def check(self) -> None:
        """Raise `ProcessInFastTest` if the running test may not start a process."""
        test = self.test
        if test is not None and not self.shared and test.get_closest_marker(SLOW) is None:
            raise ProcessInFastTest(
                f"{test.nodeid} starts a process: mark it @pytest.mark.slow"
                " (see tests/helpers/lanes.py)"
            )

    def _guard(self, owner: type, name: str) -> None:
        original = getattr(owner, name)

        def guarded(*args: Any, **kwargs: Any) -> Any:
            self.check()
            return original(*args, **kwargs)

        self.originals.append((owner, name, original))
        setattr(owner, name, guarded)

    def pytest_configure(self) -> None:
        """Put the guard in front of every way of starting a process."""
        self._guard(subprocess.Popen, "_execute_child")
        self._guard(multiprocessing.process.BaseProcess, "start")

    def pytest_unconfigure(self) -> None:
        """Take the guard away again."""
        for owner, name, original in reversed(self.originals):
            setattr(owner, name, original)
        self.originals.clear()

    @pytest.hookimpl(tryfirst=True)  # before `-m` deselects by the marks
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Mark `slow` every test that starts a process through a fixture; a slow test
        gets one more try (pytest-rerunfailures), reported as a rerun: four workers on
        2 cores can starve a browser or a `moose serve` past a wait that is ample on
        a quiet machine. A fast test gets none."""
        mark_slow(items)
        for item in items:
            if item.get_closest_marker(SLOW) and item.get_closest_marker("flaky") is None:
                item.add_marker(pytest.mark.flaky(reruns=1))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        """Know which test runs, from its first fixture's setup to its last teardown."""
        self.test = item
        try:
            return (yield)
        finally:
            self.test = None

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(
        self, fixturedef: pytest.FixtureDef[Any]
    ) -> Generator[None, object, object]:
        """Let the shared fixtures start their process whichever test needs them first."""
        if fixturedef.argname not in SHARED_PROCESS_FIXTURES:
            return (yield)
        self.shared = True
        try:
            return (yield)
        finally:
            self.shared = False

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Add up the time of each test not marked `slow`."""
        if SLOW not in report.keywords:
            self.times[report.nodeid] = self.times.get(report.nodeid, 0.0) + report.duration

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """Name the tests not marked `slow` that ran over `SLOW_AFTER` seconds."""
        over = sorted(((t, n) for n, t in self.times.items() if t > SLOW_AFTER), reverse=True)
        if not over:
            return
        terminalreporter.section(f"not marked slow, yet over {SLOW_AFTER:g} s")
        for seconds, nodeid in over:
            terminalreporter.write_line(f"{seconds:5.2f}s {nodeid}")
        terminalreporter.write_line("as slow on an idle machine? mark it @pytest.mark.slow")
