"""A bench-only ws.py that sends through aiohttp's writer instead of the transport.

    python bench/ws_variant.py DEST [REV]   # client/ and server/ of REV (default: the
                                            # work tree) in DEST, with that ws.py

The server's `Connection.send_frame` frames each message itself (RFC 6455
header + payload) and `_flush` writes the frames of one loop turn to the
socket's transport in one `write`. The variant keeps everything else (frames
are still collected per loop turn, `send` still never waits, a client whose
transport holds more than `send_buffer` bytes is still dropped) but hands each
payload to aiohttp: `_flush` starts one task per socket and turn (or extends
the one still running, so order is kept) that awaits `ws.send_bytes` /
`ws.send_str` for each frame in turn. `variant(source)` is the text rewrite;
it fails loudly when ws.py no longer has the methods it replaces.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

REPLACEMENT = '''
    _sender: asyncio.Task[None] | None = None  # bench variant: the task sending, if any
    _backlog: list[bytes | str]

    def send_frame(self, payload: bytes | str) -> None:
        """Send an encoded message: bytes as a binary frame, str as a text frame."""
        if self._closing:
            return
        out: list[bytes | str] = self._out  # type: ignore[assignment]
        if not out:
            self._loop.call_soon(self._flush)
        out.append(payload)

    def _flush(self) -> None:
        """This turn's frames through aiohttp's writer (bench variant); drop a slow client."""
        out, self._out = self._out, []
        transport = self._transport
        if not out or transport is None or transport.is_closing():
            return
        if transport.get_write_buffer_size() > self._limit:
            log.info("dropping a slow client (%s)", self.player,
                     extra={"event": "slow_client", "player": self.player})  # fmt: skip
            self._closing = True
            self._tasks.append(asyncio.create_task(self.ws.close(code=CLOSE_SLOW)))
            return
        if self._sender is not None:  # still sending (it waited for a drain): in order
            self._backlog.extend(out)
            return
        self._backlog = list(out)
        self._sender = self._loop.create_task(self._send_all())

    async def _send_all(self) -> None:
        ws = self.ws
        try:
            while self._backlog:
                frames, self._backlog = self._backlog, []
                for payload in frames:
                    if isinstance(payload, str):
                        await ws.send_str(payload)
                    else:
                        await ws.send_bytes(payload)
        except (ConnectionError, RuntimeError):
            pass  # closed meanwhile, as the direct write's is_closing() check
        finally:
            self._sender = None
'''

# From `def send_frame` up to (not including) `def send_error`.
SPAN = re.compile(r"\n    def send_frame\(self.*?\n(?=    def send_error\()", re.S)


def variant(source: str) -> str:
    """ws.py's source with `send_frame` and `_flush` sending through aiohttp."""
    if len(SPAN.findall(source)) != 1 or "def _flush(self)" not in source:
        raise SystemExit("ws.py changed: send_frame.._flush not found where expected")
    return SPAN.sub(lambda _: REPLACEMENT + "\n", source)


def main() -> int:
    """Export REV (or the work tree) to DEST with the variant ws.py."""
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
    ws = dest / "server" / "moose_server" / "ws.py"
    ws.write_text(variant(ws.read_text()))
    print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
