"""Rematches and challenges (PROTOCOL.md, "Playing together"): the client's requests.

`Together` sits between the session and `moose.client.Client`; a rematch offer
arrives in `events()`, a challenge in `challenges()`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from moose._connection import CLOSED, Message
from moose._errors import MooseError
from moose._session import Session
from moose.messages import CHALLENGE_SETTINGS

__all__ = ["CHALLENGE_SETTINGS", "REASONS", "Together"]

REASONS = ("later", "not_rated", "table_size", "generic")  # why a challenge is declined
# Who may challenge a player: anyone, players with an account, those they follow, no one.


class Together(Session):
    """Offer and answer rematches; send, answer and hear challenges."""

    async def rematch(self, game: str, *, bots: bool = False) -> Message:
        """Offer the seats of a finished game another (`bots`: a seat gone plays as a bot)."""
        return await self._request("rematch", game=game, bots=bots)

    async def rematch_accept(self, game: str) -> Message:
        """Accept the rematch of a game; when all have, `match` follows."""
        return await self._request("rematch_accept", game=game)

    async def rematch_decline(self, game: str) -> Message:
        """Decline the rematch of a game: it does not start."""
        return await self._request("rematch_decline", game=game)

    async def challenge(
        self,
        name: str,
        players: int = 2,
        *,
        rated: bool = False,
        open_seats: bool = False,
        days: int | None = None,
    ) -> Message:
        """Challenge a player (account name or player id) to a table of `players`
        (`days`: a correspondence game, that many days a move)."""
        extra = {} if days is None else {"days": days}
        return await self._request(
            "challenge", name=name, players=players, rated=rated, open=open_seats, **extra
        )

    async def challenge_accept(self, challenge: str) -> Message:
        """Accept a challenge: `match` (or, with open seats, `table`) follows."""
        return await self._request("challenge_accept", challenge=challenge)

    async def challenge_decline(self, challenge: str, reason: str = "generic") -> Message:
        """Decline a challenge with a reason: later, not_rated, table_size or generic."""
        return await self._request("challenge_decline", challenge=challenge, reason=reason)

    async def challenge_cancel(self, challenge: str) -> Message:
        """Take back a challenge you sent."""
        return await self._request("challenge_cancel", challenge=challenge)

    async def challenge_setting(self, challenges: str | None = None) -> Message:
        """Who may challenge us (`challenges`: everyone, registered, following, nobody),
        changed first when given; the answer's `challenges` is the setting now."""
        fields = {} if challenges is None else {"challenges": challenges}
        return await self._request("challenge_setting", **fields)

    async def challenges(self, *, incoming: bool = True) -> AsyncIterator[Message]:
        """The `challenge_offer` messages as they come: with `incoming`, only the open
        challenges sent to us; else every one (our own challenges' answers too). Each
        reader hears every message."""
        queue: asyncio.Queue[Any] = asyncio.Queue()
        while self._challenges_unread:
            queue.put_nowait(self._challenges_unread.popleft())
        if self._closed_for_challenges:
            queue.put_nowait(CLOSED)
        self._challenge_readers.append(queue)
        try:
            while True:
                item = await queue.get()
                if item is CLOSED or isinstance(item, MooseError):
                    return
                mine = item.get("to_player") == self.player and item.get("status") == "open"
                if mine or not incoming:
                    yield item
        finally:
            self._challenge_readers.remove(queue)

    _closed_for_challenges = False

    async def close(self) -> None:
        """Close the socket; every `challenges()` ends."""
        await super().close()
        self._closed_for_challenges = True
        for reader in self._challenge_readers:
            reader.put_nowait(CLOSED)
