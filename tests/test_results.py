"""Rated games: each seat's rating is updated once per game, whoever applies it and however often.

A finished rated game whose update never ran (its instance died, or Redis failed
the update) is left in Redis exactly as a kill between the last commit and the
update leaves it: over, among its bucket's unrated games, no rating applied.
Here that happens for real: the instance's player store points at a Redis that
is not running. Then instances race to apply it (in this process, and two real
`moose serve` processes sweeping for forgotten games): one update each seat.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from moose import rules
from moose_server.accounts import ratings
from moose_server.accounts.calls import RateCall, RatedSeat
from moose_server.accounts.ratings import Standing
from moose_server.accounts.store import PlayerStore
from moose_server.play.game import Game
from moose_server.play.games import Games
from moose_server.play.results import Results
from moose_server.play.seats import Seat
from moose_server.storage.connection import open_redis
from moose_server.storage.embedded import free_port
from moose_server.storage.keys import GUESTS_KEY, history_key, profile_key, top_key

from helpers import ServeProcess, random_game, until
from helpers.results import parts, play_out

SEATS = [Seat("p_ann", "ann", None), Seat("p_bob", "bob", None), Seat("p_cy", "cy", None)]


async def unrated_game(url: str, seed: int = 1) -> Game:
    """A finished rated game of SEATS whose rating update failed: Redis holds it unrated."""
    dead = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    async with parts(url, players_url=dead) as (games, _):
        profiles = [
            {
                "bot": False,
                "mu": ratings.MU,
                "sigma": ratings.SIGMA,
                "games": 0,
                "provisional": True,
            }
            for _ in SEATS
        ]
        seats = SEATS
        game = await games.create(seats, seed=seed, rated=True, profiles=profiles)
        game = await play_out(games, game, seed)  # the last move's rating update fails
        assert await games.store.unrated(1 << 62, 10) == [game.id]
        return game


def expected(game: Game) -> list[Standing | None]:
    """Each seat's standing after one update."""
    return ratings.update([Standing()] * len(SEATS), ratings.places(game.state))


async def check_rated_once(url: str, game: Game) -> None:
    """Each seat: one game, one history entry, the standing of one update; off the unrated set."""
    async with parts(url) as (games, results):
        profiles = await results.players.profiles([s.player for s in SEATS if s.player])
        for seat, (profile, want) in enumerate(zip(profiles, expected(game), strict=True)):
            assert want is not None
            assert int(profile["games"]) == 1
            assert float(profile["mu"]) == pytest.approx(want.mu, abs=1e-9)
            assert float(profile["sigma"]) == pytest.approx(want.sigma, abs=1e-9)
            [entry] = await results.players.history(SEATS[seat].player or "", 10)
            assert json.loads(entry)["game"] == game.id
        assert await games.store.unrated(1 << 62, 10) == []


async def test_racing_updates_of_one_game_apply_once(backend_url):
    game = await unrated_game(backend_url)
    async with parts(backend_url) as (_, results):
        others = [Results(results.store, results.players, results.settings) for _ in range(7)]
        await asyncio.gather(*(r.apply(game, 0) for r in [results, *others]))
        await asyncio.gather(*(r.sweep(forgotten=False) for r in [results, *others]))
    await check_rated_once(backend_url, game)


async def test_two_instances_rate_a_game_its_instance_left_unrated_once(
    moose_serve: Callable[..., ServeProcess], redis_url: str
):
    game = await unrated_game(redis_url, seed=2)
    env = {"MOOSE_RATE_SWEEP_AFTER": "0", "MOOSE_PROVISIONAL_GAMES": "2"}
    procs = [
        moose_serve("--redis", redis_url, wait=False, env=env, log=f"serve{n}.log")
        for n in range(2)
    ]
    for proc in procs:
        proc.wait_ready()
    async with parts(redis_url) as (games, _):
        async with asyncio.timeout(20):
            while await games.store.unrated(1 << 62, 10):
                await asyncio.sleep(0.05)
    for proc in procs:
        assert proc.stop() == 0
    await check_rated_once(redis_url, game)
    logs = "".join(p.log.read_text() for p in procs)
    assert logs.count(f"rated {game.id}") == 1  # the other instance found it rated


async def test_stop_ends_the_sweep_loop_without_waiting_out_its_pause(redis_url, monkeypatch):
    # A drain waits for `run` to end: every instance's shutdown (and every test's
    # teardown) would wait out the pause between sweeps.
    monkeypatch.setattr("moose_server.play.results.SWEEP_INTERVAL", 3600.0)
    async with parts(redis_url) as (_, results):
        running = asyncio.create_task(results.run())
        await asyncio.sleep(0.1)  # into its pause
        results.stop()
        async with asyncio.timeout(30):
            await running


@pytest.mark.slow
async def test_the_over_event_says_the_new_ratings_and_the_record_outlives_the_game(redis_url):
    # The game outlives the checks below by a margin, and then is waited out.
    async with parts(redis_url, game_ttl=2) as (games, results):
        store = games.store
        profiles = await results.profiles(SEATS)
        game = await games.create(SEATS, seed=3, rated=True, profiles=profiles)
        game = await play_out(games, game, 3)
        over = (await store.events(game.id))[-1].event
        stored = await results.players.profiles([s.player or "" for s in SEATS])
        for shown, profile, want in zip(over["ratings"], stored, expected(game), strict=True):
            assert want is not None and shown["rating"] == want.rating == int(profile["rating"])
            assert shown["change"] == want.rating - Standing().rating
            assert shown["provisional"] is True  # 1 game of provisional_games = 2

        async def expired() -> bool:
            return (await store.load(game.id)).data is None

        await until(expired)  # the game expires; its record is kept for record_ttl
        record = await games.public_record(game.id)
        assert record["moves"] == game.moves and record["names"] == game.names


async def test_the_profile_fields_a_ticket_carried_are_not_read_again(redis_url):
    # A queue table's tickets carry their players' real-time profile fields
    # (matchmaking: Matchmaker.enqueue): dealing it reads no profile. Here the
    # player store points at a Redis that is not running: any read would fail.
    dead = f"redis://127.0.0.1:{free_port()}/0"
    known = {"p_ann": {"mu": "30.5", "sigma": "7.25", "games": "3"}, "p_bob": {"bot": "1"}}
    async with parts(redis_url, players_url=dead) as (_, results):
        got = await results.profiles(SEATS, known={**known, "p_cy": {}})
        assert got[0] == {"bot": False, "mu": 30.5, "sigma": 7.25, "games": 3, "provisional": False}
        assert got[1] is not None and got[1]["bot"] is True and got[1]["games"] == 0
    async with parts(redis_url) as (_, results):  # the others are read
        got = await results.profiles(SEATS, known=known)
        assert got[0] is not None and got[0]["mu"] == 30.5
        assert got[2] == {
            "bot": False,
            "mu": ratings.MU,
            "sigma": ratings.SIGMA,
            "games": 0,
            "provisional": True,
        }


async def test_private_tables_are_unrated_unless_the_host_asks(redis_url):
    async with parts(redis_url) as (games, results):
        seats = [*SEATS[:2], Seat(None, "g-bot 1", "greedy")]
        profiles = await results.profiles(seats)
        assert profiles[2] is None  # the server's bot is not rated
        plain = await games.create(seats, seed=4, code="ABCDEF", profiles=profiles)
        plain = await play_out(games, plain, 4)
        assert "ratings" not in (await games.store.events(plain.id))[-1].event
        assert await results.players.profiles(["p_ann"]) == [{}]
        rated = await games.create(seats, seed=5, code="ABCDEG", rated=True, profiles=profiles)
        rated = await play_out(games, rated, 5)
        over = (await games.store.events(rated.id))[-1].event
        assert over["ratings"][2] is None and all(r is not None for r in over["ratings"][:2])
        assert [int(p["games"]) for p in await results.players.profiles(["p_ann", "p_bob"])] == [
            1,
            1,
        ]


def test_places_follow_the_rules_winners_and_share_ties():
    state = next(s for s, m in _final_states() if len(rules.winners(s)) >= 1)
    places = ratings.places(state)
    assert {k for k, p in enumerate(places) if p == 1} == set(rules.winners(state))


def _final_states() -> Any:

    for seed in range(50):
        *_, (state, _) = random_game(4, seed)
        yield state, None


def test_a_rating_update_rewards_the_winner_and_shows_a_conservative_number():
    after = ratings.update([Standing(), Standing(), None], [1, 2, 1])
    winner, loser, bot = after
    assert bot is None and winner is not None and loser is not None
    assert winner.mu > ratings.MU > loser.mu and winner.games == loser.games == 1
    assert Standing().rating == 540 and ratings.display(25, 5 / 3) == 1500
    assert ratings.update([Standing(), None], [1, 2]) == [Standing(), None]  # nothing to learn


async def test_an_instance_killed_at_the_end_of_a_game_leaves_it_rated_once(
    moose_serve: Callable[..., ServeProcess], redis_url: str, ws_client: Any
):
    """Two players on instance A; A is killed (SIGKILL) as the last move is sent. Whether
    the move was committed, and rated, or not, instance B ends and rates the game once."""
    env = {
        "MOOSE_RATE_SWEEP_AFTER": "0.5",
        "MOOSE_PROVISIONAL_GAMES": "2",
        "MOOSE_MATCH_INTERVAL": "0.05",
        "MOOSE_INSTANCE_TTL": "1",
    }
    flags = (
        "--redis",
        redis_url,
        "--turn-time",
        "5",
        "--match-wait",
        "0.2",
        "--poll-interval",
        "0.05",
    )
    a, b = (moose_serve(*flags, wait=False, env=env, log=f"serve{n}.log") for n in "ab")
    a.wait_ready(), b.wait_ready()
    players = [await ws_client(a.url, name) for name in ("ann", "bob")]
    for p in players:
        await p.request("queue", min_players=2, max_players=2)
    match = await players[0].expect(type="match")
    game_id = match["game"]
    async with parts(redis_url) as (games, _):
        async with asyncio.timeout(60):
            await _play_until_the_end_then_kill(games, game_id, players, a)
            while not (await games.load(game_id)).state.over or await games.store.unrated(
                1 << 62, 10
            ):
                await asyncio.sleep(0.05)
        game = await games.load(game_id)
    async with parts(redis_url) as (_, results):
        mine = [p.player for p in players]
        for profile in await results.players.profiles(mine):
            assert int(profile["games"]) == 1
        for player in mine:
            [entry] = await results.players.history(player, 10)
            assert json.loads(entry)["game"] == game.id


async def _play_until_the_end_then_kill(
    games: Games, game_id: str, players: list[Any], victim: ServeProcess
) -> None:
    """Answer each turn with the first legal move; kill `victim` as the last one is sent."""
    by_id = {p.player: p for p in players}
    while True:
        game = await games.load(game_id)
        seat = rules.to_act(game.state)
        if game.state.over:
            victim.kill()  # ended by a move the server made: killed at once after it
            return
        player = game.players[seat] if seat is not None else None
        if player is None or game.auto_kind() is not None:
            await asyncio.sleep(0.01)
            continue
        move = game.legal[0]
        last = rules.apply(game.state, move).over
        await by_id[player].send(
            {
                "type": "move",
                "id": 1,
                "game": game_id,
                "move": move,
                "seq": game.version,
                "move_id": f"m{game.version}",
            }
        )
        if last:
            victim.kill()
            return
        async with asyncio.timeout(10):
            while (await games.load(game_id)).version == game.version:
                await asyncio.sleep(0.005)


async def test_the_changes_follow_the_end_that_was_committed(redis_url):
    """A commit refused as stale may have computed another end of the same game first."""

    ends = []
    for seed in range(40):
        *_, (state, _) = random_game(len(SEATS), seed)
        if ratings.places(state) not in [ratings.places(e) for e in ends]:
            ends.append(state)
        if len(ends) == 2:
            break
    async with parts(redis_url) as (games, results):
        profiles = await results.profiles(SEATS)
        game = await games.create(SEATS, seed=6, rated=True, profiles=profiles)
        first, second = (results.changes(game, end) for end in ends)
        assert first != second
        assert second == results.changes(game, ends[1])
        after = ratings.update([Standing()] * len(SEATS), ratings.places(ends[1]))
        assert [c[1] if c else None for c in second] == after


async def test_a_history_keeps_its_newest_games_and_is_trimmed_once_full(backend_url):
    backend = await open_redis(backend_url, 4)
    players = PlayerStore(backend)
    single = not backend.cluster  # commandstats of one node
    trims = 0
    try:
        for n in range(5):
            entry = json.dumps({"game": f"g_{n}"})
            seat = RatedSeat("p_hal", "hal", False, 0.0, 1.0, entry)
            call = RateCall(
                game=f"g_{n}",
                marker_ttl=60,
                history_size=3,
                guest_ttl_ms=60_000,
                provisional_games=5,
                base=1500,
                scale=10,
                base_ordinal=0,
                spread=3,
                mu=25,
                sigma=8.3,
                seats=[seat],
            )
            before = await backend.client.info("commandstats") if single else {}
            assert await players.rate(call)
            after = await backend.client.info("commandstats") if single else {}
            ltrim = [s.get("cmdstat_ltrim", {}).get("calls", 0) for s in (before, after)]
            trims += ltrim[1] - ltrim[0]
        history = [json.loads(e)["game"] for e in await players.history("p_hal", 10)]
        assert history == ["g_4", "g_3", "g_2"]
        assert trims == (2 if single else 0)  # the 4th and 5th games, not the first three
    finally:
        await backend.aclose()


async def test_a_guest_s_expiry_is_renewed_once_it_wears_and_boards_change_with_the_kind(
    backend_url,
):
    backend = await open_redis(backend_url, 4)
    players, client = PlayerStore(backend), backend.client
    single = not backend.cluster  # commandstats of one node
    ttl = 3_600_000

    async def rate(n: int, bot: bool) -> dict[str, int]:
        seat = RatedSeat("p_gus", "gus", bot, 0.0, 1.0, json.dumps({"game": f"g_{n}"}))
        call = RateCall(
            game=f"g_gus_{n}",
            marker_ttl=60,
            history_size=10,
            guest_ttl_ms=ttl,
            provisional_games=2,
            base=1500,
            scale=10,
            base_ordinal=0,
            spread=3,
            mu=25,
            sigma=8.3,
            seats=[seat],
        )
        before = await client.info("commandstats") if single else {}
        assert await players.rate(call)
        after = await client.info("commandstats") if single else {}
        return {
            c: after.get(f"cmdstat_{c}", {}).get("calls", 0)
            - before.get(f"cmdstat_{c}", {}).get("calls", 0)
            for c in ("pexpire", "zrem")
        }

    try:
        first = await rate(0, False)  # renewed: profile, history and the guests' score
        profile, history = profile_key("p_gus"), history_key("p_gus")
        await client.pexpire(profile, ttl // 2)
        await client.hset(profile, "gx", 1)  # worn past a 168th of its ttl: renewed
        worn = await rate(1, False)  # now on the humans' board
        assert await client.pttl(profile) > ttl - ttl // 168
        kept = await rate(2, False)  # fresh: nothing renewed, no other board emptied
        assert ttl - ttl // 168 < await client.pttl(profile) <= ttl
        assert 0 < await client.pttl(history) <= ttl
        assert await client.zscore(top_key("humans", "realtime"), "p_gus") is not None
        turned = await rate(3, True)  # a bot now: off the humans' board
        assert await client.zscore(top_key("humans", "realtime"), "p_gus") is None
        assert await client.zscore(top_key("bots", "realtime"), "p_gus") is not None
        if single:
            assert (first["pexpire"], worn["pexpire"], kept["pexpire"]) == (2, 2, 0)
            assert (kept["zrem"], turned["zrem"]) == (0, 1)
    finally:
        await client.delete(
            profile_key("p_gus"),
            history_key("p_gus"),
            top_key("humans", "realtime"),
            top_key("bots", "realtime"),
            GUESTS_KEY,
        )
        await backend.aclose()
