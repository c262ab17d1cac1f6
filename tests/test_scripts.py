"""Each script's call builds the KEYS and ARGV its Lua reads, in one slot."""

from __future__ import annotations

import dataclasses
import importlib
import re
from importlib import resources
from typing import Any

import pytest
from redis.crc import key_slot

from moose_server import accounts, arenas, deals, limits, matchmaking, social, tables
from moose_server.accounts.calls import (
    AccountClaimCall,
    HistoryCall,
    PasswordUpgradeCall,
    RateCall,
    RatedSeat,
)
from moose_server.arenas.calls import (
    ArenaCreateCall,
    ArenaFinishCall,
    ArenaMemberCall,
    ArenaScoreCall,
    ArenaSeatCall,
    ArenaStartedCall,
)
from moose_server.deals.calls import DealCloseCall, DealOpenCall, DealSeedCall
from moose_server.limits.calls import HoldCall, SessionsCall
from moose_server.matchmaking.calls import (
    AddBotCall,
    BotsCall,
    CreateTableCall,
    EnqueueCall,
    ForgetCall,
    FormCall,
    JoinTableCall,
    LeaveCall,
    LeaveTableCall,
    MatchCall,
    RangeCall,
    SeekCall,
    StartedCall,
    StartTableCall,
    TableCall,
)
from moose_server.social.calls import BoundedAddCall, ChatCall, FollowedCall
from moose_server.storage import scripts
from moose_server.storage.keys import (
    CHAT_CHANNEL,
    GUESTS_KEY,
    GameKeys,
    blocks_key,
    chat_key,
    history_key,
    hold_key,
    limit_key,
    listed_key,
    profile_key,
    sessions_key,
    top_key,
    wake_channel,
)
from moose_server.storage.scripts import (
    ClaimCall,
    CommitCall,
    DeferCall,
    FollowCall,
    LimitCall,
    LiveAddCall,
    LiveRemoveCall,
    OnlineCall,
    SpareCall,
)
from moose_server.tables.calls import InviteAnswerCall, InviteOfferCall

# Each feature keeps its scripts in its own package (<package>/lua/*.lua) and their
# calls beside them (<package>/calls.py); storage/ keeps its own.
FEATURES = (accounts, arenas, deals, limits, matchmaking, social, tables)
CALLS = (
    *scripts.CALLS,
    *(c for f in FEATURES for c in importlib.import_module(f"{f.__name__}.calls").CALLS),
)
LUA = [p / "lua" for p in resources.files("moose_server").iterdir() if (p / "lua").is_dir()]
PARTS = {"mm_lib", "mm_end", "arena_lib"}  # the scripts' preludes and epilogue

SEAT = RatedSeat("p_1", "ann", False, 0.5, 0.9, "{}")
RATE = dict(
    game="g_1",
    marker_ttl=60,
    history_size=100,
    guest_ttl_ms=1000,
    provisional_games=5,
    base=1500,
    scale=10,
    base_ordinal=0,
    spread=3,
    mu=25,
    sigma=8.3,
)
COMMIT = dict(game="g_1", expected=3, data=b"d", deadline_ms=1000)
# One call of each script with nothing in its variable part (events, seats, games).
SAMPLES: list[Any] = [
    CommitCall(**COMMIT, events=[]),
    ClaimCall(bucket=3, lease_ms=5000, limit=100, outage_ms=1000, grace_ms=5000),
    DeferCall("g_1", 5000),
    SpareCall("g_1", 7, 1000, 5000),
    FollowCall(wake_channel("i_1")),
    LimitCall(limit_key("code", "player", "p_1"), interval_ms=6000, burst=10),
    LiveAddCall("g_1", b"summary", 1000),
    LiveRemoveCall(()),
    OnlineCall("i_1", 12, 30_000),
    RateCall(**RATE, seats=[]),
    HistoryCall("g_1", [], 3600, 100, 86_400_000),
    AccountClaimCall("p_1", "ann", "Ann", "scrypt$...", False, 0),
    PasswordUpgradeCall("p_1", "scrypt$16384$...", "scrypt$131072$..."),
    EnqueueCall("p_1", "{}", 4),
    LeaveCall("p_1"),
    RangeCall("p_1", 2, 6),
    BotsCall("p_1", 3, 20_000_000),
    FormCall(0, 0, 128, 30_000_000, 100.0, 100.0, 8),
    ForgetCall("i_1"),
    CreateTableCall("ABCDEFGH", "p_1", "ann", 4, 1000, True, False),
    JoinTableCall("ABCDEFGH", "p_2", "bob", 1000, False),
    AddBotCall("ABCDEFGH", "p_1", "greedy", 1000),
    LeaveTableCall("ABCDEFGH", "p_2", 1000),
    StartTableCall("ABCDEFGH", "p_1", 1000),
    StartedCall("nonce:1"),
    TableCall("ABCDEFGH"),
    SeekCall("p_1", "ann", 3, 604_800_000),
    HoldCall(hold_key("games", "192.0.2.1"), "take", "g_1", 100, 86_400_000),
    SessionsCall(sessions_key("192.0.2.1"), "enter", "i_1/ab", 20, 10_000),
    DealOpenCall(GameKeys.of("g_1", 16), b"data", 1000, 86400, ()),
    DealSeedCall(GameKeys.of("g_1", 16), 1, "alice likes moose", "nonce"),
    DealCloseCall(GameKeys.of("g_1", 16)),
    InviteOfferCall("c_1", "p_1", "{}", 60_000, 3, 60_000),
    InviteAnswerCall("c_1", "p_1", "accept", "p_2", "", "g_1"),
    ArenaCreateCall("a_1", "Bots", "bots", 2, 4, 0, 60_000, False, "ops"),
    ArenaMemberCall("a_1", "p_1", "join", "{}"),
    ArenaSeatCall("a_1", 5000, 64),
    ArenaStartedCall("a_1", "a:a_1:1"),
    ArenaScoreCall("a_1", "g_1", "{}"),
    ArenaFinishCall("a_1", False, 86400),
    BoundedAddCall(blocks_key("p_1"), "p_2", "bob", 200, 1000),
    FollowedCall(("p_1",)),  # a cluster's: one player's keys, no names
    ChatCall(
        chat_key("g_1", "players", 16),
        GameKeys.of("g_1", 16).events,
        CHAT_CHANNEL,
        "g_1",
        "players",
        b"line",
        100,
        1000,
    ),
]


def build(call: Any) -> tuple[list[str], list[Any]]:
    """KEYS and ARGV of any call, as its caller builds them."""
    if isinstance(call, CommitCall | DeferCall | SpareCall):
        return call.build(GameKeys.of(call.game, 16))
    if isinstance(call, FollowCall):
        return call.build(GameKeys.of("g_1", 16))
    if isinstance(call, MatchCall):
        return call.build("nonce")
    return call.build()


def read(name: str, text: str) -> set[int]:
    """The KEYS or ARGV indices a script reads by a number (not those it computes)."""
    return {int(i) for i in re.findall(rf"\b{name}\[(\d+)\]", text)}


def test_every_script_has_one_call_and_every_call_a_script():
    files = {p.name.removesuffix(".lua") for d in LUA for p in d.iterdir() if p.suffix == ".lua"}
    assert sorted(c.SCRIPT for c in CALLS) == sorted(files - PARTS)
    assert sorted(type(s).__name__ for s in SAMPLES) == sorted(c.__name__ for c in CALLS)


@pytest.mark.parametrize("call", SAMPLES, ids=lambda c: type(c).SCRIPT)
def test_a_call_gives_each_key_and_argument_its_script_reads(call):
    keys, argv = build(call)
    text = scripts.source(call.SCRIPT)
    if "#KEYS" in text:  # reads them all, however many
        assert not read("KEYS", text)
    else:
        assert max(read("KEYS", text)) == len(keys)
    if "unpack(ARGV)" in text:  # reads them all, however many
        assert not read("ARGV", text)
    else:
        assert max(read("ARGV", text)) == len(argv)
        assert read("ARGV", text) == set(range(1, len(argv) + 1))


@pytest.mark.parametrize("call", SAMPLES, ids=lambda c: type(c).SCRIPT)
def test_the_keys_of_one_call_share_one_cluster_slot(call):
    keys, _ = build(call)
    assert len({key_slot(k.encode()) for k in keys}) == 1


MATCH_SAMPLES = [c for c in SAMPLES if isinstance(c, MatchCall)]


@pytest.mark.parametrize("call", MATCH_SAMPLES, ids=lambda c: type(c).SCRIPT)
def test_a_matchmaking_call_sends_the_nonce_then_its_fields_in_order(call):
    _, argv = build(call)
    fields = [getattr(call, f.name) for f in dataclasses.fields(call)]
    if isinstance(call, StartedCall):  # its keys after the first are arguments of their own
        fields = [call.key, *call.more]
    assert argv == ["nonce", *(int(v) if isinstance(v, bool) else v for v in fields)]


def test_the_tables_of_one_round_are_forgotten_in_one_call():
    _, argv = build(StartedCall("nonce:1", ("nonce:2", "nonce:3")))
    assert argv == ["nonce", "nonce:1", "nonce:2", "nonce:3"]
    assert "for i = 3, #ARGV do" in scripts.source("mm_started")


def test_a_commit_sends_three_arguments_per_event_where_commit_lua_reads_them():
    text = scripts.source("commit")
    assert "ARGV[16 + 3 * i], ARGV[17 + 3 * i]" in text and "ARGV[18 + 3 * i]" in text
    events = [({"kind": "move"}, {"turn": 1}), ({"kind": "move"}, None), (b"packed", b"s")]
    _, argv = build(CommitCall(**COMMIT, events=events, auto=True))
    assert argv[10] == len(events) and len(argv) == 18 + 3 * len(events)
    # No step published: wake-ups only; not compacted; no follower listed; TIME read.
    assert argv[13:18] == [b"", b"", 0, b"", 0]
    assert argv[18:] == [
        b"\x81\xa4kind\xa4move",
        b"\x81\xa4turn\x01",
        1,
        b"\x81\xa4kind\xa4move",
        b"",
        1,
        b"packed",
        b"s",
        1,
    ]
    _, argv = build(CommitCall(**COMMIT, events=events, autos=(True, True, False)))
    assert argv[18 + 2 :: 3] == [1, 1, 0]  # each event's own
    assert build(CommitCall(**COMMIT, events=events, compact=True))[1][15] == 1
    keys, argv = build(CommitCall(**COMMIT, events=events, step=b"the step"))
    assert argv[13:15] == [GameKeys.of("g_1", 16).steps, b"the step"]
    assert key_slot(argv[13] + b"i_1") == key_slot(keys[0].encode())  # the game's shard


def test_a_commit_keeps_the_stream_its_grace_at_most_its_ttl():
    _, going_on = build(CommitCall(**COMMIT, events=[], grace_ms=60_000))
    _, over = build(CommitCall(**COMMIT, events=[], ttl=10, grace_ms=60_000))
    assert (going_on[6], going_on[7]) == (0, 0) and (over[6], over[7]) == (10, 10_000)


def test_a_rating_sends_a_profile_and_history_and_six_arguments_per_seat():
    text = scripts.source("rate")
    assert "KEYS[5 + 2 * i], KEYS[6 + 2 * i]" in text and "local a = 12 + (i - 1) * 6" in text
    seats = [SEAT, dataclasses.replace(SEAT, player="p_2", bot=True)]
    keys, argv = build(RateCall(**RATE, seats=seats))
    assert keys[6:] == [k for s in seats for k in (profile_key(s.player), history_key(s.player))]
    assert argv[10] == len(seats) and len(argv) == 12 + 6 * len(seats)
    assert argv[18:] == ["p_2", "ann", 1, "0.5", "0.9", "{}"]


@pytest.mark.parametrize("pool", ["realtime", "correspondence"])
def test_a_rating_writes_its_pool_s_fields_and_boards(pool):
    keys, argv = build(RateCall(**RATE, seats=[SEAT], pool=pool))
    other = "correspondence" if pool == "realtime" else "realtime"
    assert keys[1:6] == [
        top_key("humans", pool),
        top_key("bots", pool),
        GUESTS_KEY,
        top_key("humans", other),
        top_key("bots", other),
    ]
    assert argv[11] == ("c" if pool == "correspondence" else "")


def test_history_sends_each_player_s_keys_and_entry():
    keys, argv = build(HistoryCall("g_1", [("p_1", '{"a": 1}'), ("p_2", "{}")], 3600, 100, 9))
    assert keys == [
        listed_key("g_1"),
        profile_key("p_1"),
        history_key("p_1"),
        profile_key("p_2"),
        history_key("p_2"),
    ]
    assert argv == [3600, 100, 9, 2, '{"a": 1}', "{}"]


def test_live_remove_sends_the_games_as_argv():
    assert build(LiveRemoveCall(("g_1", "g_2")))[1] == ["g_1", "g_2"]
