"""The lobby side of `moose play`: queue, create or join a table, start it, leave it.

`PlayLobby` is mixed into `moose._play.Play`, which has the client, the options
and the log; a table left before its game starts frees the seat (`leave_table`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.live import Live

    from moose._play_together import PlayTogether
    from moose.client import Client

__all__ = ["PlayLobby", "url_option"]

Message = dict[str, Any]
QUEUE_NOTE_EVERY = 5.0  # seconds between "still in the queue" lines when piped


def url_option(url: str) -> str:
    """` --url URL` for a server other than the default one, else ""."""
    from moose.commands._common import BUILT_IN_URL

    return "" if url == BUILT_IN_URL else f" --url {url}"


class PlayLobby:
    """The lobby of one `moose play` (`Play`): it has the client, options and log."""

    client: Client
    args: argparse.Namespace
    live: Live | None
    code: str | None
    game: str | None
    started: bool
    queued: Message | None
    queued_at: float
    together: PlayTogether
    table_seats: list[Message | None]  # our private table's seats, as last heard

    def say(self, line: str) -> None:
        """Add a line to the log (Play's)."""
        raise NotImplementedError

    def refresh(self) -> None:
        """Redraw the live screen soon (Play's)."""
        raise NotImplementedError

    async def lobby(self) -> None:
        """Queue, create a table (and seat bots) or join one."""
        args = self.args
        if args.challenge:
            await self.together.challenge(args.challenge, args.players[1], args.rated)
        elif args.create is not None:
            table = await self.client.create_table(args.create, fair=args.fair)
            self.code = table["code"]
            self.say(
                f"table {self.code} created with {args.create} seats; others join with:"
                f"  moose play --code {self.code}{url_option(self.client.url)}"
            )
            await self.on_table(table)
            for bot in filter(None, (b.strip() for b in args.bots.split(","))):
                await self.on_table(await self.client.add_bot(self.code, bot))
            if not self.started:
                full = "it starts when every seat is taken, or " if self.auto_start() else ""
                self.say(f"{full}type `start` to start with the seats taken so far")
        elif args.code:
            self.code = args.code.strip().upper()
            await self.on_table(await self.client.join_table(self.code, fair=args.fair))
        elif getattr(args, "arena", None):  # `moose arena join`
            joined = await self.client.join_arena(args.arena, *args.players)
            # The sizes the arena seats you at: yours, narrowed to the arena's.
            low, high = joined["min_players"], joined["max_players"]
            self.say(f"waiting in arena {args.arena} for a table of {low}-{high} players")
        else:
            low, high = args.players
            self.queued = await self.client.queue(low, high, fair=args.fair)
            self.queued_at = time.monotonic()
            self.say(
                f"waiting in the queue for a table of {low}-{high} players: {self._queue_rule()}"
            )

    def _queue_rule(self) -> str:
        """What the queue waits for, as the server's `queued` answer says."""
        q = self.queued or {}
        low = q.get("min_players")
        rule = "a table forms as soon as enough waiting players of close ratings fit one"
        wait = q.get("match_wait")
        if isinstance(wait, int | float) and q.get("max_players") != low:  # else one size
            rule += f"; after {wait:g} s, you take the largest there is ({low} or more)"
        bots = q.get("queue_bots_after")
        if isinstance(bots, int | float) and bots > 0:
            rule += f"; after {bots:g} s alone, bots fill a table of {low}"
        return rule

    async def note_queue(self) -> int:
        """When piped, say now and then that we are still in the queue; never ends."""
        while True:
            await asyncio.sleep(QUEUE_NOTE_EVERY if self.live is None else 1.0)
            if self.queued is None or self.game is not None:
                continue
            if self.live is not None:
                self.refresh()  # the banner counts the seconds
            else:
                self.say(f"still in the queue: {int(time.monotonic() - self.queued_at)} s")

    def auto_start(self) -> bool:
        """Whether the host starts the table by itself once every seat is taken."""
        return bool(self.args.start_when_full or self.args.bots)

    async def on_table(self, table: Message) -> None:
        """A table changed: show it, and start it when it is full and we may."""
        seats = table.get("seats") or []
        self.table_seats = seats
        taken = [s for s in seats if s]
        # Numbered as `/mute SEAT` and `/block SEAT` take them before the game starts.
        who = ", ".join(
            f"{k} {s.get('name') or s.get('bot') or '?'}" for k, s in enumerate(seats) if s
        )
        self.say(f"table {table.get('code')}: {len(taken)}/{len(seats)} seats: {who}")
        full = bool(seats) and len(taken) == len(seats)
        is_host = table.get("host") == self.client.player
        if is_host and full and self.auto_start() and not self.started:
            await self.start()

    async def start(self) -> None:
        """Start our private table (host only)."""
        if self.code is None or self.started:
            return
        self.started = True
        await self.client.start_table(self.code)

    async def leave_table(self) -> None:
        """Free our seat at a private table whose game has not started (no ghost seat)."""
        from moose.client import MooseError

        code, self.code = self.code, None
        if code is None or self.game is not None:
            return
        with contextlib.suppress(MooseError, TimeoutError):
            async with asyncio.timeout(5):
                await self.client.leave_table(code)
