"""What `moose play` and `moose watch` print for events, views and legal moves."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console

from moose import _render, rules
from moose.bots import make_bot, play_game

Message = dict[str, Any]
NAMES = ["alice", "bob", "carol"]


def text(renderable: Any) -> str:
    """A renderable as plain text."""
    console = Console(width=120, no_color=True, record=True)
    with console.capture() as cap:
        console.print(renderable)
    return cap.get()


def event(kind: str, seq: int = 7, view: Message | None = None, **fields: Any) -> Message:
    """An `event` message."""
    return {
        "type": "event",
        "game": "g_1",
        "seq": seq,
        "event": {"kind": kind, **fields},
        "view": view or {},
    }


def trap_view() -> Message:
    """Seat 1 (bob) must answer carol's moose on its kitchen, holding a trap."""
    return {
        "players": 3,
        "dealer": 0,
        "seat": 1,
        "turn": 2,
        "to_act": 1,
        "phase": "answer",
        "draw_pile": 20,
        "discard": ["door"],
        "houses": [
            {"house": False, "rooms": []},
            {
                "house": True,
                "rooms": [{"type": "living", "cover": "door"}, {"type": "kitchen", "cover": None}],
            },
            {"house": True, "rooms": [{"type": "bedroom", "cover": "moose"}]},
        ],
        "hand_sizes": [4, 5, 4],
        "over": False,
        "hand": ["door", "trap"],
        "pending": {"seat": 1, "attacker": 2, "room": 1, "card": "moose:kitchen"},
    }


def test_every_event_kind_reads_as_a_sentence() -> None:
    view = trap_view()
    moose_move = {"action": "play", "card": "moose:kitchen", "target": 1, "room": 1}
    lines = [
        _render.describe_event(event("start", 1, players=3, dealer=0, names=NAMES)),
        _render.describe_event(event("move", 8, view, seat=2, move=moose_move, auto=None), NAMES),
        _render.describe_event(
            event("move", 9, view, seat=1, move={"action": "trap"}, auto="timeout"), NAMES, me=1
        ),
        _render.describe_event(event("away", seat=2), NAMES),
        _render.describe_event(event("back", seat=2), NAMES),
        _render.describe_event(event("over", scores=[1, 0, 2], winners=[1]), NAMES, me=0),
    ]
    assert lines == [
        "[1] cards dealt to alice, bob, carol; alice dealt",
        "[8] carol played moose:kitchen on bob's room 1 (kitchen)",
        "[9] you sprang a trap: the moose and the trap go to the discard pile (timeout)",
        "[7] carol is away: the server plays for them",
        "[7] carol is back",
        "[7] game over: scores you 1, bob 0, carol 2; bob won",
    ]


def test_the_trap_answer_prompt_names_the_attacker_and_room() -> None:
    view = trap_view()
    status = _render.status_line(view, NAMES, seconds_left=7.6).plain
    assert (
        status
        == "carol plays moose:kitchen on your room 1 (kitchen)! Trap it or allow it - 7s left"
    )
    menu = _render.choices([{"action": "trap"}, {"action": "allow"}], view, NAMES).plain
    assert menu.splitlines() == [
        "  1) trap: discard the moose with your trap (and draw a card)",
        "  2) allow: let the moose in (keep your trap)",
    ]


def test_board_shows_every_house_with_covers_and_marks_the_seat_to_act() -> None:
    out = text(_render.board(trap_view(), NAMES))
    assert "0:living+door" in out and "1:kitchen" in out and "0:bedroom+moose" in out
    assert "> 1 bob (you)" in out and "0 alice D" in out  # the numbers `/mute SEAT` takes
    assert "draw pile 20, discard top door" in out


def test_legal_moves_are_numbered_in_order_for_a_whole_game() -> None:
    state, _ = play_game([make_bot("random", seed=1), make_bot("random", seed=2)], seed=3)
    start = rules.new_game(2, seed=3)
    seat = rules.to_act(start)
    legal = rules.legal_moves(start)
    menu = _render.choices(legal, rules.view(start, seat), ["a", "b"]).plain.splitlines()
    assert [line.split(")")[0].strip() for line in menu] == [
        str(i) for i in range(1, len(legal) + 1)
    ]
    final = _render.final_scores(rules.view(state, 0), ["a", "b"]).plain
    assert final.startswith("Final: scores a ") and final.endswith(("You won!", "You lost."))


def test_screen_puts_board_moves_log_and_prompt_together() -> None:
    view = trap_view()
    legal = [{"action": "trap"}, {"action": "allow"}]
    out = text(
        _render.screen(
            view,
            NAMES,
            legal=legal,
            seconds_left=5,
            log=["[8] x"],
            header="moose play",
            prompt="> 1",
        )
    )
    for part in (
        "moose play",
        "Your hand: door trap",
        "Trap it or allow it",
        "2) allow",
        "[8] x",
        "> 1",
    ):
        assert part in out


def over_view(rooms: list[list[str | None]], scores: list[int], winners: list[int]) -> Message:
    """A finished game's view: each seat's room covers, scores and winners."""
    houses = [
        {"house": True, "rooms": [{"type": "kitchen", "cover": c} for c in covers]}
        for covers in rooms
    ]
    return {
        "players": len(rooms),
        "seat": 0,
        "houses": houses,
        "over": True,
        "scores": scores,
        "winners": winners,
        "hand_sizes": [0] * len(rooms),
    }


def test_a_tie_decided_on_doors_says_so() -> None:
    view = over_view([["door", "door"], ["door", None], ["moose"]], [4, 4, 5], [0])
    over = event("over", view=view, scores=[4, 4, 5], winners=[0])
    line = _render.describe_event(over, NAMES, me=0)
    assert line.endswith("you won (a tie on 4, decided on doors: you 2, bob 1)"), line
    final = _render.final_scores(view, NAMES).plain
    assert "alice won (a tie on 4, decided on doors: alice 2, bob 1)." in final, final
    shared = over_view([["door"], ["door"], []], [4, 4, 5], [0, 1])
    assert "they share the win" in _render.final_scores(shared, NAMES).plain
    clear = over_view([["door"], [], []], [3, 4, 5], [0])
    assert "tie" not in _render.final_scores(clear, NAMES).plain


def test_an_abandoned_game_ends_with_no_turn_left_waiting() -> None:
    view = {**trap_view(), "to_act": 2, "seat": 0, "pending": None}
    msg = event("over", view=view, abandoned=True, scores=[1, 0, 2], winners=[])
    ended = _render.final_view(msg)
    out = text(
        _render.screen(
            ended, NAMES, legal=None, seconds_left=None, log=[], header="moose play", prompt=""
        )
    )
    assert "Waiting for" not in out
    assert "The game was abandoned: every player was away." in out
    flat = " ".join(out.split())
    assert "Final: abandoned, nobody won" in flat and "alice 1, bob 0, carol 2" in flat


def test_a_game_lost_by_forfeit_says_who_forfeited_and_ends() -> None:
    view = {**trap_view(), "to_act": 2, "seat": 0, "pending": None}
    msg = event("over", view=view, forfeit=[1], scores=[1, 0, 2], winners=[0])
    line = _render.describe_event(msg, NAMES, 0)
    assert line == "[7] game over: bob lost by forfeit (banned by a moderator); you won", line
    assert _render.final_view(msg)["over"] is True


@pytest.mark.parametrize(
    ("reason", "other", "mine"),
    [
        ("spared", "bob's connection dropped: their", "your connection dropped: your"),
        ("outage", "the server was briefly away: bob's", "the server was briefly away: your"),
    ],
)
def test_a_turn_that_goes_on_says_why_whose_and_how_long(reason, other, mine) -> None:
    told = {
        "type": "deadline",
        "game": "g_1",
        "seq": 7,
        "to_act": 1,
        "deadline": 1_764_424_845_500,
        "server_time": 1_764_424_830_500,
        "reason": reason,
    }
    assert _render.describe_deadline(told, NAMES) == f"[7] {other} turn goes on, 15s more"
    assert _render.describe_deadline(told, NAMES, me=1) == f"[7] {mine} turn goes on, 15s more"
