"""A TCP relay in front of a redis-server: TLS on its side, or a reply cut on request."""

from __future__ import annotations

import asyncio
import ssl


class Relay:
    """Forwards a loopback port of its own to a Redis port, byte for byte.

    With `tls`, clients talk TLS to the relay (``rediss://``) and it talks plain
    to Redis, which is built without TLS. `cut_next_reply()`: the next data
    Redis sends is dropped and that client's connection aborted, so that a
    command Redis ran never gets its reply (what a lost connection does).
    `freeze()`: the connections open now forward nothing more either way, and
    none closes (a half-open TCP connection, or a proxy that hangs); new ones
    work. `accepted` counts the connections made through it.
    """

    def __init__(self, target_port: int, tls: ssl.SSLContext | None = None) -> None:
        self.target_port = target_port
        self.tls = tls
        self.port = 0
        self.cut = False
        self.frozen: set[int] = set()  # the numbers of the frozen connections
        self.accepted = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Relay:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def freeze(self) -> None:
        """The connections open now forward nothing more, and stay open."""
        self.frozen.update(range(1, self.accepted + 1))

    def cut_next_reply(self) -> None:
        """Drop the next data Redis sends, and abort that client's connection."""
        self.cut = True

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.accepted += 1
        number = self.accepted
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.transport.abort()
            return
        try:
            await asyncio.gather(
                self._pump(reader, up_writer, None, number),
                self._pump(up_reader, writer, writer, number),
            )
        except OSError:
            pass
        finally:
            self._tasks.discard(task)
            writer.transport.abort()
            up_writer.transport.abort()

    async def _pump(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        client: asyncio.StreamWriter | None,
        number: int,
    ) -> None:
        while data := await source.read(65536):
            if client is not None and self.cut:
                self.cut = False
                client.transport.abort()
                return
            if number not in self.frozen:
                sink.write(data)
                await sink.drain()
        sink.transport.abort()
