"""The hub's bounded per-game logs: what they hold, what they serve, what they drop."""

from __future__ import annotations

from moose import rules
from moose_server.play.copies import COPIED_GAMES, Copies
from moose_server.play.recent import LOGGED_GAMES, RECENT_EVENTS, GameLog, Recent
from moose_server.settings import Settings
from moose_server.storage.store import Entry

STATE = rules.new_game(2, seed=1)
SNAPSHOT = {**STATE.to_dict(), "auto": False}


def entries(first: int, last: int, time: int = 1) -> list[Entry]:
    """Stream entries of seqs first..last, all of Redis time `time`."""
    return [
        Entry(seq, {"kind": "move"}, SNAPSHOT, 0, time, STATE) for seq in range(first, last + 1)
    ]


def seqs(events: list | None) -> list[int] | None:
    return None if events is None else [p.seq for p in events]


def test_a_log_holds_the_last_events_in_a_row_at_most_recent_events() -> None:
    log = GameLog()
    for first in range(1, 3 * RECENT_EVENTS, 5):
        log.add("g", entries(first, first + 4))
    last = log.latest
    assert seqs(log.events) == list(range(last - RECENT_EVENTS + 1, last + 1))


def test_a_late_subscriber_is_served_from_the_log_only_when_it_holds_every_event_it_lacks() -> None:
    log = GameLog()
    log.add("g", entries(1, 5))
    assert seqs(log.since(0)) == [1, 2, 3, 4, 5]  # joined after the deal: no stream read
    assert seqs(log.since(3)) == [4, 5]
    assert seqs(log.since(5)) == []
    log.latest = 7  # a wake-up of seq 7: the log does not hold 6 and 7
    assert log.since(3) is None  # read the stream, never stop short of seq 7
    log.add("g", entries(6, 7))
    log.forget(4)  # every local socket has 1-4
    assert seqs(log.events) == [5, 6, 7]
    assert log.since(2) is None  # behind the first event held: read the stream
    assert seqs(log.range(4, 6)) == [5, 6]


def test_an_older_read_added_after_newer_commits_keeps_the_row_that_ends_with_the_newest() -> None:
    log = GameLog()
    log.add("g", entries(5, 8))
    held = log.at(6)
    ready = log.add("g", entries(2, 6))  # a stream read that started before the commits
    assert seqs(ready) == [2, 3, 4, 5, 6]
    assert ready[-1] is held  # an event held already is used as it is
    assert seqs(log.events) == [2, 3, 4, 5, 6, 7, 8]
    log.add("g", entries(20, 21))  # a gap: only the newest row is kept
    assert seqs(log.events) == [20, 21]
    assert log.at(8) is None and log.at(21) is not None


def test_an_event_read_again_with_another_time_starts_the_log_again() -> None:
    """Redis lost its last writes: seq 4 now is another event than the one held."""
    log = GameLog()
    log.add("g", entries(1, 6, time=100))
    ready = log.add("g", entries(3, 4, time=200))  # the stream as it is now
    assert seqs(log.events) == [3, 4] and seqs(ready) == [3, 4]
    assert [p.entry.time for p in log.events] == [200, 200]
    assert log.latest == 4  # seqs 5 and 6 are no longer heard of
    assert seqs(log.since(2)) == [3, 4]


def test_recent_drops_the_least_recently_used_game_past_recent_games() -> None:
    recent = Recent()
    for k in range(LOGGED_GAMES):
        recent.log(f"g_{k}").add(f"g_{k}", entries(1, 1))
    recent.log("g_0")  # used again: g_1 is now the least recently used
    recent.log("g_new")
    assert len(recent) == LOGGED_GAMES
    assert recent.get("g_1") is None
    assert recent.get("g_0") is not None and seqs(recent.get("g_0").events) == [1]
    recent.drop("g_0")
    assert recent.get("g_0") is None
    recent.clear()
    assert len(recent) == 0


def test_recent_holds_as_many_games_as_it_is_sized_for() -> None:
    # An instance sizes it to its sockets (app.py: one game per two sockets).
    recent = Recent(LOGGED_GAMES * 3)
    for k in range(LOGGED_GAMES * 3 + 1):
        recent.log(f"g_{k}")
    assert len(recent) == LOGGED_GAMES * 3
    assert recent.get("g_0") is None and recent.get("g_1") is not None


def test_games_keep_one_game_per_two_sockets_and_never_fewer_than_before() -> None:
    assert Copies(Settings(max_sockets=30_000)).size == 15_000
    assert Copies(Settings(max_sockets=100)).size == COPIED_GAMES
