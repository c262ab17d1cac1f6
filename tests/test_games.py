"""Games without sockets: bots play whole games, records replay, errors, away and back."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from moose import rules, search
from moose.search import SearchBot
from moose_server.play.game import GameError
from moose_server.play.games import Games
from moose_server.play.seats import Seat
from moose_server.play.streams import read_events
from moose_server.settings import Settings
from moose_server.storage.codec import pack
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import move_field
from moose_server.storage.store import Entry, Store, connect

from helpers import open_games, replay


@pytest.fixture
async def games(redis_url: str) -> Any:
    """Games over the test Redis (an hour per turn: no timeouts here)."""
    async with open_games(redis_url, turn_time=3600) as games:
        yield games


async def finished(games: Games, game_id: str) -> Any:
    """The game once it is over (bots play in a background task)."""
    async with asyncio.timeout(30):
        while not (game := await games.load(game_id)).state.over:
            await asyncio.sleep(0.01)
    return game


@pytest.mark.parametrize("bots", [("greedy", "random"), ("cautious", "greedy", "random", "x")])
async def test_bots_play_a_whole_game_and_the_record_replays(games, bots):
    seats = [Seat(None, f"b{i}", name) for i, name in enumerate(bots)]  # "x": unknown, greedy plays
    game = await finished(games, (await games.create(seats)).id)
    record = await games.record(game.id)
    final = replay(record)
    assert final == game.state
    assert record["result"] == {"scores": rules.scores(final), "winners": rules.winners(final)}
    entries = await games.store.events(game.id)
    assert [e.seq for e in entries] == list(range(1, game.version + 1))
    kinds = [e.event["kind"] for e in entries]
    assert (
        kinds[0] == "start" and kinds[-1] == "over" and kinds.count("move") == len(record["moves"])
    )
    assert {e.event["auto"] for e in entries if e.event["kind"] == "move"} <= {"bot", "forced"}


class Heard:
    """A listener of Games: every entry of every commit, in order."""

    def __init__(self) -> None:
        self.commits: list[list[Entry]] = []

    def committed(self, game: str, entries: list[Entry]) -> None:
        self.commits.append(entries)


async def test_a_forced_pass_is_played_in_the_step_before_it_and_reads_back_the_same(redis_url):
    heard = Heard()
    client = connect(redis_url, 8)
    gw = await open_redis(redis_url, 8)
    games = Games(Store(gw, 16), Settings(redis_url=redis_url, turn_time=3600), listeners=[heard])
    players = [f"p_{k}" for k in range(4)]
    folded = 0
    try:
        for seed in range(3):  # people only: the server plays nothing but forced passes
            game = await games.create([Seat(p, p, None) for p in players], seed=seed)
            while not game.state.over:
                assert game.auto_kind() is None  # no forced seat is ever left to act
                player, legal = players[rules.to_act(game.state)], game.legal
                version = game.version
                seq = await games.move(game.id, player, legal[len(legal) // 2], version)
                game = await games.load(game.id)  # no wait: the passes came in the same step
                step = heard.commits[-1]
                assert [e.seq for e in step] == list(range(seq, game.version + 1))
                passes = [e for e in step if e.event.get("auto") == "forced"]
                folded += len(passes)
                for entry in step:  # before the step's last state, a forced seat acts
                    if entry.parsed is not step[-1].parsed:
                        assert entry.state["auto"] is True and entry.legal is None
            # Every entry as the stream gives it back (snapshots every 8 events, the
            # states between rebuilt) is the entry the hub had at the commit: its state
            # packed (a commit's holds the rules state's tuples, `State.to_dict(copy=False)`).
            told = {e.seq: e for step in heard.commits for e in step}
            stream = await read_events(games.store, game.id)
            assert [e.seq for e in stream] == sorted(told) == list(range(1, game.version + 1))
            for entry in stream:
                was = told[entry.seq]
                assert (entry.event, pack(entry.state), entry.deadline) == (
                    was.event,
                    pack(was.state),
                    was.deadline,
                ), entry.seq
            heard.commits.clear()
    finally:
        await games.close()
        await client.aclose()
        await gw.aclose()
    assert folded >= 3  # the seeds do give forced passes


async def test_a_player_plays_against_a_bot_to_the_end(games):
    game = await games.create([Seat("p_h", "hugo", None), Seat(None, "bot", "greedy")])
    assert await games.store.player_games("p_h") == [game.id]
    with pytest.raises(GameError) as err:
        await games.record(game.id)
    assert err.value.code == "not_over"
    async with asyncio.timeout(30):
        while not (game := await games.load(game.id)).state.over:
            if rules.to_act(game.state) == 0 and game.auto_kind() is None:
                await games.move(game.id, "p_h", rules.legal_moves(game.state)[-1], game.version)
            else:
                await asyncio.sleep(0.01)
    assert replay(await games.record(game.id)) == game.state
    assert await games.store.player_games("p_h") == []
    with pytest.raises(GameError) as err:
        await games.move(game.id, "p_h", {"action": "pass"})
    assert err.value.code == "game_over"
    ttl = await games.store.redis.client.ttl(games.store.keys_of(game.id).game)
    assert 0 < ttl <= games.settings.game_ttl


async def test_unknown_games_are_no_such_game(games):
    for call in (games.load("g_x"), games.record("g_x"), games.move("g_x", "p", {})):
        with pytest.raises(GameError) as err:
            await call
        assert err.value.code == "no_such_game"


async def test_back_brings_an_away_seat_back_once(games):
    game = await games.create([Seat("p_a", "ann", None), Seat("p_b", "bob", None)])
    now = await games.store.now_ms() + 10_000_000  # as if every deadline had passed
    while not any(game.away):  # the seats alternate: the first to miss twice is away
        await games.timeout(game.id, now)
        game = await games.load(game.id)
    away = [k for k in range(2) if game.away[k]]
    assert game.misses[away[0]] == games.settings.away_after
    player = game.players[away[0]]
    await games.back(game.id, player)
    await games.back(game.id, player)  # not away any more: nothing happens
    game = await games.load(game.id)
    kinds = [e.event["kind"] for e in await games.store.events(game.id)]
    assert kinds.count("back") == 1 and not any(game.away)


async def settled(games: Games, game_id: str) -> Any:
    """The game once a person is to act (the server plays away seats in a task)."""
    async with asyncio.timeout(30):
        while (game := await games.load(game_id)).auto_kind() is not None:
            await asyncio.sleep(0.01)
    return game


async def test_away_and_back_of_another_seat_leave_a_move_on_the_seq_before_valid(redis_url):
    client = connect(redis_url, 8)
    gw = await open_redis(redis_url, 8)
    games = Games(Store(gw, 16), Settings(redis_url=redis_url, turn_time=3600, away_after=1))
    try:
        seats = [Seat(f"p_{k}", f"n{k}", None) for k in range(3)]
        game = await games.create(seats)
        late = rules.to_act(game.state)
        await games.timeout(game.id, await games.store.now_ms() + 10_000_000)
        game = await settled(games, game.id)
        kinds = [e.event["kind"] for e in await games.store.events(game.id)]
        assert kinds[-2:] == ["move", "away"] and game.away[late]
        # The next seat got its legal moves with the timeout's move (seq k) and
        # again with the `away` (k + 1); it answers the first.
        actor = rules.to_act(game.state)
        moved = await games.move(game.id, f"p_{actor}", game.legal[0], game.version - 1)
        assert moved == game.version + 1  # before: stale_seq
        # The away seat's player comes back: a `back` event for a seat not to act.
        game = await settled(games, game.id)
        before = game.version
        await games.back(game.id, f"p_{late}")
        game = await games.load(game.id)
        assert game.version == before + 1 and not game.away[late]
        actor = rules.to_act(game.state)
        assert await games.move(game.id, f"p_{actor}", game.legal[0], before) == before + 2
        # A move based on an event before a real move is still stale, and changes nothing.
        game = await settled(games, game.id)
        actor = rules.to_act(game.state)
        with pytest.raises(GameError) as err:
            await games.move(game.id, f"p_{actor}", game.legal[0], before)
        assert err.value.code == "stale_seq"
        assert (await games.load(game.id)).version == game.version
    finally:
        await games.close()
        await client.aclose()
        await gw.aclose()


async def memory(store: Store, game_id: str) -> int:
    """Bytes Redis holds for every key of the game (MEMORY USAGE, every element)."""
    sizes = [
        await store.redis.client.memory_usage(k, samples=0) for k in store.keys_of(game_id).held()
    ]
    return sum(s or 0 for s in sizes)


async def test_a_finished_game_keeps_answers_for_its_grace_then_only_its_record(redis_url):
    client = connect(redis_url, 8)
    gw = await open_redis(redis_url, 8)
    settings = Settings(redis_url=redis_url, turn_time=3600, game_grace=0.5)
    games, store = Games(Store(gw, 16), settings), Store(gw, 16)
    players = [f"p_{k}" for k in range(4)]
    game = await games.create([Seat(p, f"n{k}", None) for k, p in enumerate(players)], seed=5)
    answers: dict[str, int] = {}
    while not game.state.over:  # four people, every move with its own move id
        if game.auto_kind() is not None:  # a forced pass: the server plays it
            await asyncio.sleep(0.01)
            game = await games.load(game.id)
            continue
        player, move = players[rules.to_act(game.state)], rules.legal_moves(game.state)[-1]
        move_id = f"m{game.version}"
        answers[move_id] = await games.move(game.id, player, move, game.version, move_id)
        last = (player, move, move_id)
        game = await games.load(game.id)
        if not game.state.over:  # the game's hash holds its move ids, no key of their own
            keys = store.keys_of(game.id)
            assert await client.hget(keys.game, move_field(player, move_id)) is not None
            assert not await client.exists(keys.moves)
    # At the end they go to their own key, kept for the grace only.
    keys = store.keys_of(game.id)
    assert not [f for f in await client.hkeys(keys.game) if f.startswith(b"m:")]
    assert await client.hlen(keys.moves) == len(answers)
    assert 0 < await client.pttl(keys.moves) <= 500
    assert await memory(store, game.id) <= 40_000  # a 4-player game at its end
    # In the grace a resent move (any of them) gets its first answer...
    assert await games.move(game.id, last[0], last[1], None, last[2]) == answers[last[2]]
    async with asyncio.timeout(30):  # ...then Redis drops the events and the move ids
        while await client.exists(store.keys_of(game.id).events, store.keys_of(game.id).moves):
            await asyncio.sleep(0.05)
    assert await memory(store, game.id) <= 4096
    kept = await games.load(game.id)  # what remains: the whole game, compressed
    assert kept.state == game.state and kept.moves == game.moves and kept.names == game.names
    assert replay(await games.record(game.id)) == game.state
    with pytest.raises(GameError) as err:
        await games.move(game.id, last[0], last[1], None, last[2])
    assert err.value.code == "game_over"
    await games.close()
    await client.aclose()
    await gw.aclose()


async def test_a_search_bot_thinks_off_the_event_loop(games, monkeypatch):
    # The bot waits until a coroutine lets it go: were it thinking on the event
    # loop, that coroutine could not run, and the wait would time out.
    entered, release = threading.Event(), threading.Event()
    waits: list[bool] = []
    choose = SearchBot.choose

    def held(self: SearchBot, view: dict[str, Any], legal: list[dict[str, Any]]) -> Any:
        entered.set()
        waits.append(release.wait(10))
        return choose(self, view, legal)

    monkeypatch.setattr(SearchBot, "choose", held)
    monkeypatch.setattr(search, "ITERATIONS", 4)
    created = await games.create([Seat(None, "b0", "mcts"), Seat(None, "b1", "greedy")])
    async with asyncio.timeout(30):
        while not entered.is_set():
            await asyncio.sleep(0.01)
    release.set()
    game = await finished(games, created.id)
    assert waits and all(waits)
    assert replay(await games.record(game.id)) == game.state
