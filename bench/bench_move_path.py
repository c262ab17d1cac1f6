"""CPU of one move's in-process path on the server, without sockets or Redis.

    python bench/bench_move_path.py            # the installed (editable) checkout
    PYTHONPATH=OTHER/client:OTHER/server python bench/bench_move_path.py   # another one
    python bench/bench_move_path.py --plain    # without the packing shortcuts (or one:
                                               # --plain game, --plain frames)
    valgrind --tool=callgrind python bench/bench_move_path.py --calls 2000

Times, in one process, what the server does in Python for a player's move in a
4-player game 30 moves in: the move checked and applied (`Games._player_move`),
the commit's state dict, auto-play check, the commit script's call (packed game
and events, its KEYS and ARGV: `Steps.call`, `CommitCall.build`), the copy that
is kept, and the event frames of the 4 seats (`frames.Prepared.frame`, before
it `hub._Prepared.frame`), its entries made ready in the game's log after the
step before (`recent.GameLog.add`, where the revision has it). Prints the best
of 7 timeit repeats of 2,000 moves, in us per move; compare two revisions by
running it with each on PYTHONPATH (e.g. an export made with `git archive`).
`--heard` makes each move as a follower instance does after another instance's
step (the step's message read, its event made ready and the seat to act's
frame, its copy from the step's data).
`--plain` packs the game, its snapshot and each seat's message as they are
(`pack(dict)`) instead of `Game.packed` and the frame template: the difference
is what those shortcuts save (`--plain game` or `--plain frames`: that one
only). `--calls N`
makes N moves untimed, for an instruction count that a busy machine cannot blur
(callgrind's total, less that of `--calls 0`, divided by N).
"""

from __future__ import annotations

import argparse
import copy
import functools
import inspect
import random
import sys
import timeit
from typing import Any

from moose import rules
from moose_server.play import games as G
from moose_server.settings import Settings
from moose_server.storage.codec import pack
from moose_server.storage.store import Entry


def _prepared() -> Any:
    """The class that makes an entry ready for every seat, wherever this revision keeps it."""
    try:
        from moose_server.play.frames import Prepared
    except ImportError:
        from moose_server.play import hub

        return hub._Prepared  # type: ignore[attr-defined]
    return Prepared


def _game_class() -> Any:
    """`Game`, wherever this revision keeps it."""
    try:
        from moose_server.play.game import Game
    except ImportError:  # before play/game.py
        return G.Game  # type: ignore[attr-defined]
    return Game


def _deadline_delta(games: Any) -> Any:
    """The step's deadline function, wherever this revision keeps it."""
    try:
        from moose_server.play.steps import Steps
    except ImportError:  # before play/steps.py
        return games._deadline_delta
    games.steps = Steps(games.settings, None, b"")
    return games.steps.deadline_delta


def _log_after(game_id: str, state: Any, seq: int) -> Any:
    """`add(entries)`: the entries made ready as the hub's log of the game makes them
    (`GameLog.add`), after the step before (`state` at `seq`: made ready, its frames
    made and sent, then trimmed from the log, as the hub does), where this revision
    has the log."""
    prepared = _prepared()
    snapshot = {**state.to_dict(), "auto": False}
    before = Entry(seq, {"kind": "move"}, snapshot, 5, 6, state)
    try:
        from moose_server.play.recent import GameLog
    except ImportError:
        prepared(game_id, before).frame(0)
        return lambda entries: [prepared(game_id, e) for e in entries]
    held = GameLog()
    held.add(game_id, [before])[0].frame(0)
    held.forget(seq)  # every socket had it

    def add(entries: list[Entry]) -> list[Any]:
        return copy.copy(held).add(game_id, entries)

    return add


def _heard(game: Any, before: Any) -> Any:
    """A follower's copy of `game` as another instance's step brings it: the hub reads
    the step's message (`streams.heard_step`, where this revision has it), makes its
    event ready in the game's log and the seat to act's frame, `Copies` keeps the
    data the step wrote, and the move here takes the game from there (`--heard`)."""
    from moose_server.play.copies import Copies

    state = game.state.to_dict()
    data = game.packed(state, False)[0]
    snapshot = {**state, "auto": False}
    settings = Settings()
    hands_on = len(inspect.signature(Copies.stepped).parameters) > 5  # since ca677f2
    prepared = _prepared()
    try:
        from moose_server.play.streams import heard_step
    except ImportError:  # before the steps were published: the entry made here
        heard_step = None
    add = _log_after(game.id, before, game.version - 1)
    flat = pack([{"kind": "move"}, snapshot])
    message = b"%s %d 6 5 %d " % (game.id.encode(), game.version, len(flat)) + flat + data

    def heard() -> Any:
        copies = Copies(settings)  # holding no copy of its own: the step's data it is
        if heard_step is None:
            ready = prepared("g_abc", Entry(game.version, {"kind": "move"}, snapshot, 5, 6))
        else:
            ready = add(heard_step(message).entries)[-1]
        ready.frame(rules.to_act(ready.state))
        more = (ready.state, ready.legal) if hands_on else ()
        copies.stepped(game.id, game.version, 5, data, *more)
        return copies.get(game.id)

    return heard


def _commit_call(games: Any) -> tuple[Any, Any]:
    """`Steps.call` and `Store.keys_of`, where this revision has them (else None, None)."""
    steps = getattr(games, "steps", None)
    if not hasattr(steps, "call"):
        return None, None
    from moose_server.storage.store import Store

    store = Store.__new__(Store)
    Store.__init__(store, None, 16)  # type: ignore[arg-type]
    return steps.call, store.keys_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--plain",
        nargs="?",
        const="all",
        choices=["all", "game", "frames"],
        help="pack the dicts instead of the shortcuts (all, or one)",
    )
    parser.add_argument("--calls", type=int, help="make this many moves, untimed")
    parser.add_argument(
        "--heard",
        action="store_true",
        help="as a follower instance: the move's game first heard as another's step",
    )
    args = parser.parse_args()
    state = rules.new_game(4, seed=3)
    rng = random.Random(1)
    moves, states = [], [state]
    for _ in range(30):
        move = rng.choice(rules.legal_moves(state))
        state = rules.apply(state, move)
        moves.append(move)
        states.append(state)
    game = _game_class()(
        "g_abc",
        len(moves),
        0,
        state,
        ["p1", "p2", "p3", "p4"],
        list("abcd"),
        [None] * 4,
        [False] * 4,
        [0] * 4,
        moves,
    )
    if args.plain not in ("all", "game") and hasattr(game, "packed"):
        # As the server keeps it after a commit: its moves packed already.
        game = game.but(packed_moves=game.packed(game.state.to_dict(), False)[2])
    base = game
    games = G.Games.__new__(G.Games)
    games.settings = Settings()
    deadline_delta = _deadline_delta(games)
    player = game.players[rules.to_act(state)]  # type: ignore[index]
    move = rules.legal_moves(state)[0]
    with_legal = "legal" in inspect.signature(Entry).parameters  # Entry.legal since d68e258
    commit, keys_of = _commit_call(games)

    # The commit's state dict, as this revision makes it: the state's own lists since
    # 81aa2f7 (game.state_data, then rules.State.to_dict(copy=False)).
    state_data = getattr(sys.modules[type(game).__module__], "state_data", rules.State.to_dict)
    if "copy" in inspect.signature(rules.State.to_dict).parameters:
        state_data = functools.partial(rules.State.to_dict, copy=False)
    heard = _heard(game, states[-2]) if args.heard else None
    add = _log_after(game.id, game.state, game.version)

    def one_move() -> None:
        game = base if heard is None else heard()
        new, events = games._player_move(game, player, move, None)
        data = state_data(new.state)
        auto = new.auto_kind() is not None
        snapshot = {**data, "auto": auto}
        if args.plain in ("all", "game"):
            pack(new.to_data(data))
            pack(snapshot)
            packed_moves = (0, b"")
            deadline_delta(new, events, auto)
            for event in events:
                pack(event)
        elif commit is not None:  # the commit script's call and its KEYS and ARGV
            call, packed_moves = commit(game, new, events, "m:p1:x", data, auto)
            call.build(keys_of(new.id))
        else:
            _, _, packed_moves = new.packed(data, auto)
            deadline_delta(new, events, auto)
            for event in events:
                pack(event)
        extra = (None if auto else vars(new).get("legal"),) if with_legal else ()
        seq = game.version + 1
        entries = [
            Entry(seq + i, e, snapshot, 0, 1, new.state, *extra) for i, e in enumerate(events)
        ]
        new.but(version=5, deadline=1, packed_moves=packed_moves).auto_kind()
        ready = add(entries)[0]
        for seat in range(4):
            if args.plain in ("all", "frames"):
                pack(ready.message(seat))
            else:
                ready.frame(seat)

    if args.calls is not None:
        for _ in range(args.calls):
            one_move()
        return
    best = min(timeit.repeat(one_move, number=2000, repeat=7)) / 2000
    plain = f" (--plain {args.plain})" if args.plain else ""
    print(f"{G.__file__}: {best * 1e6:.1f} us per move{plain}")


if __name__ == "__main__":
    main()
