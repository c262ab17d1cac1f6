"""Rematches and challenges in `moose play` (PROTOCOL.md, "Playing together").

Typed lines: `rematch` offers (or accepts) another game of the table that just
ended and `no` declines it; `accept` and `decline [later|not_rated|table_size]`
answer the last challenge shown. `--challenge NAME` sends one at the start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from moose._together import REASONS

if TYPE_CHECKING:
    from moose.client import Client

__all__ = ["PlayTogether"]

Message = dict[str, Any]
HELP = (
    "`rematch` offers or accepts another game of the same table (`rematch bots`: bots "
    "take the seats of players gone), `no` declines it; "
    "`accept` or `decline [reason]` answers a challenge"
)


class PlayTogether:
    """The rematch and challenge side of one `moose play` (`Play`): its `client`,
    and `say` for the lines it shows."""

    def __init__(self, client: Client, say: Callable[[str], None]) -> None:
        self.client = client
        self.say = say
        self.offer: Message | None = None  # the last challenge sent to us, still open
        self.ended: str | None = None  # the game that just ended: a rematch's

    async def challenge(self, name: str, players: int, rated: bool) -> None:
        """Send the challenge of --challenge NAME, to a table of `players` seats."""
        sent = await self.client.challenge(name, players, rated=rated)
        kind = "rated" if sent["rated"] else "unrated"
        self.say(
            f"challenge sent to {sent['to']} ({players} seats, {kind}); "
            f"waiting up to a minute for the answer"
        )

    async def incoming(self) -> int:
        """Show challenges sent to us and the answers to ours, as they come; never ends."""
        client = self.client
        async for msg in client.challenges(incoming=False):
            if msg.get("to_player") == client.player and msg["status"] == "open":
                self.offer = msg
                rated = "rated" if msg["rated"] else "unrated"
                self.say(
                    f"{msg['from']} challenges you to a table of {msg['players']} "
                    f"({rated}): type `accept` or `decline [reason]` "
                    f"(reasons: {', '.join(REASONS)})"
                )
            else:
                self.say(_answer_line(msg, client.player))
        return 1

    def heard(self, msg: Message) -> None:
        """A rematch message from the server."""
        if msg["type"] == "rematch_started":
            self.say(f"the table plays again: game {msg['next']} (watch it)")
            return
        status, by = msg["status"], msg.get("from")
        if status == "open":
            waiting = ", ".join(msg.get("waiting") or ()) or "nobody"
            self.say(
                f"{by} offers a rematch: type `rematch` to accept, `no` to decline "
                f"(waiting for {waiting})"
            )
        elif status == "declined":
            self.say(f"{msg.get('by')} declined the rematch")
        elif status == "expired":
            self.say("the rematch offer expired")

    def game_over(self, game: str | None) -> None:
        """Our `game` ended and we stay: a rematch is of it."""
        self.ended = game
        self.say(f"game over: {HELP}, `quit` leaves")

    async def rematch(self, bots: bool) -> None:
        """Offer (or accept) a rematch; `bots`: a seat whose player left plays as a bot."""
        from moose.client import ServerError

        assert self.ended is not None
        try:
            answer = await self.client.rematch(self.ended, bots=bots)
        except ServerError as exc:
            # The server refuses an offer that would leave fewer than two seats.
            if exc.code != "bad_message" or bots:
                raise
            self.say(
                "no rematch: the other players have left the table; `rematch bots` "
                "plays again with bots in their seats, `quit` leaves"
            )
            return
        self.say(
            f"rematch: {answer['status']}, waiting for "
            f"{', '.join(answer.get('waiting') or ()) or 'nobody'}"
        )

    async def command(self, text: str) -> bool:
        """Act on a typed line of ours; False when it is not one."""
        client, word, _, rest = self.client, *text.partition(" ")
        if word == "rematch" and self.ended is not None:
            await self.rematch(bots=rest.strip() == "bots")
        elif word == "no" and self.ended is not None:
            await client.rematch_decline(self.ended)
            self.say("you declined the rematch")
        elif word == "accept" and self.offer is not None:
            offer, self.offer = self.offer, None
            await client.challenge_accept(offer["challenge"])
            self.say(f"you accepted {offer['from']}'s challenge")
        elif word == "decline" and self.offer is not None:
            offer, self.offer = self.offer, None
            await client.challenge_decline(offer["challenge"], rest.strip() or "generic")
            self.say(f"you declined {offer['from']}'s challenge")
        else:
            return False
        return True


def _answer_line(msg: Message, me: str | None) -> str:
    """What a challenge's news says to us."""
    other = msg["to"] if msg.get("from_player") == me else msg["from"]
    status = msg["status"]
    if status == "started":
        where = f"game {msg['game']}" if msg.get("game") else f"table {msg.get('code')}"
        return f"the challenge with {other} was accepted: {where}"
    if status == "declined":
        return f"{other} declined the challenge ({msg.get('reason', 'generic')})"
    return f"the challenge with {other} was {status}"
