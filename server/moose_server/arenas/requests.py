"""The arena messages of PROTOCOL.md, and the sockets watching arenas.

`arenas` lists them, `show_arena` shows one (standings, live games, results),
`join_arena` / `pause_arena` / `leave_arena` change a membership, and
`watch_arena` sends the `arena` message again whenever the arena changes: every
instance reads the version of the arenas its sockets watch every
`live_interval` and sends the new state on a change (any instance's change: the
version is in Redis).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from typing import Any, Protocol

from moose.messages import (
    Arenas,
    JoinArena,
    LeaveArena,
    PauseArena,
    Request,
    ShowArena,
    UnwatchArena,
    WatchArena,
)
from moose_server.accounts import PlayerStore, ratings
from moose_server.arenas.calls import ArenaMemberCall
from moose_server.arenas.store import Arena, ArenaError, ArenaStore
from moose_server.errors import Refusal
from moose_server.limits.limiter import Limiter, full
from moose_server.limits.quotas import Quotas
from moose_server.net.router import Router
from moose_server.settings import Settings
from moose_server.storage.failures import one_round
from moose_server.storage.store import Store

__all__ = ["ArenaRequests"]

log = logging.getLogger(__name__)

Message = dict[str, Any]
GAMES_SHOWN = 50  # an arena's last games in the `arena` message


class Member(Protocol):
    """What arena requests need of a socket (handlers.Session)."""

    player: str | None
    name: str
    address: str
    bot: bool

    def send(self, message: dict[str, Any]) -> None:
        """Send a message to the socket; never waits."""


def address_digest(address: str) -> str:
    """A short digest of a client address: pairing tells addresses apart without storing one."""
    return hashlib.sha256(address.encode()).hexdigest()[:16]


ArenaMessage = ShowArena | JoinArena | PauseArena | LeaveArena | WatchArena | UnwatchArena


def _arena_id(msg: ArenaMessage) -> str:
    if not msg.arena:
        raise Refusal("bad_message", "`arena` must be an arena id")
    return msg.arena


class ArenaRequests:
    """The arena handlers of one instance and its arena watchers."""

    def __init__(
        self,
        arenas: ArenaStore,
        store: Store,
        players: PlayerStore,
        quotas: Quotas,
        limiter: Limiter,
        settings: Settings,
    ) -> None:
        self.arenas = arenas
        self.store = store
        self.players = players
        self.quotas = quotas
        self.limiter = limiter  # new members per address (rate `arena`)
        self.settings = settings
        self.watchers: dict[str, dict[int, Member]] = {}  # arena -> id(socket) -> socket
        self.seen: dict[str, int] = {}  # arena -> the version last sent to its watchers

    def register(self, router: Router) -> None:
        """Handle the arena messages; a closed socket watches no arena."""
        router.add(self.table())
        router.on_dropped(self.closed)

    def table(self) -> dict[type[Request], Any]:
        """Message class -> handler."""
        return {
            Arenas: self.listed,
            ShowArena: self.show,
            JoinArena: self.join,
            PauseArena: self.pause,
            LeaveArena: self.leave,
            WatchArena: self.watch,
            UnwatchArena: self.unwatch,
        }

    async def won(self, player: str) -> list[str]:
        """The arenas a player won, the last first (for `profile`)."""
        return await self.arenas.won(player)

    async def listed(self, conn: Member, msg: Arenas) -> Message:
        """The arenas, running and upcoming first."""
        now = await self.store.now_ms()
        found = [a.summary(now) for a in await self.arenas.listed()]
        return {"type": "arena_list", "arenas": found, "server_time": now}

    async def show(self, conn: Member, msg: ShowArena) -> Message:
        """One arena: its standings, live games and results."""
        return await self.message(_arena_id(msg))

    async def message(self, arena_id: str) -> Message:
        """The `arena` message of an arena as it stands."""
        arena = await self.arenas.get(arena_id)
        now = await self.store.now_ms()
        members, playing = await self.arenas.standings(arena_id)
        standings = [m.as_dict(k + 1, playing.get(m.player)) for k, m in enumerate(members)]
        games = sorted(
            (await self.arenas.games(arena_id)).items(), key=lambda kv: -int(kv[1]["start"])
        )[:GAMES_SHOWN]
        shown = [
            {
                "game": g,
                "names": i["names"],
                "start": i["start"],
                "end": i.get("end"),
                "points": i.get("points"),
            }
            for g, i in games
        ]
        return {
            "type": "arena",
            "arena": arena.summary(now),
            "standings": standings,
            "games": shown,
            "server_time": now,
        }

    async def join(self, conn: Member, msg: JoinArena) -> Message:
        """Join an arena (or come back after a pause): seated as soon as a table fits."""
        arena = await self.arenas.get(_arena_id(msg))
        low, high = self._sizes(arena, msg)
        if arena.who != "all" and (arena.who == "bots") != conn.bot:
            who = "bots" if arena.who == "bots" else "people (not bots)"
            raise ArenaError("not_allowed", f"arena {arena.id} is for {who} only")
        player = conn.player
        assert player is not None
        await self.quotas.may_play(conn.address, player)
        [profile] = await self.players.profiles([player])
        skill = ratings.skill(float(profile.get("mu", ratings.MU)))
        member = json.dumps(
            {
                "name": conn.name,
                "min": low,
                "max": high,
                "bot": conn.bot,
                "r": max(0, skill),
                "ip": address_digest(conn.address),
            }
        )
        call = ArenaMemberCall(arena.id, player, "join", member)
        if await self.arenas.is_member(arena.id, player):  # coming back: free
            out = await self.arenas.member(call)
        else:  # guests are free to make: this bounds the standings one address fills
            async with self.limiter.attempt("arena", address=conn.address):
                out = await self.arenas.member(call)
        log.info(
            "arena %s: %s joins", arena.id, player, extra={"event": "arena_join", "player": player}
        )
        return {
            "type": "arena_member",
            "arena": arena.id,
            "min_players": low,
            "max_players": high,
            **out,
        }

    @staticmethod
    def _sizes(arena: Arena, msg: JoinArena) -> tuple[int, int]:
        low = arena.min_players if msg.min_players is None else msg.min_players
        high = arena.max_players if msg.max_players is None else msg.max_players
        low, high = max(low, arena.min_players), min(high, arena.max_players)
        if low > high:
            raise Refusal(
                "bad_message",
                f"arena {arena.id} seats tables of "
                f"{arena.min_players}-{arena.max_players}: none fits",
            )
        return low, high

    async def pause(self, conn: Member, msg: PauseArena) -> Message:
        """Stop being seated (the game under way goes on); `join_arena` again to resume."""
        return await self._change(conn, _arena_id(msg), "pause")

    async def leave(self, conn: Member, msg: LeaveArena) -> Message:
        """Leave an arena; the points stay in the standings."""
        return await self._change(conn, _arena_id(msg), "leave")

    async def _change(self, conn: Member, arena: str, action: str) -> Message:
        assert conn.player is not None
        out = await self.arenas.member(ArenaMemberCall(arena, conn.player, action))
        return {"type": "arena_member", "arena": arena, **out}

    async def watch(self, conn: Member, msg: WatchArena) -> Message:
        """The `arena` message now, and again whenever the arena changes."""
        arena = _arena_id(msg)
        answer = await self.message(arena)
        watched = sum(1 for w in self.watchers.values() if id(conn) in w)
        if id(conn) not in self.watchers.get(arena, {}):
            if watched >= self.settings.arenas_watched:
                raise full(
                    "arenas_watched",
                    f"a socket watches {self.settings.arenas_watched} arenas at most",
                )
            self.watchers.setdefault(arena, {})[id(conn)] = conn
        return answer

    async def unwatch(self, conn: Member, msg: UnwatchArena) -> Message:
        """Stop watching an arena."""
        arena = _arena_id(msg)
        self._drop(arena, conn)
        return {"type": "arena_unwatched", "arena": arena}

    def _drop(self, arena: str, conn: Member) -> None:
        watching = self.watchers.get(arena, {})
        watching.pop(id(conn), None)
        if not watching:
            self.watchers.pop(arena, None)
            self.seen.pop(arena, None)

    def closed(self, conn: Member) -> None:
        """The socket closed: it watches nothing more."""
        for arena in list(self.watchers):
            self._drop(arena, conn)

    async def run(self) -> None:
        """Send each watched arena's new state to its watchers when it changes."""
        while True:
            await one_round(self.tell, "arena watchers", log)
            await asyncio.sleep(self.settings.live_interval)

    async def tell(self) -> None:
        """One look at the watched arenas' versions; the changed ones are sent."""
        arenas = list(self.watchers)
        if not arenas:
            return
        for arena, version in zip(arenas, await self.arenas.version(arenas), strict=True):
            if self.seen.get(arena) == version or arena not in self.watchers:
                continue
            self.seen[arena] = version
            try:
                message = await self.message(arena)
            except ArenaError:
                continue
            for conn in list(self.watchers.get(arena, {}).values()):
                conn.send(message)
