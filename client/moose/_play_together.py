"""Rematches and challenges in `moose play` (PROTOCOL.md, "Playing together").

Typed lines: `rematch` offers (or accepts) another game of the table that just
ended and `no` declines it; `accept` and `decline [later|not_rated|table_size]`
answer the last challenge shown. `--challenge NAME` sends one at the start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moose._together import REASONS

if TYPE_CHECKING:
    from moose._play import Play

__all__ = ["PlayTogether"]

Message = dict[str, Any]
HELP = ("`rematch` offers or accepts another game of the same table, `no` declines it; "
        "`accept` or `decline [reason]` answers a challenge")  # fmt: skip


class PlayTogether:
    """The rematch and challenge side of one `Play`."""

    def __init__(self, play: Play) -> None:
        self.play = play
        self.offer: Message | None = None  # the last challenge sent to us, still open
        self.ended: str | None = None  # the game that just ended: a rematch's

    async def challenge(self) -> None:
        """Send the challenge of --challenge NAME, to a table of --players' largest size."""
        args = self.play.args
        players = args.players[1]
        sent = await self.play.client.challenge(args.challenge, players, rated=args.rated)
        rated = "rated" if sent["rated"] else "unrated"
        self.play.say(f"challenge sent to {sent['to']} ({players} seats, {rated}); "
                      f"waiting up to a minute for the answer")  # fmt: skip

    async def incoming(self) -> int:
        """Show challenges sent to us and the answers to ours, as they come; never ends."""
        client = self.play.client
        async for msg in client.challenges(incoming=False):
            if msg.get("to_player") == client.player and msg["status"] == "open":
                self.offer = msg
                rated = "rated" if msg["rated"] else "unrated"
                self.play.say(f"{msg['from']} challenges you to a table of {msg['players']} "
                              f"({rated}): type `accept` or `decline [reason]` "
                              f"(reasons: {', '.join(REASONS)})")  # fmt: skip
            else:
                self.play.say(_answer_line(msg, client.player))
        return 1

    def heard(self, msg: Message) -> None:
        """A rematch message from the server."""
        if msg["type"] == "rematch_started":
            self.play.say(f"the table plays again: game {msg['next']} (watch it)")
            return
        status, by = msg["status"], msg.get("from")
        if status == "open":
            waiting = ", ".join(msg.get("waiting") or ()) or "nobody"
            self.play.say(f"{by} offers a rematch: type `rematch` to accept, `no` to decline "
                          f"(waiting for {waiting})")  # fmt: skip
        elif status == "declined":
            self.play.say(f"{msg.get('by')} declined the rematch")
        elif status == "expired":
            self.play.say("the rematch offer expired")

    def game_over(self) -> None:
        """Our game ended and we stay: ready for the next one."""
        p = self.play
        self.ended, p.game, p.seat, p.last, p.over = p.game, None, None, None, False
        p.acted_on, p.away, p.started, p.over_ratings = -1, False, False, None
        p.say(f"game over: {HELP}, `quit` leaves")

    async def command(self, text: str) -> bool:
        """Act on a typed line of ours; False when it is not one."""
        client, word, _, rest = self.play.client, *text.partition(" ")
        if word == "rematch" and self.ended is not None:
            answer = await client.rematch(self.ended)
            self.play.say(f"rematch: {answer['status']}, waiting for "
                          f"{', '.join(answer.get('waiting') or ()) or 'nobody'}")  # fmt: skip
        elif word == "no" and self.ended is not None:
            await client.rematch_decline(self.ended)
            self.play.say("you declined the rematch")
        elif word == "accept" and self.offer is not None:
            offer, self.offer = self.offer, None
            await client.challenge_accept(offer["challenge"])
            self.play.say(f"you accepted {offer['from']}'s challenge")
        elif word == "decline" and self.offer is not None:
            offer, self.offer = self.offer, None
            await client.challenge_decline(offer["challenge"], rest.strip() or "generic")
            self.play.say(f"you declined {offer['from']}'s challenge")
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
