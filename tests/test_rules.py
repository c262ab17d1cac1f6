"""Scenario tests for every rule and every [decided] point of RULES.md.

Early-game scenarios come from stacked decks and scripted moves. Positions that
only arise once the draw pile is empty are taken from seeded random games
(`find_position`), so they are real, reachable positions.
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter

import pytest

from moose import rules
from moose.rules import CARDS, IllegalMove, InvalidGame, State

from helpers import (
    ALLOW,
    EMPTYING_END,
    PASS,
    TRAP,
    deal,
    discard,
    door,
    emptying_game,
    find_position,
    house,
    moose,
    play,
    random_game,
    room,
    stacked_deck,
)


def rooms_of(state: State, seat: int) -> list[tuple[str, str | None]]:
    """A seat's rooms as (type, cover) pairs, read from the public view."""
    return [(r["type"], r["cover"]) for r in rules.view(state, None)["houses"][seat]["rooms"]]


def plays_of(state: State, seat: int) -> list[dict]:
    """The plays (a-d) `seat` would have if it were its end-phase turn now."""
    s = state.copy()
    s.turn, s.pending, s.drew = seat, None, False
    return [m for m in rules.legal_moves(s) if m["action"] == "play"]


def refused(state: State, move: dict, reason: str) -> None:
    """Assert that `move` is illegal here, with `reason` in the message."""
    with pytest.raises(IllegalMove, match=reason):
        rules.apply(state, move)


# -- the deal -------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_first_player_is_the_seat_left_of_the_dealer(players: int) -> None:
    for dealer in range(players):
        state = rules.new_game(players, seed=7, dealer=dealer)
        assert rules.to_act(state) == (dealer + 1) % players


def test_deal_gives_one_card_at_a_time_for_four_rounds_from_the_first_player() -> None:
    deck = list(CARDS)
    random.Random(3).shuffle(deck)
    state = rules.new_game(3, deck=deck, dealer=1)  # first player: seat 2
    assert state.hands[2] == [deck[0], deck[3], deck[6], deck[9], deck[12]]
    assert state.hands[0] == [deck[1], deck[4], deck[7], deck[10]]
    assert state.hands[1] == [deck[2], deck[5], deck[8], deck[11]]
    assert rules.view(state, None)["draw_pile"] == 58 - 12 - 1


def test_first_turn_draws_the_top_card_of_the_pile() -> None:
    state = deal(2, [["room:kitchen"] * 4, ["room:living"] * 4], ["door", "trap"])
    assert sorted(state.hands[0]) == sorted(["room:kitchen"] * 4 + ["door"])
    assert rules.phase(state) == "normal"
    state = play(state, room("kitchen", 1))
    assert "trap" in state.hands[1] and len(state.hands[1]) == 5


def test_the_same_seed_deals_the_same_game() -> None:
    assert rules.new_game(4, seed="abc") == rules.new_game(4, seed="abc")
    assert rules.new_game(4, seed="abc") != rules.new_game(4, seed="abd")


@pytest.mark.parametrize("players", [0, 1, 7, "3", True])
def test_new_game_refuses_a_seat_count_outside_two_to_six(players: object) -> None:
    with pytest.raises(InvalidGame, match="players"):
        rules.new_game(players, seed=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("dealer", [-1, 3, True])
def test_new_game_refuses_a_dealer_outside_the_table(dealer: object) -> None:
    with pytest.raises(InvalidGame, match="dealer"):
        rules.new_game(3, seed=1, dealer=dealer)  # type: ignore[arg-type]


def test_new_game_refuses_a_deck_that_is_not_the_58_cards() -> None:
    deck = list(CARDS)
    with pytest.raises(InvalidGame, match="58"):
        rules.new_game(2, deck=deck[:-1], dealer=0)
    with pytest.raises(InvalidGame, match="58"):
        rules.new_game(2, deck=[*deck[:-1], "house"], dealer=0)
    with pytest.raises(InvalidGame, match="not a card code"):
        rules.new_game(2, deck=[*deck[:-1], "moose:garage"], dealer=0)


# -- a: house -------------------------------------------------------------------------


def test_house_is_played_on_an_opponent_without_a_house_card() -> None:
    state = deal(3, [["house", "room:kitchen"], ["room:living"] * 4, ["room:bedroom"] * 4])
    assert {m["target"] for m in rules.legal_moves(state) if m["card"] == "house"} == {1, 2}
    state = play(state, house(2))
    assert [h["house"] for h in rules.view(state, None)["houses"]] == [False, False, True]
    assert rules.to_act(state) == 1


def test_house_on_an_opponent_who_has_one_is_refused() -> None:
    state = deal(2, [["house", "house"], ["room:living"] * 4])
    state = play(state, house(1), room("living", 0))
    refused(state, house(1), "seat 1 already has a house card")
    assert house(1) not in rules.legal_moves(state)


def test_house_on_your_own_seat_is_refused() -> None:
    state = deal(2, [["house"], ["room:living"] * 4])
    refused(state, house(0), "only a door may be played into your own house")


def test_house_on_a_seat_outside_the_table_is_refused() -> None:
    state = deal(2, [["house"], ["room:living"] * 4])
    refused(state, house(2), "target 2 is not a seat")


# -- b: room --------------------------------------------------------------------------

# Seat 0 fills seat 1 with rooms while seat 1 answers with bathrooms on seat 0.
_ROOMS = [
    ["room:kitchen", "room:kitchen", "room:living", "room:bedroom"],
    ["room:bathroom", "room:bathroom", "room:bathroom", "door"],
]


def test_room_needs_no_house_card_on_the_target() -> None:
    state = play(deal(2, _ROOMS), room("kitchen", 1))
    assert rooms_of(state, 1) == [("kitchen", None)]
    assert not rules.view(state, None)["houses"][1]["house"]


def test_room_on_your_own_seat_is_refused() -> None:
    refused(deal(2, _ROOMS), room("kitchen", 0), "only a door may be played into your own house")


def test_several_rooms_of_the_same_type_are_allowed() -> None:
    state = play(deal(2, _ROOMS), room("kitchen", 1), room("bathroom", 0), room("kitchen", 1))
    assert rooms_of(state, 1) == [("kitchen", None), ("kitchen", None)]


def test_room_on_an_opponent_with_three_open_rooms_is_refused() -> None:
    state = play(
        deal(2, _ROOMS),
        room("kitchen", 1),
        room("bathroom", 0),
        room("kitchen", 1),
        room("bathroom", 0),
        room("living", 1),
        room("bathroom", 0),
    )
    refused(state, room("bedroom", 1), "seat 1 already has 3 open rooms")
    assert all(
        m["action"] != "play" or m["card"] != "room:bedroom" for m in rules.legal_moves(state)
    )


def test_open_room_limit_counts_only_open_rooms() -> None:
    state = play(
        deal(2, _ROOMS),
        room("kitchen", 1),
        room("bathroom", 0),
        room("kitchen", 1),
        room("bathroom", 0),
        room("living", 1),
        door(2),  # seat 1 closes its living room
    )
    state = play(state, room("bedroom", 1))
    assert rooms_of(state, 1) == [
        ("kitchen", None),
        ("kitchen", None),
        ("living", "door"),
        ("bedroom", None),
    ]


def test_a_room_covered_by_a_moose_no_longer_counts_as_open() -> None:
    hands = [
        ["house", "room:kitchen", "room:kitchen", "room:living"],
        ["room:bathroom", "room:bathroom", "room:bathroom", "house"],
    ]
    state = play(
        deal(2, hands, ["moose:kitchen", "moose:bathroom", "room:bedroom", *["house"] * 4]),
        house(1),
        room("bathroom", 0),
        room("kitchen", 1),
        room("bathroom", 0),
        room("kitchen", 1),
        room("bathroom", 0),
        room("living", 1),
        house(0),
    )
    refused(state, room("bedroom", 1), "seat 1 already has 3 open rooms")
    state = play(state, moose("kitchen", 1, 0), moose("bathroom", 0, 0), room("bedroom", 1))
    assert [c for _, c in rooms_of(state, 1)] == ["moose", None, None, None]


# -- c: moose -------------------------------------------------------------------------

_MOOSE = [
    ["house", "room:kitchen", "moose:kitchen", "moose:living"],
    ["room:bathroom", "room:bathroom", "door", "room:bathroom"],
]
_MOOSE_DRAW = ["moose:kitchen", "moose:bathroom", "room:living", "moose:bathroom"]


def test_moose_on_an_opponent_without_a_house_card_is_refused() -> None:
    state = play(deal(2, _MOOSE, _MOOSE_DRAW), room("kitchen", 1), room("bathroom", 0))
    refused(state, moose("kitchen", 1, 0), "seat 1 has no house card")
    assert all(m.get("card") != "moose:kitchen" for m in rules.legal_moves(state))


def _moose_ready() -> State:
    """Seat 1 has a house and an open kitchen (room 0); seat 0 to play, holding moose."""
    return play(
        deal(2, _MOOSE, _MOOSE_DRAW),
        room("kitchen", 1),
        room("bathroom", 0),
        house(1),
        room("bathroom", 0),
    )


def test_moose_covers_a_matching_open_room_of_an_opponent_with_a_house() -> None:
    state = _moose_ready()
    assert moose("kitchen", 1, 0) in rules.legal_moves(state)
    state = play(state, moose("kitchen", 1, 0))
    assert rooms_of(state, 1) == [("kitchen", "moose")]
    assert rules.to_act(state) == 1


def test_moose_of_another_room_type_is_refused() -> None:
    refused(_moose_ready(), moose("living", 1, 0), "moose:living does not match room 0")


def test_moose_on_your_own_room_is_refused() -> None:
    refused(_moose_ready(), moose("kitchen", 0, 0), "only a door")


def test_moose_on_a_room_that_does_not_exist_is_refused() -> None:
    refused(_moose_ready(), moose("kitchen", 1, 1), "seat 1 has no room 1")
    refused(_moose_ready(), moose("kitchen", 1, -1), "seat 1 has no room -1")


def test_moose_on_a_room_that_has_a_moose_is_refused() -> None:
    state = play(_moose_ready(), moose("kitchen", 1, 0), room("bathroom", 0))
    refused(state, moose("kitchen", 1, 0), "room 0 of seat 1 is not open .it has a moose.")


def test_moose_on_a_room_with_a_door_is_refused() -> None:
    state = play(_moose_ready(), room("living", 1), door(0))
    refused(state, moose("kitchen", 1, 0), "room 0 of seat 1 is not open .it has a door.")


# -- d: door --------------------------------------------------------------------------


def test_door_covers_your_own_open_room_without_a_house_card() -> None:
    state = play(deal(2, _ROOMS), room("kitchen", 1), door(0))
    assert rooms_of(state, 1) == [("kitchen", "door")]


def test_door_on_an_opponents_room_is_refused() -> None:
    state = play(deal(2, _ROOMS), room("kitchen", 1))
    refused(state, {"action": "play", "card": "door", "target": 0, "room": 0}, "no target")


def test_door_on_a_room_with_a_moose_is_refused() -> None:
    state = play(_moose_ready(), moose("kitchen", 1, 0))
    refused(state, door(0), "room 0 of seat 1 is not open .it has a moose.")


def test_door_on_a_covered_or_missing_room_is_refused() -> None:
    state = play(
        deal(2, _ROOMS, ["moose:bathroom", "door"]), room("kitchen", 1), door(0), room("kitchen", 1)
    )
    refused(state, door(0), "room 0 of seat 1 is not open .it has a door.")
    refused(state, door(2), "seat 1 has no room 2")


# -- the Moose Trap -------------------------------------------------------------------

# Three seats: seat 0 sends a moose to seat 2, who holds traps; seat 1 sits between.
_TRAP = [
    ["house", "room:kitchen", "moose:kitchen", "moose:kitchen"],
    ["room:living"] * 4,
    ["trap", "room:bedroom", "room:bedroom", "trap"],
]
_TRAP_DRAW = ["moose:bathroom"] * 5 + ["moose:bedroom", "moose:living", "door", "house"]


def _trap_pending() -> State:
    """Seat 0 has just played moose:kitchen on room 0 of seat 2, who holds a trap."""
    return play(
        deal(3, _TRAP, _TRAP_DRAW),
        house(2),
        room("living", 0),
        room("bedroom", 1),
        room("kitchen", 2),
        room("living", 0),
        room("bedroom", 1),
        moose("kitchen", 2, 0),
    )


def test_moose_on_a_trap_holder_waits_for_the_victims_answer() -> None:
    state = _trap_pending()
    assert rules.to_act(state) == 2
    assert rules.phase(state) == "answer"
    assert rules.legal_moves(state) == [TRAP, ALLOW]
    assert rules.view(state, 1)["pending"] == {
        "seat": 2,
        "attacker": 0,
        "room": 0,
        "card": "moose:kitchen",
    }


def test_trap_sends_moose_then_trap_to_the_discard_pile() -> None:
    before = _trap_pending()
    state = play(before, TRAP)
    assert state.discard == [*before.discard, "moose:kitchen", "trap"]


def test_trapped_room_stays_open() -> None:
    state = play(_trap_pending(), TRAP)
    assert rooms_of(state, 2) == [("kitchen", None)]


def test_trap_victim_draws_exactly_one_card_from_the_top() -> None:
    before = _trap_pending()
    state = play(before, TRAP)
    expected = Counter(before.hands[2]) - Counter(["trap"]) + Counter(["door"])
    assert Counter(state.hands[2]) == expected
    pile = rules.view(state, None)["draw_pile"]
    # One for the victim, one for the next seat's normal turn.
    assert pile == rules.view(before, None)["draw_pile"] - 2


def test_allow_leaves_the_moose_on_the_room() -> None:
    before = _trap_pending()
    state = play(before, ALLOW)
    assert rooms_of(state, 2) == [("kitchen", "moose")]
    assert state.discard == before.discard
    assert Counter(state.hands[2]) == Counter(before.hands[2])


@pytest.mark.parametrize("answer", [TRAP, ALLOW])
def test_after_the_answer_play_goes_on_to_the_attackers_left(answer: dict) -> None:
    state = play(_trap_pending(), answer)
    assert rules.to_act(state) == 1
    assert rules.phase(state) == "normal"
    assert len(state.hands[1]) == 5


def test_the_answer_is_not_a_turn_of_the_victim() -> None:
    # Two seats: the victim is the attacker's left, so it still gets its own turn.
    hands = [
        ["house", "room:kitchen", "moose:kitchen", "room:living"],
        ["trap", "door", "room:bedroom", "room:bedroom"],
    ]
    draw = ["house", "moose:living", "house", "moose:living", "house", "door", "room:living"]
    state = play(
        deal(2, hands, draw),
        house(1),
        room("bedroom", 0),
        room("kitchen", 1),
        room("bedroom", 0),
        moose("kitchen", 1, 0),
        TRAP,
    )
    assert rules.to_act(state) == 1
    assert rules.phase(state) == "normal"
    assert Counter(state.hands[1]) == Counter(
        ["door", "moose:living", "moose:living", "door", "room:living"]
    )
    state = play(state, door(0))
    assert rules.to_act(state) == 0


def test_no_answer_step_when_the_victim_holds_no_trap() -> None:
    hands = [_TRAP[0], _TRAP[1], ["room:bedroom"] * 4]
    state = play(
        deal(3, hands, _TRAP_DRAW),
        house(2),
        room("living", 0),
        room("bedroom", 1),
        room("kitchen", 2),
        room("living", 0),
        room("bedroom", 1),
        moose("kitchen", 2, 0),
    )
    assert rules.phase(state) == "normal"
    assert rules.to_act(state) == 1
    assert rooms_of(state, 2) == [("kitchen", "moose")]


def test_only_trap_or_allow_while_a_moose_waits_for_its_answer() -> None:
    state = _trap_pending()
    refused(state, room("bedroom", 0), "seat 2 must answer the moose")
    refused(state, discard("trap"), "seat 2 must answer the moose")
    refused(state, PASS, "seat 2 must answer the moose")


def test_the_attacker_cannot_answer_for_the_victim() -> None:
    refused(_trap_pending(), {"action": "trap", "seat": 0}, "it is seat 2's move, not seat 0's")


def test_trap_or_allow_without_a_moose_to_answer_is_refused() -> None:
    state = deal(3, _TRAP, _TRAP_DRAW)
    refused(state, TRAP, "no moose to answer")
    refused(state, ALLOW, "no moose to answer")


def test_trap_is_never_played_as_an_action() -> None:
    state = play(deal(3, _TRAP, _TRAP_DRAW), house(2), room("living", 0))
    refused(state, {"action": "play", "card": "trap", "target": 0}, "never played")
    assert all(m.get("card") != "trap" for m in rules.legal_moves(state))


def test_trap_in_the_end_phase_draws_nothing_and_play_goes_on() -> None:
    before = play(_emptying(trap_for_seat_1=True), *EMPTYING_END[:3])
    assert rules.to_act(before) == 1 and not before.draw
    state = play(before, TRAP)
    assert Counter(state.hands[1]) == Counter(before.hands[1]) - Counter(["trap"])
    assert state.discard[-2:] == ["moose:living", "trap"]
    assert rules.phase(state) == "end" and rules.to_act(state) == 1
    assert rooms_of(state, 1)[5] == ("living", None)


def test_trap_in_the_end_phase_of_seeded_games_draws_nothing() -> None:
    before = find_position(lambda s: rules.phase(s) == "answer" and not s.draw)
    victim, attacker = rules.to_act(before), before.turn
    state = play(before, TRAP)
    assert len(state.hands[victim]) == len(before.hands[victim]) - 1
    assert state.discard[-2:] == [before.pending[2], "trap"]
    assert state.over or rules.to_act(state) == (attacker + 1) % state.n


# -- e, f: discard, pass, and the duty to play ----------------------------------------

_DEAD = [["moose:kitchen", "moose:living", "trap", "moose:living"], ["room:bedroom"] * 4]


def test_a_seat_with_a_play_must_play() -> None:
    state = deal(2, [["room:kitchen", "moose:living", "moose:living", "trap"], []])
    assert rules.legal_moves(state) == [room("kitchen", 1)]
    refused(state, discard("trap"), "a card can be played, so discarding is not allowed")


def test_discard_is_allowed_when_nothing_can_be_played() -> None:
    state = deal(2, _DEAD, ["moose:bathroom"])
    assert rules.legal_moves(state) == [
        discard(c) for c in ("moose:bathroom", "moose:kitchen", "moose:living", "trap")
    ]
    state = play(state, discard("trap"))
    assert state.discard == ["trap"]
    assert Counter(state.hands[0]) == Counter(_DEAD[0]) - Counter(["trap"]) + Counter(
        ["moose:bathroom"]
    )


def test_discard_of_a_card_not_held_is_refused() -> None:
    refused(deal(2, _DEAD, ["moose:bathroom"]), discard("door"), "seat 0 holds no door")


def test_pass_in_a_normal_turn_is_refused() -> None:
    state = deal(2, _DEAD, ["moose:bathroom"])
    refused(state, PASS, "passing is only allowed in the end phase")
    assert PASS not in rules.legal_moves(state)


def test_the_turn_that_draws_the_last_card_is_a_normal_turn() -> None:
    state = find_position(lambda s: not s.over and not s.pending and s.drew and not s.draw)
    assert rules.phase(state) == "normal"
    refused(state, PASS, "passing is only allowed in the end phase")
    state = find_position(
        lambda s: not s.over and not s.pending and s.drew and not s.draw and not plays_of(s, s.turn)
    )
    moves = rules.legal_moves(state)
    assert moves and all(m["action"] == "discard" for m in moves)


def test_end_phase_turns_draw_nothing() -> None:
    state = _emptying()
    assert rules.phase(state) == "end" and rules.view(state, None)["draw_pile"] == 0
    assert [len(h) for h in state.hands] == [4, 4]
    state = play(state, EMPTYING_END[0])
    assert rules.phase(state) == "end" and rules.to_act(state) == 1
    assert [len(h) for h in state.hands] == [3, 4]


def test_pass_in_the_end_phase_only_without_a_play() -> None:
    state = find_position(lambda s: rules.phase(s) == "end" and not plays_of(s, s.turn))
    assert rules.legal_moves(state) == [PASS]
    after = play(state, PASS)
    assert after.discard == state.discard and after.hands == state.hands


def test_pass_in_the_end_phase_with_a_play_is_refused() -> None:
    state = find_position(lambda s: rules.phase(s) == "end" and plays_of(s, s.turn))
    refused(state, PASS, "a card can be played, so passing is not allowed")
    assert PASS not in rules.legal_moves(state)


def test_discard_in_the_end_phase_is_refused() -> None:
    state = find_position(
        lambda s: rules.phase(s) == "end" and not plays_of(s, s.turn) and bool(s.hands[s.turn])
    )
    refused(state, discard(state.hands[state.turn][0]), "no discarding in the end phase")


# -- the end of the game ---------------------------------------------------------------


def _emptying(*, trap_for_seat_1: bool = False) -> State:
    deck, moves = emptying_game(trap_for_seat_1=trap_for_seat_1)
    return play(rules.new_game(2, deck=deck, dealer=1), *moves)


def test_game_ends_when_every_hand_is_empty() -> None:
    state = _emptying()
    assert rules.phase(state) == "end"
    for move in EMPTYING_END:
        assert not state.over
        state = play(state, move)
    assert state.hands == [[], []]
    assert rules.is_over(state) and rules.to_act(state) is None
    assert rules.legal_moves(state) == []


def test_game_ends_when_the_pile_is_empty_and_no_seat_can_play() -> None:
    state = find_position(lambda s: s.over and any(s.hands))
    assert not state.draw
    assert all(not plays_of(state, k) for k in range(state.n))


def test_game_does_not_end_while_another_seat_can_still_play() -> None:
    state = find_position(
        lambda s: (
            rules.phase(s) == "end"
            and not plays_of(s, s.turn)
            and any(plays_of(s, k) for k in range(s.n))
        )
    )
    after = play(state, PASS)
    assert not after.over
    assert rules.to_act(after) == (state.turn + 1) % state.n


def test_game_ends_exactly_when_rules_say_in_seeded_games() -> None:
    for seed in range(40):
        for n in (2, 4, 6):
            for state, _ in random_game(n, seed):
                no_play = not state.draw and not any(plays_of(state, k) for k in range(n))
                if state.over:
                    assert not any(state.hands) or no_play
                elif not state.pending and not state.drew:
                    # A turn of the end phase: the last action left a play somewhere.
                    assert any(state.hands) and not no_play


def test_no_move_is_accepted_after_the_game_is_over() -> None:
    state = find_position(lambda s: s.over)
    refused(state, PASS, "the game is over")


# -- scores and winners ---------------------------------------------------------------


def test_score_counts_moose_rooms_and_moose_cards_left_in_hand() -> None:
    hands = [
        ["house", "room:kitchen", "moose:kitchen", "moose:living"],
        ["room:bedroom", "room:bedroom", "moose:bedroom", "room:bedroom"],
    ]
    state = play(
        deal(2, hands, ["house"] * 6),
        house(1),
        room("bedroom", 0),
        room("kitchen", 1),
        room("bedroom", 0),
        moose("kitchen", 1, 0),
    )
    assert rules.scores(state) == [1, 2]  # seat 0: moose:living; seat 1: a moose room + a card


def _finished(wanted) -> State:  # type: ignore[no-untyped-def]
    return find_position(lambda s: s.over and wanted(rules.scores(s), rules.doors(s)))


def test_door_tie_break_in_the_scripted_game() -> None:
    state = play(_emptying(), *EMPTYING_END)
    assert rules.scores(state) == [3, 3]
    assert rules.doors(state) == [3, 2]
    assert rules.winners(state) == [0]


def test_lowest_score_wins() -> None:
    state = _finished(lambda sc, ds: sc.count(min(sc)) == 1)
    sc = rules.scores(state)
    assert rules.winners(state) == [sc.index(min(sc))]
    assert rules.view(state, None)["winners"] == rules.winners(state)


def test_a_tie_goes_to_the_seat_with_more_doors() -> None:
    def tie_broken(sc: list[int], ds: list[int]) -> bool:
        tied = [k for k, v in enumerate(sc) if v == min(sc)]
        return len(tied) > 1 and len({ds[k] for k in tied}) > 1

    state = _finished(tie_broken)
    sc = rules.scores(state)
    ds = [
        sum(1 for r in h["rooms"] if r["cover"] == "door")
        for h in rules.view(state, None)["houses"]
    ]
    tied = [k for k in range(state.n) if sc[k] == min(sc)]
    most = max(ds[k] for k in tied)
    assert rules.winners(state) == [k for k in tied if ds[k] == most]
    assert len(rules.winners(state)) < len(tied)


def test_a_tie_in_score_and_doors_is_a_shared_win() -> None:
    def shared(sc: list[int], ds: list[int]) -> bool:
        tied = [k for k, v in enumerate(sc) if v == min(sc)]
        return len(tied) > 1 and len({ds[k] for k in tied}) == 1

    state = _finished(shared)
    sc = rules.scores(state)
    assert rules.winners(state) == [k for k in range(state.n) if sc[k] == min(sc)]
    assert len(rules.winners(state)) > 1


def test_there_are_no_winners_before_the_end() -> None:
    assert rules.winners(rules.new_game(3, seed=1)) == []


# -- who may see what -----------------------------------------------------------------


def test_view_shows_your_hand_and_hides_the_others_and_the_deck_order() -> None:
    hands = [["house", "door", "trap", "moose:kitchen"], ["room:living"] * 4]
    one = deal(2, hands, ["room:bedroom", "room:kitchen"])
    # Swap a card of seat 0's hand with one deep in the pile: seat 1 must not notice.
    deck = stacked_deck(2, hands, ["room:bedroom", "room:kitchen"])
    far = next(i for i in range(20, 58) if deck[i] not in hands[0])
    deck[0], deck[far] = deck[far], deck[0]
    # ...nor a change in the order of the pile, its next card included.
    deck[9], deck[far + 1] = deck[far + 1], deck[9]
    assert deck[9] != stacked_deck(2, hands, ["room:bedroom", "room:kitchen"])[9]
    two = rules.new_game(2, deck=deck, dealer=1)
    assert one.hands[0] != two.hands[0] and one.draw != two.draw
    assert rules.view(one, 1) == rules.view(two, 1)
    assert rules.view(one, None) == rules.view(two, None)
    assert rules.view(one, 0) != rules.view(two, 0)
    assert rules.view(one, 1)["hand"] == ["room:living"] * 4
    assert "hand" not in rules.view(one, None)
    assert "moose:kitchen" not in json.dumps(rules.view(one, 1))


def test_view_shows_scores_only_once_the_game_is_over() -> None:
    state = rules.new_game(2, seed=5)
    assert "scores" not in rules.view(state, 0)
    over = find_position(lambda s: s.over)
    assert rules.view(over, 0)["scores"] == rules.scores(over)


@pytest.mark.parametrize("seat", [3, -1, True, "0"])
def test_view_of_a_seat_outside_the_table_is_refused(seat: object) -> None:
    with pytest.raises(ValueError, match=f"seat {seat!r} is not at this table"):
        rules.view(rules.new_game(3, seed=1), seat)  # type: ignore[arg-type]


# -- the seat field and the shape of moves --------------------------------------------


def test_a_move_naming_another_seat_is_refused() -> None:
    state = deal(2, _ROOMS)
    refused(state, {**room("kitchen", 1), "seat": 1}, "it is seat 0's move, not seat 1's")
    state = play(state, {**room("kitchen", 1), "seat": 0})
    assert rooms_of(state, 1) == [("kitchen", None)]


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        ({"action": "play", "card": "room:garage", "target": 1}, "unknown card code"),
        ({"action": "jump"}, "unknown action"),
        ({"action": "play", "card": "room:kitchen", "target": 1, "why": 1}, "unknown move field"),
        ({"action": "play", "card": "room:kitchen"}, "'target' is required"),
        ({"action": "play", "card": "room:kitchen", "target": "1"}, "must be an integer"),
        ({"action": "play", "card": "room:kitchen", "target": 1, "room": 0}, "takes no room"),
        ({"action": "pass", "card": "trap"}, "takes no card"),
        (["play"], "a move must be a map"),
        ({"action": ["play"]}, "unknown action"),  # unhashable: once a TypeError
        ({"action": {"play": 1}}, "unknown action"),
        ({"action": "discard", "card": "trap", "target": 1}, "'discard' takes no target"),
        ({"action": "play", "card": "door", "room": True}, "must be an integer, not True"),
    ],
)
def test_malformed_moves_are_refused_with_a_reason(move: object, reason: str) -> None:
    refused(deal(2, _ROOMS), move, reason)  # type: ignore[arg-type]


def test_a_card_not_in_hand_cannot_be_played() -> None:
    refused(deal(2, _ROOMS), house(1), "seat 0 holds no house")


def test_apply_never_changes_its_argument() -> None:
    # Snapshots taken as the games go, so that a leak cannot reach them in advance.
    games = (State.from_dict(s.to_dict()) for n in (2, 5) for s, _ in random_game(n, seed=n))
    positions = [_trap_pending(), *games]
    for state in positions:
        snapshot = copy.deepcopy(state.to_dict())
        for move in rules.legal_moves(state):
            play(state, move)
        assert state.to_dict() == snapshot


def test_state_survives_a_round_trip_through_plain_data() -> None:
    state = _trap_pending()
    data = json.loads(json.dumps(state.to_dict()))
    assert State.from_dict(data) == state
    assert rules.legal_moves(State.from_dict(data)) == rules.legal_moves(state)


def test_every_public_name_of_rules_exists_and_is_listed():
    # Other modules use these; __all__ must name exactly what the module offers.
    names = set(rules.__all__)
    assert {"phase", "doors", "cards_in_play", "check_deck"} <= names
    for name in names:
        assert hasattr(rules, name), name
    defined = {
        name
        for name, value in vars(rules).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == rules.__name__
    }
    assert defined <= names, "functions and classes of rules missing from __all__"
