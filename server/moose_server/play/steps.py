"""What one step of a game writes, made without Redis (`Steps`): the forced passes
folded into it, its next deadline, the `over` event, and the commit script's call.

`Games` (games.py) makes each step's new game and events, has `Steps` turn them
into a `CommitCall`, and sends that (`Store.commit`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from moose import rules
from moose_server.play.correspondence import DAY_MS
from moose_server.play.game import Event, Game, forfeit_event, over_event
from moose_server.play.streams import keeps_snapshot
from moose_server.settings import Settings
from moose_server.storage.codec import pack, pack_array_header, pack_compressed
from moose_server.storage.scripts import CommitCall

__all__ = ["Passes", "Rater", "Steps"]


class Rater(Protocol):
    """What games need of ratings (results.Results): the `over` event's and the update."""

    def over_ratings(self, game: Game, state: rules.State) -> list[dict[str, Any] | None]:
        """Each seat's new rating and its change, for the `over` event of a rated game."""

    async def apply(self, game: Game, ended: int) -> None:
        """Apply a finished rated game's rating changes (once, whoever calls); `ended`: ms."""


class Steps:
    """Turns a step of a game (the game before, the game after, its events) into what
    the commit script writes."""

    def __init__(
        self,
        settings: Settings,
        rater: Rater | None,
        own_channel: bytes,
        publish_steps: bool = True,
    ) -> None:
        self.settings = settings
        self.rater = rater  # says each seat's new rating in a rated game's `over` event
        # The wake-up channel of this instance's hub: it has our commits at once, so
        # no wake-up of them is published to it (lua/commit.lua).
        self.own_channel = own_channel
        # Whether a commit publishes its step to the games' followers (sharded pub/sub),
        # or only a wake-up that has them read the stream.
        self.publish_steps = publish_steps

    def over(self, game: Game, state: rules.State) -> Event:
        """The `over` event; a rated game's says each seat's new rating, a fair deal's
        how it was dealt (the server seed, told now)."""
        event = forfeit_event(game) if game.forfeits else over_event(state)
        if game.rated and self.rater is not None:
            event["ratings"] = self.rater.over_ratings(game, state)
        if game.deal is not None:
            event["deal"] = game.deal
        return event

    def forced_passes(
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
            new = new.with_move(move, state=state)
            events.append({"kind": "move", "seat": seat, "move": move, "auto": "forced"})
            states.append(state)
            if state.over:
                events.append(self.over(new, state))
                states.append(state)
        return new, events, Passes(states)

    def deadline_delta(self, new: Game, events: list[Event], auto: bool) -> int:
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
        if new.days is not None:  # a correspondence game: a turn or an answer alike
            return new.days * DAY_MS
        return max(1, int((s.answer_time if new.state.pending else s.turn_time) * 1000))

    def call(
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

        `passes`: forced passes folded into the step (`forced_passes`); the events
        before them keep the states they lead to, and say the server plays next."""
        data, packed_snapshot, packed_moves = new.packed(state, auto)
        over = new.finished
        # An abandoned game is never rated; an arena game's points wait as a rating does.
        rated = new.decided and (new.rated or new.arena is not None)
        # A rated queue game's record is kept for record_ttl (histories point to it);
        # read seldom, kept long: compressed (2.8 -> ~1 KB for 4 players).
        record = pack_compressed(new.record()) if rated and new.code is None else b""
        # Kept for game_ttl, or days until the next move, read seldom: compressed
        # (~1.1 KB for 4 players at the end; 1.5-2.5 -> 0.4-0.6 KB for 2 waiting).
        waits = new.days is not None and not auto and not over
        if over or waits:
            data = pack_compressed(new.to_data(state))
        # Each event with the state after it, packed once for the stream and the step.
        packed = [pack(e) for e in events]
        states = [packed_snapshot] * len(events)
        autos: tuple[bool, ...] = ()
        if passes is not None:
            autos = tuple(passes.auto(i, auto) for i in range(len(events)))
            states = [
                packed_snapshot if passes.final(i) else pack(passes.snapshot(i))
                for i in range(len(events))
            ]
        stored = [
            (e, s if keeps_snapshot(old.version + 1 + i) else None)
            for i, (e, s) in enumerate(zip(packed, states, strict=True))
        ]
        step = None
        if self.publish_steps:
            step = pack_array_header(2 * len(events)) + b"".join(
                e + s for e, s in zip(packed, states, strict=True)
            )
        call = CommitCall(
            game=new.id,
            expected=old.version,
            move_field=field,
            data=data,
            events=stored,
            deadline_ms=self.deadline_delta(new, events, auto),
            ttl=self.settings.game_ttl if over else 0,
            record=record,
            # Every finished game settles (results.py: histories at least): among the unrated.
            record_ttl=self.settings.record_ttl if new.decided else 0,
            auto=auto,
            autos=autos,
            grace_ms=int(self.settings.game_grace * 1000),
            due=due,
            own=self.own_channel,
            step=step,
            compact=waits,
        )
        return call, packed_moves


@dataclass
class Passes:
    """The states of a step whose forced passes were folded in (`Steps.forced_passes`):
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
