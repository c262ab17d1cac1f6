"""Games: load -> rules.apply -> commit -> fan out; the only place rules meet Redis.

One move is one read (`Store.load`) and one atomic commit (`Store.commit`, a
Lua script checking the version and the move id). A lost race reads again. The
commit appends the events to the game's stream and publishes a wake-up to every
other instance that follows the game; this instance's hub, among the listeners,
has them at once. Each hub turns them into per-seat messages.

Each instance keeps the games it last wrote (`Copies`, copies.py). A player's
move on such a game is checked against that copy and committed at once: the
commit script checks the version anyway, so a copy that is behind costs one
refused commit and then the usual read. A wake-up from another instance drops
the copy it makes old (the hub tells `Copies.woke`; it hears those of the games
its sockets follow, whose moves come here). Anything the copy refuses
is decided from a fresh read, so a resent move id still gets its first answer.

What a step's commit writes is made in steps.py (`Steps`): the forced passes
folded in, the deadline, the state and a snapshot every few events only
(streams.py reads them back); once over, the game's data is compressed and its
stream and move ids expire after `game_grace`. A `Game` and what is made of one
without Redis (records, `match`, seat facts, the server's own moves) are in
game.py.

Every commit of this instance is told to the listeners `Games` is built with
(the hub fans it out, the observer counts and logs it), and every deadline it
fired to its `timeouts` listener (the metrics).

Seats the server plays (bots, away seats, a pass that is the only legal move)
are played at once by the instance that committed the move before, in a task;
their deadline (`auto_delay`) is the safety net should that instance die.

Errors: `GameError(code, message)` (game.py), with a PROTOCOL.md error code.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from moose import fair, rules
from moose_server.accounts import distinct
from moose_server.play.copies import Copies
from moose_server.play.correspondence import days_info
from moose_server.play.game import (
    Event,
    Game,
    GameError,
    abandoned_event,
    arena_info,
    bot_move,
    finished_record,
    match_message,
    seat_info,
    summary,
    thinks,
    timeout_move,
)
from moose_server.play.seats import Seat
from moose_server.play.steps import Rater, Steps
from moose_server.play.streams import read_event
from moose_server.settings import Settings
from moose_server.storage.keys import move_field
from moose_server.storage.store import Commit, Entry, Loaded, Store
from moose_server.tasks import cancel_and_wait, cancelling

__all__ = ["GameListener", "Games", "StartFollower", "TimeoutListener", "TurnListener"]

log = logging.getLogger(__name__)

RETRIES = 20


def _game_of(game_id: str, loaded: Loaded) -> Game:
    """The game as read, or GameError no_such_game."""
    if loaded.data is None:
        raise GameError("no_such_game", f"no game {game_id[:64]!r}")
    return Game.from_data(game_id, loaded.version, loaded.deadline, loaded.data)


class GameListener(Protocol):
    """Told of every commit of this instance (the hub, the observer)."""

    def committed(self, game: str, entries: list[Entry]) -> None:
        """Events this instance has just committed, with the stream entries it wrote."""


class TurnListener(Protocol):
    """Told of every game version this instance writes (notices away from the page)."""

    async def turned(self, game: Game) -> None:
        """`game` as just written; raises nothing (the move is made)."""


class StartFollower(Protocol):
    """Follows a game dealt here from its first commit, where its sockets are (the hub)."""

    def starting(self, players: Sequence[str]) -> bytes:
        """The channel the game's first commit lists as its follower (commit.lua),
        b"" for none: a socket of one of `players` is here, or none is."""

    def started(self, game: str) -> None:
        """The game's first commit listed the channel `starting` gave."""


class TimeoutListener(Protocol):
    """Told of every deadline this instance fired (the metrics)."""

    def fired(self, late_ms: int) -> None:
        """A deadline fired and played a move, `late_ms` after it was due (Redis time)."""


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
        turns: Sequence[TurnListener] = (),
        own_channel: bytes = b"",
        publish_steps: bool = True,
        follower: StartFollower | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.rater = rater  # rates finished games that are rated (None: none is)
        # `own_channel`: the wake-up channel of the hub among `listeners`;
        # `publish_steps`: whether the hubs hear steps on sharded channels (steps.py).
        self.steps = Steps(settings, rater, own_channel, publish_steps)
        self.copies = copies if copies is not None else Copies(settings)
        self.listeners = tuple(listeners)
        self.timeouts = timeouts
        self.turns = tuple(turns)
        self.follower = follower
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
        self,
        seats: Sequence[Seat],
        *,
        seed: int | None = None,
        dealer: int | None = None,
        deck: Sequence[str] | None = None,
        state: rules.State | None = None,
        game_id: str | None = None,
        code: str | None = None,
        rated: bool = False,
        profiles: list[dict[str, Any] | None] | None = None,
        server_seed: bytes | None = None,
        seeds: Sequence[str] | None = None,
        told: bool = False,
        arena: str | None = None,
        days: int | None = None,
        listed: bool = False,
        together: bool = False,
    ) -> Game:
        """Deal a new game (or start from `state`), tell every seated player, let bots start.

        Unless a `seed`, `deck` or `state` fixes the deal (tests), it is a provably
        fair one (moose.fair) from `server_seed` (drawn when None) and the seats'
        `seeds` (each "" when None). `told`: the players had their `match` already
        (deals/deals.py sent it before the seeds came). `listed`: a public game, put on
        the live games list (Store.live_add) at its start's time. `together`: every
        seat's instance reads their `match` messages as one (Store.publish_seats).
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
            game_id or f"g_{secrets.token_hex(5)}",
            0,
            0,
            state,
            [s.player for s in seats],
            distinct([s.name for s in seats]),
            [s.bot for s in seats],
            [False] * n,
            [0] * n,
            [],
            code,
            rated and self.rater is not None,
            profiles,
            deal=deal,
            arena=arena,
            days=days,
        )
        start = {
            "kind": "start",
            "players": n,
            "dealer": state.dealer,
            "names": game.names,
            **seat_info(game),
            **arena_info(game),
            **days_info(days),
            **game.public_deal(),
        }
        await self.store.add_player_game(game.humans(), game.id, days is not None)
        # Its sockets here follow it from its first commit, with no follow.lua call;
        # a waiting deal's (`told`) may be followed elsewhere since, as not dealt yet.
        follow = b""
        if self.follower is not None and not told:
            follow = self.follower.starting(game.humans())
        got, created = await self._commit(game, game, [start], "", follow=follow)
        started = got.now
        if created is not None and follow and self.follower is not None:
            self.follower.started(created.id)
        if created is None:
            # Taken: by this very game when redis-py re-sent our commit or another
            # instance dealt the same formed table; its players hear of it again.
            created, started = await self.load(game.id), 0
            if created.players != game.players:
                raise GameError("internal", "a new game id was taken")
        matches = [
            (player, match_message(created, seat))
            for seat, player in enumerate(created.players)
            if player is not None
        ]
        if matches and not told:
            if together:
                await self.store.publish_seats(created.id, matches)
            else:
                await self.store.publish_players(matches)
        self._spawn_autoplay(created)
        if listed:
            await self.store.live_add(created.id, summary(created), started)
        return created

    # -- moves ------------------------------------------------------------------

    async def move(
        self,
        game_id: str,
        player: str,
        move: Any,
        seq: int | None = None,
        move_id: str | None = None,
    ) -> int:
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
        new = game.with_move(canon, state=state, misses=misses)
        events: list[Event] = [{"kind": "move", "seat": seat, "move": canon, "auto": None}]
        return new, events + ([self.steps.over(game, state)] if state.over else [])

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
            events.append(self.steps.over(game, state))
        new = game.with_move(move, state=state, misses=misses, away=away)
        return new, events

    async def _server_step(self, game: Game, timed_out: bool) -> tuple[Game, list[Event]] | None:
        """`_server_move`, in a worker thread when a search bot is to move, so that
        the event loop goes on serving every other socket while it thinks."""
        seat = rules.to_act(game.state)
        if seat is not None and thinks(game.bots[seat]):
            return await asyncio.to_thread(self._server_move, game, timed_out)
        return self._server_move(game, timed_out)

    async def timeout(
        self,
        game_id: str,
        now: int,
        spare: Callable[[Game], Awaitable[bool]] | None = None,
    ) -> None:
        """A claimed deadline is due: play for the seat to act (version-checked: fires once).

        `spare` may move the deadline instead (True: moved, nothing to play)."""
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
        if spare is not None and await spare(game):
            return
        step = await self._server_step(game, timed_out=True)
        if step is not None:
            # Checked against this deadline too: one held since (the seats were told
            # that Redis lost their last writes, play/hub.py) waits for its new time.
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

    async def forfeit(self, game_id: str, player: str) -> bool:
        """A banned player's seat: a rated game (not an arena's) ends at once, lost by that
        seat (`forfeit_event`); any other is handed to the server's bot (`take_over`).
        Version-checked: the first instance to try applies it. False: nothing to do."""
        for _ in range(RETRIES):
            game = await self.load(game_id)
            seat = game.seat_of(player)
            if seat is None or game.finished:
                return False
            if not game.rated or game.arena is not None or len(game.humans()) < 2:
                return await self.take_over(game_id, player)
            away = game.away.copy()
            away[seat] = True
            new = game.but(ended="forfeit", forfeits=(seat,), away=away)
            _, result = await self._commit(game, new, [self.steps.over(new, new.state)], "")
            if result is not None:
                return True
        return False

    async def forfeit_all(self, player: str) -> int:
        """`forfeit` every unfinished game of the player; how many it ended or handed over."""
        done = 0
        for game_id in await self.store.player_games(player):
            try:
                done += await self.forfeit(game_id, player)
            except GameError:  # expired meanwhile: nothing to end
                continue
        return done

    async def autoplay(self, game: Game) -> None:
        """Play the seats the server plays, one commit each, until a person must move
        (a forced pass comes in the commit before it: `Steps.forced_passes`)."""
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

    async def _commit(
        self,
        old: Game,
        new: Game,
        events: list[Event],
        field: str,
        due: int = 0,
        follow: bytes = b"",
    ) -> tuple[Commit, Game | None]:
        """Commit `new` over `old`: the answer, and the new game if it was written.

        `due`: a timeout's deadline, which the game must still have; `follow`: a
        channel listed as the game's follower if none is (CommitCall). The passes of
        the seats that can only pass next are played in the same step."""
        new, events, passes = self.steps.forced_passes(new, events)
        state = new.state.to_dict(copy=False)  # once: into the data and every snapshot
        # Stored beside the state so that a seat the server plays at once is not
        # offered legal moves it would race the server for.
        auto = new.auto_kind() is not None
        snapshot = {**state, "auto": auto}
        call, packed_moves = self.steps.call(old, new, events, field, state, auto, due, passes)
        if follow:
            call = dataclasses.replace(call, follow=follow)
        with self.copies.committing(new.id):
            got = await self.store.commit(call)
            if got.status != "ok":
                return got, None
            if self.listeners:
                # The seat to act gets its legal moves unless the server plays it: made
                # here if they were already, else by the frame of that seat's socket.
                legal = None if auto else new.legal_made
                entries = [
                    Entry(got.seq + i, event, snapshot, got.deadline, got.now, new.state, legal)
                    for i, event in enumerate(events)
                ]
                if passes is not None:
                    for i in passes.before():  # its own state, and no legal moves offered
                        entries[i] = dataclasses.replace(
                            entries[i],
                            state=passes.snapshot(i),
                            parsed=passes.states[i],
                            legal=None,
                        )
                for listener in self.listeners:
                    listener.committed(new.id, entries)
        if new.finished:
            # Both leave in one batch (one round trip; storage/batch.py).
            forget = self.store.remove_player_game(new.humans(), new.id, new.days is not None)
            # Ratings, arena points, and every finished game in its players' histories.
            if new.decided and self.rater is not None:
                await asyncio.gather(forget, self.rater.apply(new, got.now))
            else:
                await forget
            await self.store.live_remove([new.id])
        written = new.but(
            version=old.version + len(events), deadline=got.deadline, packed_moves=packed_moves
        )
        self.copies.keep(written)
        for turn in self.turns:
            await turn.turned(written)
        return got, written
