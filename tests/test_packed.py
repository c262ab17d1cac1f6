"""The server's packing shortcuts give the bytes of packing the plain messages and maps."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import msgpack
import msgspec
import pytest

from moose import protocol, rules
from moose_server.play import frames
from moose_server.play.copies import Copies
from moose_server.play.frames import Prepared, event_message
from moose_server.play.game import Game, seat_info
from moose_server.play.recent import GameLog
from moose_server.play.streams import heard_step
from moose_server.settings import Settings
from moose_server.storage import formats
from moose_server.storage.codec import pack, pack_compressed
from moose_server.storage.store import Entry


def _games(count: int) -> list[list[rules.State]]:
    out = []
    for g in range(count):
        rng = random.Random(g)
        s = rules.new_game(rng.choice([2, 3, 4, 5, 6]), seed=g)
        states = [s]
        while not s.over:
            s = rules.apply(s, rng.choice(rules.legal_moves(s)))
            states.append(s)
        out.append(states)
    return out


def test_game_packed_equals_pack_of_the_maps() -> None:
    for states in _games(40):
        n = states[0].n
        game = Game(
            "g_x",
            0,
            0,
            states[0],
            [f"p{i}" for i in range(n)],
            ["a"] * n,
            [None] * n,
            [False] * n,
            [0] * n,
            [],
        )
        for k, s in enumerate(states):
            # Past 15 moves the list takes the 0xdc header too.
            moves = [{"action": "pass", "i": i} for i in range(k * 3)]
            code = "KX7P2M" if k % 2 else None  # a private table's game, or a queue's
            game = dataclasses.replace(game, state=s, moves=moves, misses=[k % 3] * n, code=code)
            d = s.to_dict()
            for auto in (False, True):
                data, snapshot, cache = game.packed(d, auto)
                assert data == pack(game.to_data(d))
                assert snapshot == pack({**d, "auto": auto})
                assert cache[0] == len(moves)
            game = dataclasses.replace(game, packed_moves=cache)


def test_prepared_messages_equal_event_message() -> None:
    for states in _games(30):
        for i, s in enumerate(states):
            d = {**s.to_dict(), "auto": i % 5 == 0}
            # As read from the stream; as committed here; with the legal moves too.
            for parsed, legal in ((None, None), (s, None), (s, rules.legal_moves(s))):
                e = Entry(i + 1, {"kind": "move"}, d, i % 2 * 1234, 99, parsed, legal)
                ready = Prepared("g", e)
                for seat in [None, *range(s.n)]:
                    got, want = ready.message(seat), event_message("g", e, seat, s)
                    assert got == want
                    assert list(got.view) == list(want.view)  # same key order
                    # The frame a binary socket gets: the very bytes of the message as
                    # msgpack packs it as a map (`type` first, every field, nulls too).
                    assert ready.frame(seat) == protocol.encode(msgspec.to_builtins(want))


def test_game_but_equals_dataclasses_replace() -> None:
    s = rules.new_game(3, seed=1)
    game = Game(
        "g_x",
        4,
        9,
        s,
        ["p0", None, "p2"],
        ["a", "b", "c"],
        [None, "greedy", None],
        [False] * 3,
        [0] * 3,
        [{"action": "pass"}],
        packed_moves=(1, b"\x81"),
    )
    changes = {"version": 5, "misses": [1, 0, 0], "packed_moves": (0, b"")}
    new = game.but(**changes)
    assert new == dataclasses.replace(game, **changes) and new.packed_moves == (0, b"")
    assert game.version == 4 and game.misses == [0] * 3  # the original is untouched
    with pytest.raises(AssertionError):
        game.but(versoin=5)  # a misspelt field is refused, not added


def test_game_from_data_sets_every_field_as_the_constructor_does() -> None:
    s = rules.new_game(3, seed=1)
    plain = Game(
        "g_x",
        4,
        9,
        s,
        ["p0", None, "p2"],
        ["a", "b", "c"],
        [None, "greedy", None],
        [False, True, False],
        [0, 2, 0],
        [{"action": "pass"}],
        code="KX7P2M",
        rated=True,
    )
    fuller = plain.but(ended="forfeit", forfeits=(1,), days=3, arena="a_1", deal={"scheme": "x"})
    for game in (plain, fuller):
        read = Game.from_data(game.id, game.version, game.deadline, game.to_data())
        assert read == game and vars(read).keys() == {f.name for f in dataclasses.fields(Game)}
        assert read.packed_moves == (0, b"") and read.legal == game.legal


def _heard_data(game: Game, state: dict[str, Any], how: int) -> bytes:
    """The data a commit of `game` wrote, as another instance's step brings it: packed
    (`Game.packed`), compressed (a game waiting days), or of format 0 (no `fmt`)."""
    if how == 0:
        return game.packed(state, False)[0]
    if how == 1:
        return pack_compressed(game.to_data(state))
    return pack({k: v for k, v in game.to_data(state).items() if k != formats.FIELD})


def test_a_game_moved_on_after_it_was_heard_packs_the_bytes_of_one_kept_here() -> None:
    # A follower's copy of a game is made of the data another instance's step
    # brought (`Copies.stepped`, `Game.from_packed`), its moves kept packed; moved
    # on here, once or several times before it hears again, each commit must pack
    # the very bytes that the same game kept here as a list of moves packs.
    for seed in range(24):
        rng = random.Random(seed)
        n = rng.choice([2, 3, 4, 5, 6])
        state = rules.new_game(n, seed=seed)
        players: list[str | None] = [f"p{i}" for i in range(n)]
        here = Game("g_x", 1, 0, state, players, ["a"] * n, [None] * n, [False] * n, [0] * n, [])
        if seed % 2:  # every field a game may have
            deal = {"scheme": "x", "commitment": "c"}
            here = here.but(code="KX7P2M", rated=True, deal=deal, arena="a_1", days=3)
        heard, copies, how = here, Copies(Settings()), 2  # at first: as kept here
        while not state.over:
            if rng.random() < 0.4:  # another instance's step: the data its commit wrote
                how = rng.randrange(3)
                parsed = (state, None) if rng.random() < 0.5 else ()
                data = _heard_data(here, state.to_dict(), how)
                copies.stepped(here.id, here.version, 0, data, *parsed)
                heard = copies.get(here.id)  # type: ignore[assignment]
                # The moves stay packed, but for a format this release does not write.
                assert heard is not None and ("moves" in vars(heard)) is (how == 2)
                assert heard.but() == here  # a copy, whose moves this unpacks
            move = rng.choice(rules.legal_moves(state))
            state = rules.apply(state, move)
            misses = [rng.randrange(3) for _ in range(n)]
            here = here.with_move(move, state=state, misses=misses)
            heard = heard.with_move(move, state=state, misses=misses)
            d, auto = state.to_dict(), rng.random() < 0.3
            packed = here.packed(d, auto)
            assert heard.packed(d, auto) == packed
            cache = packed[2]
            here = here.but(version=here.version + 1, packed_moves=cache)
            heard = heard.but(version=heard.version + 1, packed_moves=cache)
        # Its moves unpacked only now, by its record and its data written whole (compressed).
        assert ("moves" in vars(heard)) is (how == 2)
        assert heard.to_data() == here.to_data() and heard.record() == here.record()
        assert heard == here and heard.moves == here.moves and "moves" in vars(heard)


def test_game_legal_is_computed_once_and_kept_by_but_until_the_state_changes() -> None:
    s = rules.new_game(3, seed=2)
    game = Game(
        "g_x", 0, 0, s, ["p0", "p1", "p2"], ["a", "b", "c"], [None] * 3, [False] * 3, [0] * 3, []
    )
    legal = game.legal
    assert legal == rules.legal_moves(s) and game.legal is legal
    assert game.but(version=1, deadline=5).legal is legal  # the same state
    moved = game.but(state=rules.apply(s, legal[0]))
    assert moved.legal is not legal and moved.legal == rules.legal_moves(moved.state)


def _event_kinds(game: Game, state: rules.State) -> list[dict[str, Any]]:
    """Every kind of event the server commits (games.py), as it writes them."""
    info = seat_info(game)
    move = (rules.legal_moves(state) or [{"action": "discard", "card": "house"}])[0]
    return [
        {"kind": "start", "players": state.n, "dealer": state.dealer, "names": game.names, **info},
        {"kind": "move", "seat": 0, "move": move, "auto": None},
        {"kind": "move", "seat": 1, "move": move, "auto": "timeout"},
        {"kind": "away", "seat": 1},
        {"kind": "back", "seat": 1},
        {
            "kind": "over",
            "scores": [1] * state.n,
            "winners": [0],
            "ratings": [{"rating": 500, "change": 3, "provisional": True}] * state.n,
        },
        {"kind": "state", "names": game.names, **info, "away": [False] * state.n},
    ]


def test_every_event_kind_s_frame_is_msgpack_packb_of_the_message_it_mirrors() -> None:
    for states in _games(6):
        n = states[0].n
        game = Game(
            "g_k",
            0,
            0,
            states[0],
            [f"p{i}" for i in range(n)],
            list("abcdef"[:n]),
            [None] * n,
            [False, True, *[False] * (n - 2)],
            [0] * n,
            [],
        )
        for i, s in enumerate(states[:: max(1, len(states) // 5)] + states[-1:]):
            for event in _event_kinds(game, s):
                for auto, deadline in ((False, 1_800_000_000_000), (True, 0)):
                    e = Entry(i + 1, event, {**s.to_dict(), "auto": auto}, deadline, 7, s)
                    ready = Prepared("g_k", e)
                    for seat in [None, *range(n)]:
                        message = msgspec.to_builtins(event_message("g_k", e, seat, s))
                        assert list(message)[:2] == ["type", "game"]
                        want = msgpack.packb(message, use_bin_type=True)
                        assert ready.frame(seat) == want, (event["kind"], seat)


def test_the_frames_import_check_fails_when_a_frame_is_not_its_message(monkeypatch) -> None:
    frames._check()  # as at import
    real = Prepared.frame
    monkeypatch.setattr(Prepared, "frame", lambda self, seat: real(self, seat)[:-1] + b"\x00")
    with pytest.raises(AssertionError, match="frame is not its message"):
        frames._check()


def test_frames_along_a_game_s_log_equal_the_messages_their_houses_packed_once() -> None:
    # Each entry of the log takes the houses the entry before packed (`_packed_houses`)
    # where they are the same, trimmed from the log or not: along a game, every seat's
    # frame must still be its message, frames made at some steps only (the houses
    # known may be older).
    for states in _games(12):
        log = GameLog()
        for i, s in enumerate(states):
            d = {**s.to_dict(), "auto": i % 4 == 0}
            [ready] = log.add("g", [Entry(i + 1, {"kind": "move"}, d, 5, 7, s)])
            if i % 3 == 2:
                continue  # no frame made: the next entry takes older houses
            for seat in [None, *range(s.n)]:
                want = msgspec.to_builtins(event_message("g", ready.entry, seat, s))
                assert ready.frame(seat) == protocol.encode(want)
            if i % 2:
                log.forget(i + 1)  # every socket had it (the log keeps its houses)


def test_a_heard_step_s_states_are_the_rules_states_its_snapshots_hold() -> None:
    # `heard_step` decodes each state as the rules state holds it (interned cards,
    # tuples) and makes it a rules state with no copy: the same state as `from_dict`
    # of the snapshot unpacked; one of another shape is left as it comes.
    for states in _games(8):
        flat: list[Any] = []
        for i, s in enumerate(states):
            flat += [{"kind": "move", "i": i}, {**s.to_dict(), "auto": i % 2 == 0}]
        body = pack(flat)
        step = heard_step(b"g_h 1 7 9 %d " % len(body) + body + b"data")
        assert step.data == b"data" and [e.seq for e in step.entries] == [
            i + 1 for i in range(len(states))
        ]
        for i, (entry, s) in enumerate(zip(step.entries, states, strict=True)):
            assert entry.parsed is not None and entry.parsed.to_dict() == s.to_dict()
            assert entry.state["auto"] == (i % 2 == 0) and entry.event["i"] == i
            assert rules.legal_moves(entry.parsed) == rules.legal_moves(s)
    odd = {**states[0].to_dict(), "auto": False, "over": None}  # not a bool
    body = pack([{"kind": "move"}, odd])
    [entry] = heard_step(b"g_h 1 7 9 %d " % len(body) + body).entries
    assert entry.parsed is None and entry.state == odd


def test_a_state_s_dict_not_copied_packs_as_its_copy_and_reads_back_as_the_state() -> None:
    for states in _games(20):
        for s in states:
            data = s.to_dict(copy=False)
            assert list(data) == list(s.to_dict()) and pack(data) == pack(s.to_dict())
            assert rules.State.from_dict(data, copy=False).to_dict() == s.to_dict()
