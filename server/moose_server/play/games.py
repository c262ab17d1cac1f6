"""Games: load -> rules.apply -> commit -> fan out; the only place rules meet Redis.

One move is one read (`Store.load`) and one atomic commit (`Store.commit`, a
Lua script checking the version and the move id). A lost race reads again. The
commit appends the events to the game's stream and publishes a wake-up to every
other instance that follows the game; this instance's hub, among the listeners,
has them at once. Each hub turns them into per-seat messages.

Each instance keeps the games it last wrote (`Copies`, bounded). A player's
move on such a game is checked against that copy and committed at once: the
commit script checks the version anyway, so a copy that is behind costs one
refused commit and then the usual read. A wake-up from another instance drops
the copy it makes old (the hub tells `Copies.woke`; it hears those of the games
its sockets follow, whose moves come here). Anything the copy refuses
is decided from a fresh read, so a resent move id still gets its first answer.

A game's stream keeps a state snapshot every few events only (stream.py reads
it back); once over, the game's data is compressed and its stream and move ids
expire after `game_grace`.

Every commit of this instance is told to the listeners `Games` is built with
(the hub fans it out, the observer counts and logs it), and every deadline it
fired to its `timeouts` listener (the metrics).

Seats the server plays (bots, away seats, a pass that is the only legal move)
are played at once by the instance that committed the move before, in a task;
their deadline (`auto_delay`) is the safety net should that instance die.

Errors: `GameError(code, message)`, with a PROTOCOL.md error code.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import secrets
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from moose import fair, rules
from moose_server.accounts.names import distinct
from moose_server.accounts.ratings import Standing
from moose_server.codec import extend_map, pack, pack_array_header, pack_compressed, pack_map
from moose_server.errors import Refusal
from moose_server.play.seats import Seat
from moose_server.play.streams import keeps_snapshot, read_event
from moose_server.settings import Settings
from moose_server.storage.keys import move_field
from moose_server.storage.scripts import CommitCall
from moose_server.storage.store import Commit, Entry, Loaded, Store
from moose_server.tasks import cancel_and_wait, cancelling

__all__ = [
    "Copies",
    "Game",
    "GameError",
    "GameListener",
    "Games",
    "TimeoutListener",
    "finished_record",
    "match_message",
    "seat_info_of",
    "table_match",
]

log = logging.getLogger(__name__)

Move = dict[str, Any]
Event = dict[str, Any]
RETRIES = 20
COPIED_GAMES = 2048  # games this instance keeps as it last wrote them, at least...
SOCKETS_PER_GAME = 2  # ...or one per this many sockets it may serve (settings.max_sockets)
FALLBACK_BOT = "greedy"


class GameError(Refusal):
    """A request the game refuses; `code` is the PROTOCOL.md error code."""


def finished_record(game: Game) -> dict[str, Any]:
    """The game's record (deck included) once it is over, or GameError not_over."""
    if not game.finished:
        raise GameError("not_over", "the game is still being played")
    return game.record()


class Rater(Protocol):
    """What games need of ratings (results.Results): the `over` event's and the update."""

    def over_ratings(self, game: Game, state: rules.State) -> list[dict[str, Any] | None]:
        """Each seat's new rating and its change, for the `over` event of a rated game."""

    async def apply(self, game: Game, ended: int) -> None:
        """Apply a finished rated game's rating changes (once, whoever calls); `ended`: ms."""


class GameListener(Protocol):
    """Told of every commit of this instance (the hub, the observer)."""

    def committed(self, game: str, entries: list[Entry]) -> None:
        """Events this instance has just committed, with the stream entries it wrote."""


class TimeoutListener(Protocol):
    """Told of every deadline this instance fired (the metrics)."""

    def fired(self, late_ms: int) -> None:
        """A deadline fired and played a move, `late_ms` after it was due (Redis time)."""


@dataclass(frozen=True)
class Game:
    """A game as stored: the rules state plus who sits where."""

    id: str
    version: int
    deadline: int
    state: rules.State
    players: list[str | None]
    names: list[str]
    bots: list[str | None]
    away: list[bool]
    misses: list[int]
    moves: list[Move]
    code: str | None = None  # the join code of the private table it came from; None: queue
    rated: bool = False  # its end updates the seats' ratings
    # Per seat at the start: {"bot", "mu", "sigma", "games"}, or None for a server bot.
    profiles: list[dict[str, Any] | None] | None = None
    ended: str | None = None  # "abandoned": the server ended it before the rules did
    # A provably fair deal's {"scheme", "commitment", "server_seed" (hex), "seeds"}
    # (moose.fair); secret until the end. None: dealt from a fixed deck (tests).
    deal: dict[str, Any] | None = None
    arena: str | None = None  # the arena tournament it is a game of (issue 26, arena)
    # (k, msgpack of moves[:k] concatenated), from the commit that wrote this
    # game's ancestor: moves only grow, so it is a prefix of `moves`. Not compared.
    packed_moves: tuple[int, bytes] = dataclasses.field(default=(0, b""), compare=False, repr=False)

    @classmethod
    def from_data(cls, game_id: str, version: int, deadline: int, d: dict[str, Any]) -> Game:
        """A game from its stored data."""
        return cls(
            game_id, version, deadline, rules.State.from_dict(d["state"]), d["players"],
            d["names"], d["bots"], d["away"], d["misses"], d["moves"], d.get("code"),
            d.get("rated", False), d.get("profiles"), d.get("ended"), d.get("deal"),
            d.get("arena"),
        )  # fmt: skip

    def to_data(self, state: dict[str, Any] | None = None) -> dict[str, Any]:
        """The stored data (everything but id, version and deadline).

        `state` is `self.state.to_dict()` when the caller has made it already.
        """
        return {
            "state": self.state.to_dict() if state is None else state, "players": self.players,
            "names": self.names, "bots": self.bots, "away": self.away, "misses": self.misses,
            "moves": self.moves, "code": self.code, "rated": self.rated,
            "profiles": self.profiles, **({"ended": self.ended} if self.ended else {}),
            **({"deal": self.deal} if self.deal else {}),
            **({"arena": self.arena} if self.arena else {}),
        }  # fmt: skip

    def packed(self, state: dict[str, Any], auto: bool) -> tuple[bytes, bytes, tuple[int, bytes]]:
        """`pack(self.to_data(state))`, `pack({**state, "auto": auto})` and the moves' cache.

        The same bytes as packing the maps, but the state is packed once for both
        and the moves already packed by an earlier commit are not packed again:
        bench/bench_move_path.py measured this at 2x faster than packing the maps
        (~13 us against ~29 us a commit, 30-50 moves in).
        """
        packed_state = pack(state)
        k, done = self.packed_moves
        moves = self.moves
        if k > len(moves):  # not this game's moves: pack them all
            k, done = 0, b""
        done += b"".join([pack(m) for m in moves[k:]])
        packed_moves = pack_array_header(len(moves)) + done
        data = pack_map(self.to_data(state), {"state": packed_state, "moves": packed_moves})
        snapshot = extend_map(packed_state, len(state), {"auto": auto})
        return data, snapshot, (len(moves), done)

    def but(self, **changes: Any) -> Game:
        """A copy with some fields changed: `dataclasses.replace` at a quarter of its cost.

        Every move makes two copies; replace() runs __init__ with its checks.
        The copy keeps `legal` when it was computed, unless the state changes.
        """
        assert changes.keys() <= _FIELDS, changes.keys() - _FIELDS
        new = object.__new__(Game)
        new.__dict__.update(self.__dict__, **changes)
        if "state" in changes:
            new.__dict__.pop("legal", None)
        return new

    @property
    def finished(self) -> bool:
        """Over by the rules, or ended by the server (abandoned)."""
        return self.state.over or self.ended is not None

    def abandoned(self) -> bool:
        """Whether the server ends the game now: a private table's game that changes no
        rating (unrated, or fewer than two players) whose every player's seat is away.

        A rated game of two players or more is played out, so that walking away from
        a lost position loses it as before.
        """
        seats = [i for i, p in enumerate(self.players) if p is not None]
        if self.code is None or (self.rated and len(seats) >= 2) or self.finished:
            return False
        return bool(seats) and all(self.away[i] for i in seats)

    def seat_of(self, player: str) -> int | None:
        """The player's seat, or None."""
        return self.players.index(player) if player in self.players else None

    def seat_named(self, target: str) -> int | None:
        """The seat of a player called `target` (its player id, its name, or its name as
        the table shows it, "bob #2"), or None."""
        shown = distinct(self.names)
        for seat, player in enumerate(self.players):
            if player is not None and target in (player, self.names[seat], shown[seat]):
                return seat
        return None

    def humans(self) -> list[str]:
        """The player ids seated at this game."""
        return [p for p in self.players if p is not None]

    @functools.cached_property
    def legal(self) -> list[Move]:
        """`rules.legal_moves(self.state)`, computed once: a move's commit, its auto-play
        and the hub's message to the seat to act all need them. Do not change the list.
        """
        return rules.legal_moves(self.state)

    def auto_kind(self) -> str | None:
        """How the server plays the seat to act now: 'bot', 'forced', or None (a person)."""
        seat = rules.to_act(self.state)
        if seat is None:
            return None
        if self.bots[seat] is not None or self.away[seat]:
            return "bot"
        if self.legal == [{"action": "pass"}]:
            return "forced"
        return None

    def record(self) -> dict[str, Any]:
        """The game record of RULES.md section 7."""
        s = self.state
        rec: dict[str, Any] = {
            "players": s.n, "dealer": s.dealer, "deck": list(s.deck),
            "moves": self.moves, "names": self.names,
        }  # fmt: skip
        if s.over:
            rec["result"] = {"scores": rules.scores(s), "winners": rules.winners(s)}
        if self.finished and self.deal is not None:  # the server seed is told at the end
            rec["deal"] = self.deal
        return rec

    def public_deal(self) -> dict[str, Any]:
        """`{"deal": {"scheme", "commitment"}}` for `match` and `start`; {} without a deal."""
        if self.deal is None:
            return {}
        return {"deal": {"scheme": self.deal["scheme"], "commitment": self.deal["commitment"]}}


_FIELDS = frozenset(f.name for f in dataclasses.fields(Game))


def _bots_module() -> Any:
    try:
        from moose import bots
    except ImportError:  # the bots may not be installed in a trimmed client
        return None
    return bots


def timeout_move(view: dict[str, Any], legal: list[Move]) -> Move:
    """The move played when a seat's time runs out (also for away seats)."""
    bots = _bots_module()
    choose = getattr(bots, "choose_timeout_move", None)
    if choose is not None:
        return dict(choose(view, legal))
    return next((m for m in legal if m["action"] == "trap"), legal[0])


def bot_move(game: Game, name: str, view: dict[str, Any], legal: list[Move]) -> Move:
    """A bot seat's move; the seed comes from the game and version, so replays agree."""
    bots = _bots_module()
    if bots is None:
        return legal[0]
    seed = zlib.crc32(f"{game.id}:{game.version}".encode())
    try:
        bot = bots.make_bot(name, seed)
    except ValueError:
        bot = bots.make_bot(FALLBACK_BOT, seed)
    return dict(bot.choose(view, legal))


def thinks(name: str | None) -> bool:
    """Whether the bot kind `name` searches (a few tenths of a second of CPU a move)."""
    bots = _bots_module()
    return name is not None and name in getattr(bots, "SEARCHING", ())


def _game_of(game_id: str, loaded: Loaded) -> Game:
    """The game as read, or GameError no_such_game."""
    if loaded.data is None:
        raise GameError("no_such_game", f"no game {game_id[:64]!r}")
    return Game.from_data(game_id, loaded.version, loaded.deadline, loaded.data)


def match_message(game: Game, seat: int) -> dict[str, Any]:
    """The `match` that tells a seated player of their game."""
    return table_match(game.id, seat, game.names, seat_info(game), game.public_deal())


def table_match(
    game: str, seat: int, names: list[str], info: dict[str, Any], deal: dict[str, Any]
) -> dict[str, Any]:
    """A `match` from its parts: `info` is `seat_info`'s, `deal` `Game.public_deal`'s."""
    return {"type": "match", "game": game, "seat": seat, "players": len(names),
            "names": names, **info, **deal}  # fmt: skip


def seat_info(game: Game) -> dict[str, Any]:
    """`bots` (each seat a bot, the server's or a player's) and `ratings` of a game's seats,
    for `match`, `start` and `state`; a rating is {"rating", "provisional"} or None."""
    return seat_info_of(game.bots, game.profiles)


def seat_info_of(
    server_bots: Sequence[str | None], profiles: Sequence[dict[str, Any] | None] | None
) -> dict[str, Any]:
    """`seat_info` of seats played by `server_bots` (None: not the server's) with `profiles`."""
    profiles = profiles or [None] * len(server_bots)
    bots = [
        b is not None or bool(p and p.get("bot"))
        for b, p in zip(server_bots, profiles, strict=True)
    ]
    ratings: list[dict[str, Any] | None] = [
        None if p is None
        else {"rating": Standing(p["mu"], p["sigma"], p["games"]).rating,
              "provisional": p["provisional"]}
        for p in profiles
    ]  # fmt: skip
    return {"bots": bots, "ratings": ratings}


def over_event(state: rules.State) -> Event:
    """The event that ends a game."""
    return {"kind": "over", "scores": rules.scores(state), "winners": rules.winners(state)}


def abandoned_event(state: rules.State) -> Event:
    """The event that ends an abandoned game: the scores as they stand, and no winner."""
    return {"kind": "over", "abandoned": True, "scores": rules.scores(state), "winners": []}


class Games:
    """Creates games and plays moves on them, for every instance alike."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        rater: Rater | None = None,
        copies: Copies | None = None,
        *,
        listeners: Sequence[GameListener] = (),
        timeouts: TimeoutListener | None = None,
        own_channel: bytes = b"",
    ) -> None:
        self.store = store
        # The wake-up channel of the hub among `listeners`: it has our commits at
        # once, so no wake-up of them is published to it (lua/commit.lua).
        self.own_channel = own_channel
        self.settings = settings
        self.rater = rater  # rates finished games that are rated (None: none is)
        self.copies = copies if copies is not None else Copies(settings)
        self.listeners = tuple(listeners)
        self.timeouts = timeouts
        self._tasks: set[asyncio.Task[None]] = set()

    async def close(self) -> None:
        """Cancel and await the auto-play tasks this instance started."""
        await cancel_and_wait(list(self._tasks))

    # -- reading --------------------------------------------------------------

    async def load(self, game_id: str) -> Game:
        """The game, or GameError no_such_game."""
        return _game_of(game_id, await self.store.load(game_id))

    async def record(self, game_id: str) -> dict[str, Any]:
        """The record of a finished game, or GameError not_over."""
        return finished_record(await self.load(game_id))

    async def public_record(self, game_id: str) -> dict[str, Any]:
        """The record of a finished queue game, also once the game has expired while its
        record is kept (a rated game's); a private table's game is `no_such_game` here."""
        loaded = await self.store.load(game_id)
        if loaded.data is None:
            kept = await self.store.kept_record(game_id)
            if kept is not None:
                return kept
        game = _game_of(game_id, loaded)
        if game.code is not None:
            raise GameError("no_such_game", f"no public game {game_id[:64]!r}")
        return finished_record(game)

    # -- creating -------------------------------------------------------------

    async def create(
        self, seats: Sequence[Seat], *, seed: int | None = None, dealer: int | None = None,
        deck: Sequence[str] | None = None, state: rules.State | None = None,
        game_id: str | None = None, code: str | None = None, rated: bool = False,
        profiles: list[dict[str, Any] | None] | None = None,
        server_seed: bytes | None = None, seeds: Sequence[str] | None = None, told: bool = False,
        arena: str | None = None,
    ) -> Game:  # fmt: skip
        """Deal a new game (or start from `state`), tell every seated player, let bots start.

        Unless a `seed`, `deck` or `state` fixes the deal (tests), it is a provably
        fair one (moose.fair) from `server_seed` (drawn when None) and the seats'
        `seeds` (each "" when None). `told`: the players had their `match` already
        (lobby/deals.py sent it before the seeds came).
        With `game_id`, dealing again is harmless: a game of that id with the same
        players is taken as this one (dealt before by someone whose answer was lost).
        """
        n = len(seats)
        deal = None
        if state is None and seed is None and deck is None and dealer is None:
            server_seed = secrets.token_bytes(32) if server_seed is None else server_seed
            seeds = list(seeds) if seeds is not None else [""] * n
            dealer, deck = fair.deal(server_seed, seeds, n)
            deal = {**fair.public(server_seed), "server_seed": server_seed.hex(), "seeds": seeds}
        if state is None:
            seed = secrets.randbits(64) if seed is None and deck is None else seed
            state = rules.new_game(n, seed=seed, dealer=dealer, deck=deck)
        game = Game(
            game_id or f"g_{secrets.token_hex(5)}", 0, 0, state, [s.player for s in seats],
            distinct([s.name for s in seats]), [s.bot for s in seats], [False] * n,
            [0] * n, [], code, rated and self.rater is not None, profiles, deal=deal,
            arena=arena,
        )  # fmt: skip
        start = {"kind": "start", "players": n, "dealer": state.dealer, "names": game.names,
                 **seat_info(game), **game.public_deal()}  # fmt: skip
        await self.store.add_player_game(game.humans(), game.id)
        _, created = await self._commit(game, game, [start], "")
        if created is None:
            # Taken: by this very game when redis-py re-sent our commit or another
            # instance dealt the same formed table; its players hear of it again.
            created = await self.load(game.id)
            if created.players != game.players:
                raise GameError("internal", "a new game id was taken")
        matches = [
            (player, match_message(created, seat))
            for seat, player in enumerate(created.players) if player is not None
        ]  # fmt: skip
        if matches and not told:
            await self.store.publish_players(matches)
        self._spawn_autoplay(created)
        return created

    # -- moves ------------------------------------------------------------------

    async def move(
        self, game_id: str, player: str, move: Any, seq: int | None = None,
        move_id: str | None = None,
    ) -> int:  # fmt: skip
        """Play a player's move; return the seq of the event it produced."""
        # Without a move id, a random one still makes redis-py's resend harmless.
        field = move_field(player, move_id or f"~{secrets.token_hex(8)}")
        known = self.copies.get(game_id)
        if known is not None:
            try:
                new, events = self._player_move(known, player, move, seq)
            except GameError:
                pass  # maybe a resend, or the copy is behind: decide from a fresh read
            else:
                done = await self._commit_move(known, new, events, field)
                if done is not None:
                    return done
        for _ in range(RETRIES):
            loaded = await self.store.load(game_id, field)
            if loaded.dup is not None:
                return loaded.dup
            game = _game_of(game_id, loaded)
            new, events = self._player_move(game, player, move, await self._based_on(game, seq))
            done = await self._commit_move(game, new, events, field)
            if done is not None:
                return done
        raise GameError("unavailable", "the game is too busy; try again")

    async def _based_on(self, game: Game, seq: int | None) -> int | None:
        """`seq` as the move's base: the game's version if nothing that matters has changed.

        Events that change no rules state (an `away` or `back` of any seat) do
        not make a move stale: a move based on the event before them is taken
        as based on the game now. Only when seq < version; it reads one event.
        """
        if seq is None or seq >= game.version or seq < 1:
            return seq
        then = await read_event(self.store, game.id, seq)
        if then is None:
            return seq
        state = dict(then.state)
        state.pop("auto", None)
        return game.version if state == game.state.to_dict() else seq

    async def _commit_move(
        self, old: Game, new: Game, events: list[Event], field: str
    ) -> int | None:
        """Commit a player's move: the seq of its event, or None if the game moved on."""
        got, result = await self._commit(old, new, events, field)
        if got.status == "dup":
            return got.seq
        if result is None:
            return None
        self._spawn_autoplay(result)
        return got.seq

    def _player_move(
        self, game: Game, player: str, move: Any, seq: int | None
    ) -> tuple[Game, list[Event]]:
        """Check and apply a player's own move (pure: no Redis)."""
        seat = game.seat_of(player)
        if seat is None:
            raise GameError("not_in_game", f"you have no seat in game {game.id}")
        if game.finished:
            raise GameError("game_over", "the game has ended")
        if seq is not None and seq != game.version:
            raise GameError("stale_seq", f"the game is at seq {game.version}, not {seq}")
        actor = rules.to_act(game.state)
        if actor != seat:
            raise GameError("not_your_turn", f"it is seat {actor}'s move, you are seat {seat}")
        try:
            state = rules.apply(game.state, move)
            canon = rules.normalize_move(move)
        except rules.IllegalMove as exc:
            raise GameError("illegal_move", str(exc)) from None
        canon.pop("seat", None)
        misses = game.misses.copy()
        misses[seat] = 0
        new = game.but(state=state, misses=misses, moves=[*game.moves, canon])
        events: list[Event] = [{"kind": "move", "seat": seat, "move": canon, "auto": None}]
        return new, events + ([self._over(game, state)] if state.over else [])

    def _over(self, game: Game, state: rules.State) -> Event:
        """The `over` event; a rated game's says each seat's new rating, a fair deal's
        how it was dealt (the server seed, told now)."""
        event = over_event(state)
        if game.rated and self.rater is not None:
            event["ratings"] = self.rater.over_ratings(game, state)
        if game.deal is not None:
            event["deal"] = game.deal
        return event

    def _server_move(self, game: Game, timed_out: bool) -> tuple[Game, list[Event]] | None:
        """The move the server makes for the seat to act, or None if it is a person's turn;
        or the end of a game nobody plays any more (`Game.abandoned`)."""
        if game.finished:
            return None
        if game.abandoned():
            log.info("game %s abandoned", game.id, extra={"event": "abandoned", "game": game.id})
            event = abandoned_event(game.state)
            if game.deal is not None:  # ended: the server seed is told (PROTOCOL.md)
                event["deal"] = game.deal
            return game.but(ended="abandoned"), [event]
        seat = rules.to_act(game.state)
        kind = game.auto_kind()
        if seat is None or (kind is None and not timed_out):
            return None
        legal = game.legal
        view = rules.view(game.state, seat)
        bot = game.bots[seat]
        if kind == "forced":  # left by a version that did not fold it into the step before
            move = legal[0]
        elif bot is not None:
            move = bot_move(game, bot, view, legal)
        else:
            move = timeout_move(view, legal)
        state = rules.apply(game.state, move)
        misses, away = game.misses.copy(), game.away.copy()
        auto = kind or "timeout"
        events: list[Event] = [{"kind": "move", "seat": seat, "move": move, "auto": auto}]
        if auto == "timeout":
            misses[seat] += 1
            if misses[seat] >= self.settings.away_after and not state.over:
                away[seat] = True
                events.append({"kind": "away", "seat": seat})
        if state.over:
            events.append(self._over(game, state))
        new = game.but(state=state, misses=misses, away=away, moves=[*game.moves, move])
        return new, events

    async def _server_step(self, game: Game, timed_out: bool) -> tuple[Game, list[Event]] | None:
        """`_server_move`, in a worker thread when a search bot is to move, so that
        the event loop goes on serving every other socket while it thinks."""
        seat = rules.to_act(game.state)
        if seat is not None and thinks(game.bots[seat]):
            return await asyncio.to_thread(self._server_move, game, timed_out)
        return self._server_move(game, timed_out)

    async def timeout(self, game_id: str, now: int) -> None:
        """A claimed deadline is due: play for the seat to act (version-checked: fires once)."""
        loaded = await self.store.load(game_id)
        if loaded.data is None:
            await self.store.drop_deadline(game_id)
            return
        game = Game.from_data(game_id, loaded.version, loaded.deadline, loaded.data)
        if game.finished:
            await self.store.drop_deadline(game_id)
            return
        if game.deadline > now:
            return  # a move set a new deadline after this one was claimed
        step = await self._server_step(game, timed_out=True)
        if step is not None:
            # Checked against this deadline too: one held since (the seats were told
            # that Redis lost their last writes, net/hub.py) waits for its new time.
            got, result = await self._commit(game, step[0], step[1], "", due=game.deadline)
            if result is not None:
                if self.timeouts is not None:
                    self.timeouts.fired(got.now - game.deadline)
                await self.autoplay(result)

    async def back(self, game_id: str, player: str) -> None:
        """The away player sent a message: the seat is theirs again (event `back`)."""
        for _ in range(RETRIES):
            game = await self.load(game_id)
            seat = game.seat_of(player)
            if seat is None or not game.away[seat] or game.finished:
                return
            away, misses = game.away.copy(), game.misses.copy()
            away[seat], misses[seat] = False, 0
            new = game.but(away=away, misses=misses)
            _, result = await self._commit(game, new, [{"kind": "back", "seat": seat}], "")
            if result is not None:
                return

    async def take_over(self, game_id: str, player: str) -> bool:
        """A moderator hands the player's seat to the server's bot (event `away`): it is
        played as an away seat until its player comes back. False: nothing to take."""
        for _ in range(RETRIES):
            game = await self.load(game_id)
            seat = game.seat_of(player)
            if seat is None or game.away[seat] or game.bots[seat] is not None or game.finished:
                return False
            away = game.away.copy()
            away[seat] = True
            _, result = await self._commit(
                game, game.but(away=away), [{"kind": "away", "seat": seat}], ""
            )
            if result is not None:
                self._spawn_autoplay(result)
                return True
        return False

    async def autoplay(self, game: Game) -> None:
        """Play the seats the server plays, one commit each, until a person must move
        (a forced pass comes in the commit before it: `_forced_passes`)."""
        for _ in range(10_000):  # a game has fewer moves than this; it only bounds bugs
            step = await self._server_step(game, timed_out=False)
            if step is None:
                return
            _, result = await self._commit(game, step[0], step[1], "")
            if result is None:
                return  # someone else moved first; whoever did plays on
            game = result

    def _spawn_autoplay(self, game: Game) -> None:
        if game.auto_kind() is None:
            return
        task = asyncio.get_running_loop().create_task(self._autoplay_logged(game))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _autoplay_logged(self, game: Game) -> None:
        try:
            await self.autoplay(game)
        except asyncio.CancelledError:
            raise
        except Exception:
            if cancelling():
                raise asyncio.CancelledError from None
            # The deadline of the seat is the safety net: another poll plays it.
            log.exception("auto-play of %s failed", game.id)

    # -- committing ---------------------------------------------------------------

    def _forced_passes(
        self, new: Game, events: list[Event]
    ) -> tuple[Game, list[Event], Passes | None]:
        """`new` and `events`, then the pass of each seat next to act that can only
        pass (auto "forced"), in the same step: one commit instead of one more each.

        None when no pass follows; else the rules state after each event.
        """
        if new.finished or new.auto_kind() != "forced":
            return new, events, None
        states = [new.state] * len(events)
        events = list(events)
        while not new.finished and new.auto_kind() == "forced":
            seat = rules.to_act(new.state)
            move = dict(new.legal[0])
            state = rules.apply(new.state, move)
            new = new.but(state=state, moves=[*new.moves, move])
            events.append({"kind": "move", "seat": seat, "move": move, "auto": "forced"})
            states.append(state)
            if state.over:
                events.append(self._over(new, state))
                states.append(state)
        return new, events, Passes(states)

    def _deadline_delta(self, new: Game, events: list[Event], auto: bool) -> int:
        """Milliseconds to the next deadline; 0 clears it, -1 keeps the current one.

        `auto` is whether the server plays the seat to act (`new.auto_kind()`).
        """
        s = self.settings
        if new.finished:
            return 0
        back = events[0]["kind"] == "back" and len(events) == 1  # alone: no pass folded in
        if back and rules.to_act(new.state) != events[0]["seat"]:
            return -1
        if auto:
            return max(1, int(min(s.auto_delay, s.turn_time) * 1000))
        return max(1, int((s.answer_time if new.state.pending else s.turn_time) * 1000))

    def _commit_call(
        self,
        old: Game,
        new: Game,
        events: list[Event],
        field: str,
        state: dict[str, Any],
        auto: bool,
        due: int = 0,
        passes: Passes | None = None,
    ) -> tuple[CommitCall, tuple[int, bytes]]:
        """What the commit script writes for `new` over `old`, and `new`'s moves packed.

        `passes`: forced passes folded into the step (`_forced_passes`); the events
        before them keep the states they lead to, and say the server plays next."""
        data, packed_snapshot, packed_moves = new.packed(state, auto)
        over = new.finished
        # An abandoned game is never rated; an arena game's points wait as a rating does.
        rated = new.state.over and (new.rated or new.arena is not None)
        # A rated queue game's record is kept for record_ttl (histories point to it);
        # read seldom, kept long: compressed (2.8 -> ~1 KB for 4 players).
        record = pack_compressed(new.record()) if rated and new.code is None else b""
        if over:  # kept for game_ttl, read seldom: compressed (~1.1 KB for 4 players)
            data = pack_compressed(new.to_data(state))
        stored = [
            (e, packed_snapshot if keeps_snapshot(old.version + 1 + i) else None)
            for i, e in enumerate(events)
        ]
        autos: tuple[bool, ...] = ()
        if passes is not None:
            autos = tuple(passes.auto(i, auto) for i in range(len(events)))
            stored = [
                (e, None if kept is None or passes.final(i) else pack(passes.snapshot(i)))
                for i, (e, kept) in enumerate(stored)
            ]
        call = CommitCall(
            game=new.id,
            expected=old.version,
            move_field=field,
            data=data,
            events=stored,
            deadline_ms=self._deadline_delta(new, events, auto),
            ttl=self.settings.game_ttl if over else 0,
            record=record,
            record_ttl=self.settings.record_ttl if rated else 0,
            auto=auto,
            autos=autos,
            grace_ms=int(self.settings.game_grace * 1000),
            due=due,
            own=self.own_channel,
        )
        return call, packed_moves

    async def _commit(
        self, old: Game, new: Game, events: list[Event], field: str, due: int = 0
    ) -> tuple[Commit, Game | None]:
        """Commit `new` over `old`: the answer, and the new game if it was written.

        `due`: a timeout's deadline, which the game must still have. The passes of
        the seats that can only pass next are played in the same step."""
        new, events, passes = self._forced_passes(new, events)
        state = new.state.to_dict()  # once: it goes into the data and every snapshot
        # Stored beside the state so that a seat the server plays at once is not
        # offered legal moves it would race the server for.
        auto = new.auto_kind() is not None
        snapshot = {**state, "auto": auto}
        call, packed_moves = self._commit_call(old, new, events, field, state, auto, due, passes)
        with self.copies.committing(new.id):
            got = await self.store.commit(call)
            if got.status != "ok":
                return got, None
            if self.listeners:
                # The seat to act gets its legal moves unless the server plays it.
                legal = None if auto else new.legal
                entries = [
                    Entry(got.seq + i, event, snapshot, got.deadline, got.now, new.state, legal)
                    for i, event in enumerate(events)
                ]
                if passes is not None:
                    for i in passes.before():  # its own state, and no legal moves offered
                        entries[i] = dataclasses.replace(
                            entries[i], state=passes.snapshot(i), parsed=passes.states[i],
                            legal=None,
                        )  # fmt: skip
                for listener in self.listeners:
                    listener.committed(new.id, entries)
        if new.finished:
            # Both leave in one batch (one round trip; storage/batch.py).
            forget = self.store.remove_player_game(new.humans(), new.id)
            settles = new.rated or new.arena is not None  # ratings, arena points
            if new.state.over and settles and self.rater is not None:
                await asyncio.gather(forget, self.rater.apply(new, got.now))
            else:
                await forget
            await self.store.live_remove([new.id])
        written = new.but(
            version=old.version + len(events), deadline=got.deadline, packed_moves=packed_moves
        )
        self.copies.keep(written)
        return got, written


@dataclass
class Passes:
    """The states of a step whose forced passes were folded in (`Games._forced_passes`):
    `states[i]` is the rules state after event i; the last one is the step's."""

    states: list[rules.State]

    def final(self, i: int) -> bool:
        """Whether event i leaves the game as the whole step does."""
        return self.states[i] is self.states[-1]

    def before(self) -> list[int]:
        """The events that do not (those before the last pass)."""
        return [i for i in range(len(self.states)) if not self.final(i)]

    def auto(self, i: int, last: bool) -> bool:
        """Whether the server plays the seat to act after event i (`last`: after the step)."""
        return last if self.final(i) else True  # a forced seat is to act

    def snapshot(self, i: int) -> dict[str, Any]:
        """The stream's state after event i, one of `before()`, as `Entry.state` holds it."""
        return {**self.states[i].to_dict(), "auto": self.auto(i, False)}


class Copies:
    """The games this instance wrote last, as it wrote them (bounded, least recently
    written dropped first): `Games` plays on them, the hub's wake-ups age them."""

    def __init__(self, settings: Settings) -> None:
        self._games: dict[str, Game] = {}  # game id -> as last written here (LRU order)
        self._committing: dict[str, int] = {}  # game -> commits of ours under way
        self._settled: dict[str, asyncio.Event] = {}  # set once none is, if awaited
        # Each game kept is ~12 KB (25 moves in); one that is not costs its next
        # move a read. 2,048 were too few for a lobby of 20,000 (5,000 games).
        self.size = max(COPIED_GAMES, settings.max_sockets // SOCKETS_PER_GAME)

    def get(self, game_id: str) -> Game | None:
        """Our copy of the game, if we keep one."""
        return self._games.get(game_id)

    def keep(self, game: Game) -> None:
        """Keep the game as just written here (a finished game is dropped)."""
        known = self._games.pop(game.id, None)
        if game.finished:
            return
        if known is not None and known.version > game.version:
            game = known  # a later commit of ours got here first
        self._games[game.id] = game
        if len(self._games) > self.size:
            del self._games[next(iter(self._games))]

    @contextlib.contextmanager
    def committing(self, game: str) -> Iterator[None]:
        """While a commit of `game` by this instance is under way (until its listeners
        have been told): `settled` waits for it."""
        self._committing[game] = self._committing.get(game, 0) + 1
        try:
            yield
        finally:
            left = self._committing.pop(game) - 1
            if left:
                self._committing[game] = left
            elif (waiting := self._settled.pop(game, None)) is not None:
                waiting.set()

    async def settled(self, game: str) -> None:
        """Once no commit of `game` by this instance is under way.

        Our own commit's wake-up comes on the subscription while its reply is still
        on its way to the mover (the Redis batch's task hands it over, several loop
        turns later); the hub waits here, and the reply delivers the events.
        """
        if game in self._committing:
            await self._settled.setdefault(game, asyncio.Event()).wait()

    def woke(self, game: str, seq: int) -> None:
        """A wake-up: the game is at `seq` now; forget our copy if it is older."""
        known = self._games.get(game)
        if known is not None and known.version < seq:
            del self._games[game]
