"""`Spawned`: a `moose serve` subprocess of the load test's own, started as an operator
would, with its bundled Redis in a data folder of its own (or the Redis given),
stopped on exit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from moose_loadtest import deployment
from moose_loadtest.probes.setup import log_slow_scripts
from moose_loadtest.processes import free_port, stop_process, wait_ready

__all__ = ["Spawned"]


class Spawned:
    """A `moose serve` of our own (context manager); see `url`, `pid`, `redis_url`.

    Without a Redis URL the server starts its bundled Redis in our data folder,
    as `moose serve` does for anyone; we read its figures at the socket the
    server documents for it.
    """

    def __init__(self, redis_url: str | None = None, serve_args: list[str] | None = None) -> None:
        self.serve_args = serve_args or []
        self.folder = Path(tempfile.mkdtemp(prefix="moose-lt-"))
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = free_port()
        self.redis_url = redis_url or deployment.embedded_redis_url(self.folder)
        self.given_redis = bool(redis_url)

    @property
    def url(self) -> str:
        """The server's WebSocket URL."""
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def pid(self) -> int:
        """The server's process id."""
        assert self.proc is not None
        return self.proc.pid

    def __enter__(self) -> Spawned:
        try:
            # The Redis URL goes in the environment: a command line is anyone's to read (ps).
            env = {**os.environ, "MOOSE_REDIS_URL": self.redis_url} if self.given_redis else None
            cmd = [
                sys.executable,
                "-m",
                "moose",
                "serve",
                "--port",
                str(self.port),
                "--data-dir",
                str(self.folder),
                *self.serve_args,
            ]
            with (self.folder / "serve.log").open("ab") as log:
                self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
            wait_ready(f"http://127.0.0.1:{self.port}/readyz", self.proc)
            if not self.given_redis:
                log_slow_scripts(self.redis_url)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            stop_process(self.proc)  # it stops its bundled Redis before it exits
        shutil.rmtree(self.folder, ignore_errors=True)
