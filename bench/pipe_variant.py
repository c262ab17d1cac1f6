"""A bench-only pipe.py whose `Pipe` is redis-py's own pipeline, batched per loop turn.

    python bench/pipe_variant.py DEST [REV]   # client/ and server/ of REV (default: the
                                              # work tree) in DEST, with that pipe.py

What would the server cost if the hand-written RESP client gave way to redis-py
used as it is built for this? The variant keeps pipe.py's pub/sub subscriber
(`PipePubSub`) and everything that uses a `Pipe`, but rebinds `Pipe` to a class
with the same calls (`call`, `call_many`, `evalsha`, `aclose`, `supports`) that
queues the commands of one loop turn and sends them as one
`redis.asyncio` pipeline (``transaction=False``, ``raise_on_error=False``) on a
client of its own, one batch in flight at a time (what is queued meanwhile goes
in the next). Error replies reach their caller alone, as with the pipe; a failed
batch fails every caller in it (ConnectionError/TimeoutError: the store then
sends the call through its other redis-py client, as it does for the pipe).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

APPENDIX = '''

# -- bench variant: redis-py's pipeline in place of the hand-written client --------

import redis.asyncio as _aioredis  # noqa: E402

_HandWritten = Pipe


class _BatchedPipe:
    """Pipe's calls over redis-py: the commands of a loop turn in one pipeline."""

    supports = staticmethod(_HandWritten.supports)

    def __init__(
        self, url: str, *, timeout: float = REPLY_TIMEOUT, connect_timeout: float = CONNECT_TIMEOUT
    ) -> None:
        _check_url(url)
        self.url = url
        self.redis = _aioredis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=connect_timeout
        )
        self.pending: list[tuple[tuple[Any, ...], asyncio.Future[Any]]] = []
        self.task: asyncio.Task[None] | None = None
        self._shas: dict[str, bytes] = {}

    def _send(self, args: tuple[Any, ...]) -> asyncio.Future[Any]:
        future = asyncio.get_running_loop().create_future()
        self.pending.append((args, future))
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._run())
        return future

    async def _run(self) -> None:
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                pipe = self.redis.pipeline(transaction=False)
                for args, _ in batch:
                    pipe.execute_command(*args)
                try:
                    replies = await pipe.execute(raise_on_error=False)
                except Exception as exc:
                    replies = [exc] * len(batch)
                for (_, future), reply in zip(batch, replies, strict=True):
                    if future.done():
                        continue
                    if isinstance(reply, Exception):
                        future.set_exception(reply)
                    else:
                        future.set_result(reply)
        finally:
            self.task = None

    async def call(self, *args: Any) -> Any:
        return await self._send(args)

    async def call_many(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        return await asyncio.gather(*[self._send(args) for args in commands])

    async def evalsha(self, script: str, keys: list[Any], args: list[Any]) -> Any:
        sha = self._shas.get(script)
        if sha is None:
            sha = self._shas[script] = hashlib.sha1(script.encode()).hexdigest().encode()
        try:
            return await self.call(b"EVALSHA", sha, len(keys), *keys, *args)
        except NoScriptError:
            return await self.call(b"EVAL", script, len(keys), *keys, *args)

    async def aclose(self) -> None:
        await self.redis.aclose()


Pipe = _BatchedPipe  # type: ignore[misc,assignment]
'''


def main() -> int:
    """Export REV (or the work tree) to DEST with the variant pipe.py."""
    dest = Path(sys.argv[1])
    rev = sys.argv[2] if len(sys.argv) > 2 else None
    dest.mkdir(parents=True, exist_ok=False)
    if rev is None:
        for part in ("client", "server"):
            shutil.copytree(ROOT / part, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "client", "server"],
                                 check=True, capture_output=True).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    pipe = dest / "server" / "moose_server" / "pipe.py"
    source = pipe.read_text()
    if "class Pipe:" not in source or "def _check_url" not in source:
        raise SystemExit("pipe.py changed: class Pipe / _check_url not found")
    pipe.write_text(source + APPENDIX)
    print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
