"""The message of provably fair deals: `seed`, a fair seat's seed for its game's deal."""

from __future__ import annotations

from moose.messages import Seed
from moose_server.deals.deals import Deals
from moose_server.net.router import Router
from moose_server.net.session import Message, Session, player_of

__all__ = ["register"]


def register(router: Router, deals: Deals) -> None:
    """Handle `seed` (PROTOCOL.md, "Provably fair deals")."""

    async def seed(conn: Session, msg: Seed) -> Message:
        return await deals.seed(msg.game, player_of(conn), msg.seed)

    router.add({Seed: seed})
