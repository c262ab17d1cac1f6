"""A WebSocket speaking PROTOCOL.md's JSON text frames, with nothing of the project's.

The raw-protocol tests use it to talk to a real `moose serve` as a client written
from the document alone would: `json` and aiohttp's client, no `moose` code.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import aiohttp

Message = dict[str, Any]


class Wire:
    """One socket: requests answered by `id`; what else it hears is kept, in order."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.unread: list[Message] = []  # heard and not yet taken
        self.heard: list[Message] = []  # everything heard
        self.player = ""  # set by whoever says hello

    async def _next(self) -> Message:
        raw = await self.ws.receive()
        assert raw.type == aiohttp.WSMsgType.TEXT, raw
        msg: Message = json.loads(raw.data)
        self.heard.append(msg)
        return msg

    async def ask(self, mtype: str, **fields: Any) -> Message:
        """Send a request; its answer (or error)."""
        msg_id = next(self.ids)
        await self.ws.send_str(json.dumps({"type": mtype, "id": msg_id, **fields}))
        return await self.expect(id=msg_id)

    async def hello(self, **fields: Any) -> Message:
        """Say hello (protocol 1) with `fields`; the answer."""
        return await self.ask("hello", protocol=1, **fields)

    async def expect(self, timeout: float = 15, **match: Any) -> Message:
        """The first message heard whose fields equal `match` (others stay unread)."""
        async with asyncio.timeout(timeout):
            while True:
                for i, msg in enumerate(self.unread):
                    if all(msg.get(k) == v for k, v in match.items()):
                        return self.unread.pop(i)
                self.unread.append(await self._next())

    async def drain(self, seconds: float) -> list[Message]:
        """Everything heard within `seconds`, unread messages first."""
        try:
            async with asyncio.timeout(seconds):
                while True:
                    self.unread.append(await self._next())
        except TimeoutError:
            pass
        heard, self.unread = self.unread, []
        return heard
