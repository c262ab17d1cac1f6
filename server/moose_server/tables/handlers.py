"""The handlers of rematch and challenge messages (issue 25), beside handlers.py's.

Each checks the message, calls `Invites` and returns the answer without `id`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from moose_server.tables.invites import Invites

__all__ = ["invite_handlers"]

Message = dict[str, Any]
DEFAULT_PLAYERS = 2


class Who(Protocol):
    """What these handlers need of a session."""

    player: str | None
    name: str


Handler = Callable[[Any, Message], Awaitable[Message]]


def _me(conn: Who) -> str:
    assert conn.player is not None
    return conn.player


def invite_handlers(invites: Invites) -> dict[str, Handler]:
    """Message type -> handler, for the rematch and challenge messages of PROTOCOL.md."""

    async def rematch(conn: Who, msg: Message) -> Message:
        return await invites.offer_rematch(_me(conn), msg["game"], bool(msg.get("bots")))

    async def rematch_accept(conn: Who, msg: Message) -> Message:
        return await invites.answer_rematch(_me(conn), msg["game"], "accept")

    async def rematch_decline(conn: Who, msg: Message) -> Message:
        return await invites.answer_rematch(_me(conn), msg["game"], "decline")

    async def challenge(conn: Who, msg: Message) -> Message:
        players, rated = msg.get("players", DEFAULT_PLAYERS), bool(msg.get("rated"))
        return await invites.challenge(
            _me(conn), conn.name, msg["name"], players, rated, bool(msg.get("open"))
        )

    async def challenge_accept(conn: Who, msg: Message) -> Message:
        return await invites.answer_challenge(_me(conn), msg["challenge"], "accept")

    async def challenge_decline(conn: Who, msg: Message) -> Message:
        reason = msg.get("reason", "generic")
        return await invites.answer_challenge(_me(conn), msg["challenge"], "decline", reason)

    async def challenge_cancel(conn: Who, msg: Message) -> Message:
        return await invites.answer_challenge(_me(conn), msg["challenge"], "cancel")

    return {
        "rematch": rematch, "rematch_accept": rematch_accept,
        "rematch_decline": rematch_decline, "challenge": challenge,
        "challenge_accept": challenge_accept, "challenge_decline": challenge_decline,
        "challenge_cancel": challenge_cancel,
    }  # fmt: skip
