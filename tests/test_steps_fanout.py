"""Steps published on sharded channels: a follower instance needs no stream read.

Two hubs over one real Redis, each on its own subscription (SUBSCRIBE and
SSUBSCRIBE on one connection, as an instance runs it); a `Games` commits as the
first. The second hub's socket gets each step as the commit published it
(lua/commit.lua, keys.steps_channel) and must see exactly the events a `sync`
(read from the stream, the record) gives; a step it never heard leaves a gap
that it fills from the stream.
"""

from __future__ import annotations

from typing import Any

from moose import rules
from moose_server.play.games import Games
from moose_server.play.hub import Hub
from moose_server.play.seats import Seat
from moose_server.settings import Settings
from moose_server.storage.store import Store

from helpers import until
from helpers.hubs import Peer, checked_tasks, instances, is_true, play_moves


async def xranges(store: Store) -> int:
    """XRANGE calls since the counters were reset."""
    stats = await store.redis.client.info("commandstats")
    return int(stats.get("cmdstat_xrange", {}).get("calls", 0))


async def synced(hub: Hub, gid: str, seat: int, version: int) -> list[dict[str, Any]]:
    """What a `sync` from seq 0 sends a socket of `seat` on `hub`: read from the stream."""
    fresh = Peer(f"p_sync{seat}", seat)
    hub.join(fresh, gid, seat, version)
    await hub.resend(fresh, gid, 0)
    hub.drop(fresh)
    return fresh.got


async def test_a_followers_socket_gets_each_step_as_published_with_no_stream_read(redis_url):
    async with instances(redis_url, "i_a", "i_b") as both:
        (hub_a, hub_b), games = both.hubs, both.games
        dealt = await games.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=5)
        here, there = Peer("p_a", 0), Peer("p_b", 1)
        hub_a.join(here, dealt.id, 0, 0)
        hub_b.join(there, dealt.id, 1, 0)  # the game's other seat, on the other instance
        await until(lambda: is_true(there.subs[dealt.id].seen == 1 and not hub_b._tasks))
        await both.client.config_resetstat()
        await play_moves(games, dealt.id, 12)
        game = await games.load(dealt.id)
        await until(lambda: is_true(there.subs[dealt.id].seen == game.version))
        await checked_tasks(hub_b)
        assert await xranges(both.store) == 0  # every step came whole: nothing read back
        assert there.got == await synced(hub_b, dealt.id, 1, game.version)
        assert here.got == await synced(hub_a, dealt.id, 0, game.version)


class Dropping:
    """Hands the hub's steps on but the ones `drop` names (by their last seq): a
    message the subscription lost."""

    def __init__(self, hub: Hub, drop: set[int]) -> None:
        self.hub = hub
        self.drop = drop
        self.dropped: list[int] = []

    def heard(self, data: bytes) -> None:
        seq = int(data.split(b" ", 2)[1])
        if seq in self.drop:
            self.dropped.append(seq)
            return
        self.hub.heard_step(data)


async def test_a_step_the_follower_never_heard_is_found_by_seq_and_read_from_the_stream(
    redis_url,
):
    async with instances(redis_url, "i_a", "i_b") as both:
        (hub_a, hub_b), games = both.hubs, both.games
        dealt = await games.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=5)
        there = Peer("p_b", 1)
        hub_b.join(there, dealt.id, 1, 0)
        await until(lambda: is_true(there.subs[dealt.id].seen == 1 and not hub_b._tasks))
        hub_a.join(Peer("p_a", 0), dealt.id, 0, 1)
        # The subscription of B hands its steps to this filter from now on.
        dropping = Dropping(hub_b, {3})
        subscription = both.subscriptions[1]
        subscription.sharded = dict.fromkeys(subscription.sharded, dropping.heard)
        await both.client.config_resetstat()
        await play_moves(games, dealt.id, 8)
        game = await games.load(dealt.id)
        await until(lambda: is_true(there.subs[dealt.id].seen == game.version))
        await checked_tasks(hub_b)
        assert dropping.dropped == [3]
        assert await xranges(both.store) >= 1  # the gap was read from the stream
        seqs = [m["seq"] for m in there.got]
        assert seqs == list(range(1, game.version + 1))  # once each, in order
        assert there.got == await synced(hub_b, dealt.id, 1, game.version)
        assert rules.to_act(game.state) is not None or game.state.over


def second_games(both: Any) -> Games:
    """The second instance's `Games`: its own copies, its hub told of its commits."""
    return Games(
        both.store,
        Settings(),
        copies=both.copies[1],
        listeners=[both.hubs[1]],
        own_channel=both.channels[1],
    )


async def test_a_followers_move_after_a_published_step_plays_on_its_data_with_no_read(
    redis_url,
):
    # The step brings the game data the commit wrote: the follower keeps it as a
    # read right after that commit would find it, and its player's move needs none.
    async with instances(redis_url, "i_a", "i_b") as both:
        (hub_a, hub_b), games_a = both.hubs, both.games
        games_b = second_games(both)
        dealt = await games_a.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=5)
        hub_a.join(Peer("p_a", 0), dealt.id, 0, 0)
        there = Peer("p_b", 1)
        hub_b.join(there, dealt.id, 1, 0)
        await until(lambda: is_true(there.subs[dealt.id].seen == 1 and not hub_b._tasks))
        await both.client.config_resetstat()
        for _ in range(10):
            game = await games_a.load(dealt.id)
            if game.state.over:
                break
            seat = rules.to_act(game.state)
            assert seat is not None
            await until(lambda v=game.version: is_true(there.subs[dealt.id].seen == v))
            if seat == 1:
                kept = both.copies[1].get(dealt.id)
                assert kept is not None and kept.version == game.version
                # Its legal moves came with it: made once, for the frame of the seat to act.
                assert "legal" in vars(kept) and kept.legal == rules.legal_moves(game.state)
                assert kept.state.to_dict() == game.state.to_dict()
                assert kept.deadline == game.deadline
            played = (games_a, games_b)[seat]
            await played.move(dealt.id, game.players[seat], rules.legal_moves(game.state)[0])
        stats = await both.store.redis.client.info("commandstats")
        # Store.load's HGET of a move id: no move read its game, each instance's copy
        # came with the other's steps.
        assert int(stats.get("cmdstat_hget", {}).get("calls", 0)) == 0
        await games_b.close()


async def test_a_follower_of_the_version_before_gets_wake_ups_and_reads_the_stream(redis_url):
    # Mid-upgrade, an instance that hears no steps listens on its wake-up channel
    # alone: a commit publishes steps only to channels marked as hearing them.
    async with instances(redis_url, "i_a", "i_old", older=["i_old"]) as both:
        (hub_a, hub_old), games = both.hubs, both.games
        assert hub_old.sharded_channels() == {}
        dealt = await games.create([Seat("p_a", "a", None), Seat("p_b", "b", None)], seed=5)
        hub_a.join(Peer("p_a", 0), dealt.id, 0, 0)
        there = Peer("p_b", 1)
        hub_old.join(there, dealt.id, 1, 0)
        await until(lambda: is_true(there.subs[dealt.id].seen == 1 and not hub_old._tasks))
        await both.client.config_resetstat()
        await play_moves(games, dealt.id, 6)
        game = await games.load(dealt.id)
        await until(lambda: is_true(there.subs[dealt.id].seen == game.version))
        await checked_tasks(hub_old)
        stats = await both.store.redis.client.info("commandstats")
        assert "cmdstat_spublish" not in stats and int(stats["cmdstat_publish"]["calls"]) >= 6
        assert await xranges(both.store) >= 1  # the old way: the events read back
        assert there.got == await synced(hub_old, dealt.id, 1, game.version)


async def test_a_game_whose_seats_move_on_two_instances_writes_what_one_instance_writes(
    redis_url,
):
    # A seat of the second instance moves on the data the first one's step brought,
    # its moves kept packed (Game.from_packed): each commit must write the very bytes
    # that the same game played on one instance alone writes, move for move.
    async with instances(redis_url, "i_a", "i_b") as both:
        (hub_a, hub_b), games_a = both.hubs, both.games
        games_b = second_games(both)
        seats = [Seat(f"p_{i}", f"n{i}", None) for i in range(4)]
        split = await games_a.create(seats, seed=11)
        alone = await games_a.create(seats, seed=11)
        peers = [Peer(seat.player, i) for i, seat in enumerate(seats)]
        for i, peer in enumerate(peers):
            (hub_a, hub_b)[i % 2].join(peer, split.id, i, 0)

        async def data(game: str) -> bytes:
            return await both.client.hget(both.store.keys_of(game).game, "data")  # type: ignore[no-any-return]

        heard = 0
        for _ in range(24):
            game = await games_a.load(split.id)
            seat = rules.to_act(game.state)
            if seat is None:
                break
            await until(
                lambda v=game.version: is_true(all(p.subs[split.id].seen == v for p in peers))
            )
            kept = both.copies[1].get(split.id) if seat % 2 else None
            if kept is not None:  # the data of the step it heard (none before the first)
                assert kept.version == game.version
                heard += "moves" not in vars(kept)  # still packed
            move = rules.legal_moves(game.state)[-1]
            await (games_a, games_b)[seat % 2].move(split.id, seats[seat].player, move)
            await games_a.move(alone.id, seats[seat].player, move)
            assert await data(split.id) == await data(alone.id)
        assert heard >= 6
        await games_b.close()
