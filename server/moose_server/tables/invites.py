"""Rematches and challenges: offers kept in Redis, each answer one atomic step.

An offer is one JSON value (keys.offer_key) made by lua/invite_offer.lua and
answered by lua/invite_answer.lua, whatever instance its seats are connected
to. The answer that completes the accepts deals the game (its id is fixed in
that same step), so two last accepts on two instances deal one game, and an
accept racing the expiry either deals it or finds the offer expired.

- A rematch (`r_<old game>`) is offered by a seat of a finished game; every
  human seat still connected must accept, within `rematch_wait`. The server's
  bots stay; a seat whose player is gone is dropped, or played by a bot when
  the offerer asks. The new game keeps the old one's seats, rating and code.
- A challenge (`c_<hex>`) asks one player, by account name or player id, to a
  table of `players` seats: the rest are bots, or open seats of a private table
  that the challenger hosts. It waits `challenge_ttl`. A challenger has at most
  `challenges_open` waiting and sends `challenges_per_hour`.
- A correspondence challenge (with `days`) waits `correspondence_challenge_ttl`
  (3 days), and may name an account that is not connected: they are sent a
  `challenge_received` notice (notify/, by their settings), and every such
  challenge still open is listed in their next `welcome` (`challenges`), as it
  is in a welcome of the player while connected. A real-time challenge to
  someone not connected is `player_offline`, as is any challenge to a guest who
  is not.

A game an offer deals counts against each human seat's cap of unfinished games:
an accept that would seat someone over it is refused (`too_many_games`) before
anything changes. Being seated by an offer withdraws the player's queue ticket.
An open challenge whose challenger sits at another private table is refused
(`already_seated`, naming the challenger, never their table's code).

A challenge to a player who blocks the challenger is made and answered as any
other, but never told to them (it expires unanswered), so a block cannot be told
from being ignored; their `following` shows them online as it would anyway.

Refusals: `player_offline` (not connected; for a correspondence challenge, a guest
not connected), `not_allowed` (the challenged player's
setting of who may challenge them, social/consent.py), `no_such_player`,
`too_many_challenges`, `rate_limited`,
`no_such_rematch`, `no_such_challenge`, `expired`, `offer_closed`, `not_over`,
`not_in_game`, `bad_message`, `too_many_games`, `already_seated`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from moose_server.deals import Deals
from moose_server.errors import Refusal
from moose_server.limits.limiter import Limited, Limiter, full
from moose_server.matchmaking import MAX_PLAYERS, MIN_PLAYERS, Matchmaker
from moose_server.play import Game, GameError, Games, Results, Seat, days_info, seat_info
from moose_server.settings import Settings
from moose_server.social import Consent, Presence
from moose_server.storage.codec import as_bytes
from moose_server.storage.failures import UNAVAILABLE
from moose_server.storage.gateway import Gateway
from moose_server.storage.keys import challenged_key, offer_key
from moose_server.storage.store import Store
from moose_server.tables.calls import InviteAnswerCall, InviteOfferCall
from moose_server.tasks import cancel_and_wait

__all__ = ["REASONS", "Blocked", "Invites", "watchers"]

log = logging.getLogger(__name__)

REASONS = ("later", "not_rated", "table_size", "generic")  # why a challenge is declined
GRACE_MS = 60_000  # an offer is kept this long after it closes: late answers learn why
MAX_KEPT = 50  # correspondence challenges listed at a hello
BOT = "greedy"  # the bot that fills a seat

# blocked(by, whom): whether `by` blocks `whom` (social/blocks.py).
Blocked = Callable[[str, str], Awaitable[bool]]
Finder = Callable[[str], Awaitable[tuple[str, str]]]
# room(player, days): raise `too_many_games` when the player may not start another game
# (`days`: a correspondence game's, whose cap is its own).
Room = Callable[[str, int | None], Awaitable[None]]
# is_account(player): whether the player has an account (may be challenged while away).
IsAccount = Callable[[str], Awaitable[bool]]
# challenged(player, challenge, text): send the player a `challenge_received` notice.
Challenged = Callable[[str, str, str], Awaitable[None]]


def watchers(game: str) -> str:
    """The address on the player channel of a game's spectators (the hub knows it)."""
    return f"watchers:{game}"


def _seat(data: dict[str, Any]) -> Seat:
    return Seat(data.get("player"), data["name"], data.get("bot"), bool(data.get("is_bot")))


def _humans(o: dict[str, Any]) -> list[str]:
    return [s["player"] for s in o["seats"] if s.get("player")]


def rematch_message(o: dict[str, Any]) -> dict[str, Any]:
    """The `rematch_offer` message of PROTOCOL.md for an offer."""
    names = {s["player"]: s["name"] for s in o["seats"] if s.get("player")}
    msg = {
        "type": "rematch_offer",
        "game": o["game"],
        "from": names.get(o["from"], ""),
        "status": o["status"],
        "expires": o["expires"],
        "rated": o["rated"],
        "seats": [s["name"] for s in o["seats"]],
        "bots": [bool(s.get("bot") or s.get("is_bot")) for s in o["seats"]],
        **days_info(o.get("days")),
        # In seat order: `need` went through a Lua table, which keeps no order.
        "waiting": [
            s["name"]
            for s in o["seats"]
            if s.get("player") in o["need"] and s["player"] not in o["accepted"]
        ],
    }
    if o["status"] == "started":
        msg["next"] = o["next"]
    if o["status"] == "declined":
        msg["by"] = names.get(o.get("by", ""), "")
    return msg


def challenge_message(o: dict[str, Any]) -> dict[str, Any]:
    """The `challenge_offer` message of PROTOCOL.md for an offer."""
    msg = {
        "type": "challenge_offer",
        "challenge": o["id"],
        "from": o["from_name"],
        "from_player": o["from"],
        "to": o["to_name"],
        "to_player": o["to"],
        "players": o["players"],
        "rated": o["rated"],
        "open": o["open"],
        "status": o["status"],
        "expires": o["expires"],
        **days_info(o.get("days")),
    }
    for extra in ("game", "code", "reason"):
        if o.get(extra):
            msg[extra] = o[extra]
    return msg


class Invites:
    """Rematch and challenge offers of the whole service, and the games they deal."""

    def __init__(
        self,
        redis: Gateway,
        store: Store,
        games: Games,
        deals: Deals,
        results: Results,
        matchmaker: Matchmaker,
        presence: Presence,
        settings: Settings,
        find: Finder,
        limiter: Limiter,
        blocked: Blocked,
        room: Room,
        consent: Consent,
        is_account: IsAccount,
        challenged: Challenged,
    ) -> None:
        self.store = store
        self.games = games
        self.deals = deals  # deals the games (and lists a public one among the live games)
        self.results = results
        self.matchmaker = matchmaker
        self.presence = presence
        self.settings = settings
        self.find = find  # (player id, name) of a name or id, or no_such_player
        self.limiter = limiter  # challenges sent per player (rates `challenge`)
        self.blocked = blocked  # (by, whom): whether `by` blocks `whom`
        self.redis = redis
        self.consent = consent  # who each player lets challenge them
        self.room = room  # refuses a player at their cap of unfinished games
        self.is_account = is_account  # who may be challenged to a correspondence game away
        self.challenged = challenged  # tells a player away of a challenge (notify)
        self._timers: set[asyncio.Task[None]] = set()

    async def close(self) -> None:
        """Stop the expiry timers of this instance (the offers expire on their own)."""
        await cancel_and_wait(list(self._timers))

    # -- the two scripts ------------------------------------------------------------

    async def _make(self, o: dict[str, Any], wait: float, most: int) -> dict[str, Any]:
        call = InviteOfferCall(
            o["id"], o["from"], json.dumps(o), round(wait * 1000), most, GRACE_MS
        )
        return dict(json.loads(as_bytes(await self.redis.run(call, *call.build()))))

    async def _run(
        self, offer: str, sender: str, action: str, player: str, reason: str = ""
    ) -> dict[str, Any]:
        call = InviteAnswerCall(offer, sender, action, player, reason, f"g_{secrets.token_hex(5)}")
        return dict(json.loads(as_bytes(await self.redis.run(call, *call.build()))))

    async def _tell(self, o: dict[str, Any], skip: str | None) -> None:
        """Every human seat of the offer but `skip` hears of it, on any instance."""
        make = rematch_message if o["kind"] == "rematch" else challenge_message
        # `quiet`: the seats that block the offerer, who never hear of it.
        told = [(p, make(o)) for p in _humans(o) if p != skip and p not in o.get("quiet", ())]
        if told:
            await self.store.publish_players(told)

    def _expire_later(self, o: dict[str, Any], now: int) -> None:
        async def expire() -> None:
            await asyncio.sleep(max(0, o["expires"] - now) / 1000 + 0.05)
            try:
                result = await self._run(o["id"], o["from"], "expire", "")
                if "ended" in result:
                    await self._tell(result["ended"], None)
            except Exception:  # the offer expires in Redis anyway: late answers see it
                log.exception("expiring offer %s failed", o["id"])

        task = asyncio.get_running_loop().create_task(expire())
        self._timers.add(task)
        task.add_done_callback(self._timers.discard)

    # -- rematch -------------------------------------------------------------------

    async def offer_rematch(self, player: str, game_id: str, fill: bool) -> dict[str, Any]:
        """Offer the seats of a finished game another; the offerer accepts it at once."""
        game = await self.games.load(game_id)
        seat = game.seat_of(player)
        if seat is None:
            raise GameError("not_in_game", f"you have no seat in game {game_id}")
        if not game.finished:
            raise GameError("not_over", "the game is still being played")
        if game.arena is not None:  # the arena pairs its members again itself
            raise Refusal("not_allowed", "an arena game has no rematch: the arena seats you again")
        seats = await self._rematch_seats(game, player, fill)
        if len(seats) < MIN_PLAYERS:
            raise Refusal("bad_message", "too few seats are still here for a rematch")
        humans = [s.player for s in seats if s.player is not None]
        quiet = await self._blocking(player, [p for p in humans if p != player])
        o = {
            "id": f"r_{game_id}",
            "kind": "rematch",
            "from": player,
            "game": game_id,
            "seats": [s.as_dict() | {"is_bot": s.is_bot} for s in seats],
            "need": dict.fromkeys(humans, True),
            "accepted": {},
            "rated": game.rated,
            "code": game.code,
            "quiet": quiet,
            "days": game.days,
        }
        await self._may_start(o, player)  # a seat at its cap could never accept
        made = await self._make(o, self.settings.rematch_wait, 0)
        if "offer" in made:
            self._expire_later(made["offer"], await self.store.now_ms())
            log.info(
                "rematch of %s offered by %s",
                game_id,
                player,
                extra={"event": "rematch", "game": game_id, "player": player},
            )
        return await self.answer_rematch(player, game_id, "accept")

    async def _rematch_seats(self, game: Game, player: str, fill: bool) -> list[Seat]:
        """The old seats: bots stay, players here stay, a player gone is dropped or a bot."""
        flags = seat_info(game)["bots"]
        seats = []
        for i, p in enumerate(game.players):
            if p is None:
                seats.append(Seat(None, game.names[i], game.bots[i]))
            elif p == player or await self.presence.online(p) is not None:
                seats.append(Seat(p, game.names[i], None, flags[i]))
            elif fill:
                seats.append(Seat(None, f"{BOT}-bot {i + 1}", BOT))
        return seats

    async def answer_rematch(self, player: str, game_id: str, action: str) -> dict[str, Any]:
        """Accept or decline the rematch of a game; the last accept deals the new game."""
        before = await self._load(f"r_{game_id}") if action == "accept" else {}
        await self._may_start(before, player)
        result = await self._run(f"r_{game_id}", "", action, player)
        if "err" in result:
            raise Refusal("no_such_rematch", f"no rematch of game {game_id} is offered to you")
        o = next(iter(result.values()))
        if "started" in result:
            await self._deal(o)
        if "closed" in result:
            if o["status"] == "expired":  # as a challenge answered late says
                raise Refusal("expired", f"the rematch of game {game_id} expired")
            # Started too: the answer that started it was the last one (PROTOCOL.md).
            closed = Refusal("offer_closed", f"the rematch of game {game_id} was {o['status']}")
            if o.get("next") and o["status"] == "started":
                closed.fields = {"next": o["next"]}  # where its seats went
            raise closed
        if "ended" in result and o["status"] == "expired":
            await self._tell(o, None)
            raise Refusal("expired", f"the rematch of game {game_id} expired")
        if player not in (before.get("accepted") or {}):  # a repeated accept tells nobody again
            await self._tell(o, player)
        return rematch_message(o)

    # -- challenge -----------------------------------------------------------------

    async def challenge(
        self,
        player: str,
        name: str,
        address: str,
        target: str,
        players: int,
        rated: bool,
        open_seats: bool,
        days: int | None = None,
    ) -> dict[str, Any]:
        """Challenge a player by name (or id) to a table of `players` (`days` per move:
        a correspondence game); they hear of it. Counted per player and per `address`."""
        if isinstance(players, bool) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise Refusal("bad_message", f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}")
        whom, whom_name = await self._find(target)
        if whom == player:
            raise Refusal("bad_message", "you cannot challenge yourself")
        online = await self.presence.online(whom) is not None
        if not online and (days is None or not await self.is_account(whom)):
            raise Refusal("player_offline", f"{whom_name} is not online")
        # Before the block: a block never shows as a refusal.
        await self.consent.check(whom, whom_name, player)
        # A blocked challenger's challenge is made as any other but never told to the
        # blocker (`quiet`): it waits, unanswered, and expires, as one ignored would.
        quiet = await self._blocking(player, [whom])
        o = {
            "id": f"c_{secrets.token_hex(6)}",
            "kind": "challenge",
            "from": player,
            "from_name": name,
            "to": whom,
            "to_name": whom_name,
            "players": players,
            "rated": rated,
            "open": open_seats and players > 2,
            "seats": [{"player": player, "name": name}, {"player": whom, "name": whom_name}],
            "need": {whom: True},
            "accepted": {},
            "quiet": quiet,
            "days": days,
        }
        limits = ("challenge", "challenge_address")
        s = self.settings
        wait = s.challenge_ttl if days is None else s.correspondence_challenge_ttl
        async with self.limiter.attempt(*limits, player=player, address=address):
            made = await self._make(o, wait, s.challenges_open)
            if "err" in made:
                most = self.settings.challenges_open
                raise full(
                    "challenges_open",
                    f"you have {most} challenges waiting already; wait for an answer",
                )
        o = made["offer"]
        self._expire_later(o, await self.store.now_ms())
        await self._tell(o, player)
        if days is not None and not quiet:
            await self._keep_for(whom, o, online)
        log.info(
            "challenge %s: %s challenges %s",
            o["id"],
            player,
            whom,
            extra={"event": "challenge", "player": player},
        )
        return challenge_message(o)

    async def _keep_for(self, whom: str, o: dict[str, Any], online: bool) -> None:
        """Keep a correspondence challenge for its player's next hello; one away is sent
        a notice (a connected one heard of it just now)."""
        key = challenged_key(whom)
        keep = round(self.settings.correspondence_challenge_ttl * 1000) + GRACE_MS
        try:  # the challenge is made: Redis failing now loses its listing, not the answer
            await self.redis.all(
                [
                    self.redis.zadd(key, {o["id"]: o["expires"]}),
                    self.redis.zremrangebyrank(key, 0, -MAX_KEPT - 1),  # the latest stay
                    self.redis.pexpire(key, keep),
                ]
            )
        except UNAVAILABLE as exc:
            log.warning("challenge %s not kept for %s: %s", o["id"], whom, exc)
        if not online:
            days = o["days"]
            text = f"{o['from_name']} challenges you to a game of {days} days a move."
            await self.challenged(whom, o["id"], text)

    async def waiting_for(self, player: str) -> list[dict[str, Any]]:
        """The `challenge_offer`s of the correspondence challenges still open for the
        player, oldest first."""
        ids = await self.redis.zrangebyscore(
            challenged_key(player), "-inf", "+inf", offset=0, count=MAX_KEPT
        )
        if not ids:  # most hellos: one read
            return []
        now = await self.store.now_ms()
        raws = await self.redis.all([self.redis.get(offer_key(i.decode())) for i in ids])
        offers = [json.loads(raw) for raw in raws if raw is not None]
        return [
            challenge_message(o)
            for o in offers
            if o.get("status") == "open" and o.get("to") == player and o["expires"] > now
        ]

    async def _find(self, target: str) -> tuple[str, str]:
        """(player id, name) of an account's name or a player's id; a guest, who has no
        profile, is found by id while connected (under the name they play with)."""
        # A guest's profile has no name: the one they play with now is theirs.
        live = await self.presence.online(target) if target.startswith("p_") else None
        try:
            whom, name = await self.find(target)
        except Refusal:
            if live is None:
                raise
            return target, live
        return whom, live or name

    async def answer_challenge(
        self, player: str, challenge: str, action: str, reason: str = ""
    ) -> dict[str, Any]:
        """Accept, decline (with a reason) or cancel a challenge; an accept deals it."""
        if action == "decline" and reason not in REASONS:
            raise Refusal("bad_message", f"reason must be one of {', '.join(REASONS)}")
        o = await self._load(challenge) if challenge[:2] == "c_" else {}
        if player not in (o.get("from"), o.get("to")):
            raise Refusal("no_such_challenge", f"no challenge {challenge[:16]!r} is yours")
        sender = str(o["from"])
        if action == "accept" and o.get("status") == "open":
            await self._may_start(o, player)
        result = await self._run(challenge, sender, action, player, reason)
        if "err" in result or "early" in result:
            raise Refusal("no_such_challenge", f"no challenge {challenge[:16]!r} is yours")
        o = next(iter(result.values()))
        if "closed" in result:
            code = "expired" if o["status"] == "expired" else "offer_closed"
            raise Refusal(code, f"that challenge was {o['status']}")
        if "started" in result:
            o = await self._deal(o)
        await self._tell(o, player)
        if o["status"] == "expired":
            raise Refusal("expired", "that challenge expired")
        return challenge_message(o)

    async def _blocking(self, player: str, others: list[str]) -> list[str]:
        """Those of `others` who block `player`: an offer of theirs is never told them."""
        return [p for p in others if await self.blocked(p, player)]

    async def _load(self, offer: str) -> dict[str, Any]:
        """The offer as stored, or {} when there is none."""
        raw = await self.redis.get(offer_key(offer))
        return dict(json.loads(raw)) if raw is not None else {}

    async def _may_start(self, o: dict[str, Any], player: str) -> None:
        """Refuse an accept that would seat someone over their cap of unfinished games, or
        start an open challenge whose challenger sits at another table; changes nothing."""
        if not o or o.get("status") not in (None, "open"):
            return  # the answer script says why (closed, expired, no such offer)
        names = {s["player"]: s["name"] for s in o["seats"] if s.get("player")}
        for who in sorted(names, key=lambda p: p != player):  # the accepter's own cap first
            try:
                await self.room(who, o.get("days"))
            except Refusal as exc:
                if who == player:
                    raise
                raise Limited(
                    f"{names[who]} is playing as many unfinished games as allowed",
                    None,
                    exc.code,
                ) from None
        if o["kind"] == "challenge" and o["open"]:
            if await self.matchmaker.seated_table(o["from"]) is not None:
                raise _elsewhere(o["from_name"])
            if await self.matchmaker.seated_table(o["to"]) is not None:
                raise Refusal("already_seated", "you are already at a private table")

    # -- dealing -------------------------------------------------------------------

    async def _deal(self, o: dict[str, Any]) -> dict[str, Any]:
        """Deal the game of an accepted offer (once: only the accept that completed it)."""
        if o["kind"] == "challenge" and o["open"]:
            return await self._open_table(o)
        for player in _humans(o):  # seated here: not in the queue any more
            await self.matchmaker.leave_if_queued(player)
        seats = [_seat(s) for s in o["seats"]]
        if o["kind"] == "challenge":
            seats += [Seat(None, f"{BOT}-bot {n}", BOT) for n in range(1, o["players"] - 1)]
        profiles = await self.results.profiles(seats, o.get("days"))
        game = await self.deals.start(
            seats,
            game_id=o["next"],
            code=o.get("code"),
            rated=bool(o["rated"]),
            profiles=profiles,
            days=o.get("days"),
        )
        assert game is not None  # no seat here asks for a fair deal: dealt at once
        if o["kind"] == "rematch":
            started = {"type": "rematch_started", "game": o["game"], "next": game.id}
            await self.store.publish_player(watchers(o["game"]), started)
        log.info(
            "%s %s dealt game %s",
            o["kind"],
            o["id"],
            game.id,
            extra={"event": "match", "game": game.id},
        )
        return o | {"game": game.id}

    async def _open_table(self, o: dict[str, Any]) -> dict[str, Any]:
        """A challenge with open seats: a private table hosted by the challenger."""
        mm, (host, guest) = self.matchmaker, o["seats"]
        for player in _humans(o):
            await mm.leave_if_queued(player)
        try:  # the host took a table since the accept's check: never say its code
            info = await mm.create_table(
                host["player"], host["name"], o["players"], bool(o["rated"]), days=o.get("days")
            )
        except Refusal:
            raise _elsewhere(host["name"]) from None
        try:
            info = await mm.join_table(info.code, guest["player"], guest["name"])
        except Refusal:
            await mm.leave_table(info.code, host["player"])  # the table just made goes
            raise
        await self.store.publish_players([(p, info.as_message()) for p in _humans(o)])
        return o | {"code": info.code}


def _elsewhere(name: str) -> Refusal:
    """The refusal of an open challenge whose challenger sits at another table."""
    return Refusal(
        "already_seated", f"{name} is at another private table; the challenge cannot start there"
    )
