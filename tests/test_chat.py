"""Table chat, blocks and follows over raw sockets: two server
instances on one real Redis, JSON and msgpack frames as PROTOCOL.md writes them."""

from __future__ import annotations

import asyncio
from typing import Any

from moose_server.moderation.store import ModerationStore
from moose_server.storage.connection import open_redis

from helpers import RawClient

MANY = {"chat_burst": 100}  # the tests' clients share one address


async def table_game(seats: list[RawClient]) -> tuple[str, str]:
    """The first client hosts a table of every client, all join, it starts: (game, code)."""
    host = seats[0]
    table = await host.request("create_table", players=len(seats))
    assert table["type"] == "table", table
    for other in seats[1:]:
        joined = await other.request("join_table", code=table["code"])
        assert joined["type"] == "table", joined
    started = await host.request("start_table", code=table["code"])
    assert started["type"] != "error", started
    games = {(await c.expect(type="match"))["game"] for c in seats}
    [game] = games
    for client in seats:
        await client.expect(type="event", game=game)  # following it: the start arrived
    return game, table["code"]


async def lines(client: RawClient, n: int, **match: Any) -> list[dict[str, Any]]:
    """The next `n` chat lines the client receives (of `match`), in order."""
    return [await client.expect(type="chat", **match) for _ in range(n)]


async def test_chat_reaches_every_seat_of_both_instances_in_order(serve, ws_client):
    one, two = (await serve(**MANY)).url, (await serve(**MANY)).url
    ann, bob, cat = (
        await ws_client(one, "ann"),
        await ws_client(two, "bob"),
        await ws_client(one, "cat"),
    )
    game, _ = await table_game([ann, bob, cat])
    said = []
    for i in range(6):
        speaker = (ann, bob, cat)[i % 3]
        answer = await speaker.request("say", game=game, text=f"line {i}")
        assert answer["type"] == "said", answer
        said.append(answer["line"])
    for client in (ann, bob, cat):
        got = await lines(client, 6, game=game)
        assert [m["text"] for m in got] == [f"line {i}" for i in range(6)]
        assert (
            [m["line"] for m in got]
            == said
            == sorted(said, key=lambda i: tuple(int(p) for p in i.split("-")))
        )
        assert {m["room"] for m in got} == {"players"}
        assert [m["seat"] for m in got] == [0, 1, 2, 0, 1, 2]
    history = await bob.request("chat_history", game=game)
    assert [m["text"] for m in history["lines"]] == [f"line {i}" for i in range(6)]
    later = await bob.request("chat_history", game=game, since=said[3])
    assert [m["line"] for m in later["lines"]] == said[4:]


async def test_a_reconnected_seat_reads_the_lines_it_missed(serve, ws_client):
    url = (await serve(**MANY)).url
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    game, _ = await table_game([ann, bob])
    first = await ann.request("say", game=game, text="before")
    await bob.expect(type="chat", line=first["line"])
    token = bob.token
    await bob.close()
    missed = [(await ann.request("say", game=game, text=f"missed {i}"))["line"] for i in range(3)]
    back = await ws_client(url, None)
    welcome = await back.hello(token=token)
    assert game in welcome["games"]
    history = await back.request("chat_history", game=game, since=first["line"])
    assert [m["line"] for m in history["lines"]] == missed
    assert [m["text"] for m in history["lines"]] == ["missed 0", "missed 1", "missed 2"]
    live = await ann.request("say", game=game, text="after")
    assert (await back.expect(type="chat"))["line"] == live["line"]


async def test_spectators_chat_never_reaches_the_seats_during_the_game(serve, ws_client):
    one, two = (await serve(**MANY)).url, (await serve(**MANY)).url
    ann, bob = await ws_client(one, "ann"), await ws_client(two, "bob")
    game, code = await table_game([ann, bob])
    eve, fay = await ws_client(two, "eve"), await ws_client(one, "fay")
    for spectator in (eve, fay):
        assert (await spectator.request("watch", game=game, code=code))["type"] == "watching"
    said = await eve.request("say", game=game, text="spectators only")
    assert said["room"] == "spectators"
    assert (await fay.expect(type="chat"))["text"] == "spectators only"
    seat_line = await ann.request("say", game=game, text="seats only")
    assert (await bob.expect(type="chat"))["line"] == seat_line["line"]  # after eve's, if at all
    for seat in (ann, bob):
        assert not [m for m in seat.received if m.get("room") == "spectators"]
        refused = await seat.request("chat_history", game=game, room="spectators")
        assert refused["code"] == "not_in_game"
    assert [m for m in eve.received if m.get("type") == "chat"] == [
        m for m in eve.received if m.get("type") == "chat" and m["room"] == "spectators"
    ]  # and the spectators get no seat's line
    refused = await eve.request("chat_history", game=game, room="players")
    assert refused["code"] == "not_in_game"


async def test_chat_stops_at_its_limits_with_clear_codes_and_keeps_nothing(serve, ws_client):
    url = (await serve(chat_burst=3, chat_interval=60)).url
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    game, _ = await table_game([ann, bob])
    long = await ann.request("say", game=game, text="x" * 201)
    assert long["type"] == "error" and long["code"] == "chat_too_long", long
    empty = await ann.request("say", game=game, text="\x00\u202e\x07 ")
    assert empty["code"] == "bad_message"
    cleaned = await ann.request("say", game=game, text="a\x1b[31mb\u202ec\nd")
    assert cleaned["text"] == "a [31mb c d"
    assert (await ann.request("say", game=game, text="y" * 200))["type"] == "said"
    assert (await bob.request("say", game=game, text="third"))["type"] == "said"
    limited = await bob.request("say", game=game, text="fourth")  # the address' bucket
    assert limited["code"] == "rate_limited" and limited["retry_after"] > 0
    history = await ann.request("chat_history", game=game)
    assert [m["text"] for m in history["lines"]] == ["a [31mb c d", "y" * 200, "third"]
    stranger = await ws_client(url, "zed")
    refused = await stranger.request("say", game=game, text="hi")
    assert refused["code"] == "not_in_game"


async def test_chat_lines_are_counted_on_every_instance_together(serve, ws_client):
    limits = {"chat_burst": 2, "chat_interval": 60}
    one, two = (await serve(**limits)).url, (await serve(**limits)).url
    ann, bob = await ws_client(one, "ann"), await ws_client(two, "bob")
    game, _ = await table_game([ann, bob])
    assert (await ann.request("say", game=game, text="one"))["type"] == "said"
    assert (await bob.request("say", game=game, text="two"))["type"] == "said"
    # One address (the tests' clients share it): its two lines are spent on both.
    for client in (ann, bob, ann):
        limited = await client.request("say", game=game, text="three")
        assert limited["code"] == "rate_limited" and 0 < limited["retry_after"] <= 60_000
    history = await bob.request("chat_history", game=game)
    assert [m["text"] for m in history["lines"]] == ["one", "two"]


async def test_a_blocked_player_no_longer_reaches_the_blocker(serve, ws_client):
    one, two = (await serve(**MANY)).url, (await serve(**MANY)).url
    ann, bob, cat = (
        await ws_client(one, "ann"),
        await ws_client(two, "bob"),
        await ws_client(two, "cat"),
    )
    game, _ = await table_game([ann, bob, cat])
    blocked = await bob.request("block", player="ann", game=game)
    assert blocked == {"type": "blocked", "player": ann.player, "name": "ann", "id": blocked["id"]}
    hidden = await ann.request("say", game=game, text="you cannot read this")
    shown = await cat.request("say", game=game, text="you can read this")
    assert (await cat.expect(type="chat", line=hidden["line"]))["text"] == "you cannot read this"
    assert (await bob.expect(type="chat"))["line"] == shown["line"]  # ann's came first, if at all
    assert hidden["line"] not in {m.get("line") for m in bob.received}
    history = await bob.request("chat_history", game=game)
    assert [m["text"] for m in history["lines"]] == ["you can read this"]
    assert (await bob.request("blocks"))["players"] == [{"player": ann.player, "name": "ann"}]
    assert (await bob.request("unblock", player=ann.player))["type"] == "unblocked"
    again = await ann.request("say", game=game, text="now you can")
    assert (await bob.expect(type="chat", line=again["line"]))["text"] == "now you can"


async def test_a_reported_line_reaches_the_moderators_with_its_text(serve, ws_client, redis_url):
    url = (await serve(**MANY)).url
    ann, bob = await ws_client(url, "ann"), await ws_client(url, "bob")
    game, _ = await table_game([ann, bob])
    rude = await ann.request("say", game=game, text="something rude")
    report = await bob.request(
        "report", player="ann", game=game, chat=rude["line"], reason="insults"
    )
    assert report["type"] == "reported" and report["player"] == ann.player, report
    missing = await bob.request("report", player="ann", game=game, chat="1-0", reason="x")
    assert missing["code"] == "no_such_message"
    redis = await open_redis(redis_url, 4)
    try:
        [kept] = await ModerationStore(redis).reports(10)
    finally:
        await redis.aclose()
    assert kept["text"] == "something rude" and kept["chat"] == rude["line"]
    assert kept["player"] == ann.player and kept["reason"] == "insults"


async def test_a_private_table_has_a_chat_before_its_start(serve, ws_client):
    one, two = (await serve(**MANY)).url, (await serve(**MANY)).url
    ann, bob = await ws_client(one, "ann"), await ws_client(two, "bob")
    table = await ann.request("create_table", players=3)
    await bob.request("join_table", code=table["code"])
    said = await bob.request("say", code=table["code"], text="ready?")
    assert said["room"] == "table"
    got = await ann.expect(type="chat")
    assert (got["code"], got["room"], got["text"], got["name"]) == (
        table["code"],
        "table",
        "ready?",
        "bob",
    )
    history = await ann.request("chat_history", code=table["code"])
    assert [m["text"] for m in history["lines"]] == ["ready?"]
    outsider = await ws_client(one, "zed")
    # To an outsider a real table's code answers as a code no table has.
    assert (await outsider.request("say", code=table["code"], text="hi"))["code"] == "bad_code"


async def test_following_shows_who_is_online_and_playing(serve, ws_client):
    quick = {**MANY, "following_every": 0.1}  # asked again and again below
    one, two = (await serve(**quick)).url, (await serve(**quick)).url
    ann, bob, cat = (
        await ws_client(one, "ann"),
        await ws_client(two, "bob"),
        await ws_client(two, "cat"),
    )
    game, _ = await table_game([bob, cat])
    guest = await ann.request("follow", player=cat.player)
    assert guest["name"] == "cat"  # a connected guest: the name they play with now
    assert (await ann.request("unfollow", player=cat.player))["type"] == "unfollowed"
    assert (await bob.request("register", password="a long password"))["type"] == "registered"
    assert (await ann.request("follow", player="bob"))["player"] == bob.player  # by name
    assert (await ann.request("follow", player=ann.player))["code"] == "bad_message"
    [entry] = (await until_listed(ann, lambda p: p["online"]))["players"]
    # A private table's game: not for ann to watch (a `watch` of it fails), only counted.
    assert entry == {"player": bob.player, "name": "bob", "online": True, "games": [], "private": 1}
    assert (await ann.request("watch", game=game))["code"] == "not_in_game"
    await bob.close()
    [entry] = (await until_listed(ann, lambda p: not p["online"]))["players"]
    assert (entry["games"], entry["private"]) == ([], 1)  # still seated, away
    assert (await ann.request("unfollow", player=bob.player))["type"] == "unfollowed"
    assert (await ann.request("following"))["players"] == []


async def test_following_lists_the_games_the_follower_may_watch(serve, ws_client):
    url = (await serve(**MANY)).url
    ann, bob, cat = [await ws_client(url, name) for name in ("ann", "bob", "cat")]
    shared, _ = await table_game([ann, bob])  # ann sits at this private table too
    for c in (bob, cat):
        assert (await c.request("queue", min_players=2, max_players=2))["type"] == "queued"
    queued = (await cat.expect(type="match"))["game"]
    assert (await ann.request("follow", player=bob.player))["type"] == "followed"
    [entry] = (await ann.request("following"))["players"]
    assert (sorted(entry["games"]), entry["private"]) == (sorted([shared, queued]), 0)
    for game in entry["games"]:  # each one listed can be watched
        assert (await ann.request("watch", game=game))["type"] == "watching"


async def until_listed(client: RawClient, ok: Any) -> dict[str, Any]:
    """`following` asked again until every player in it passes `ok` (an instance notices
    a closed socket a moment after the client closes it), after `retry_after` when
    asked too soon."""
    async with asyncio.timeout(30):
        while True:
            answer = await client.request("following")
            if answer["type"] == "error":
                assert answer["code"] == "rate_limited", answer
                await asyncio.sleep(answer["retry_after"] / 1000)
                continue
            if answer["players"] and all(ok(p) for p in answer["players"]):
                return answer
            await asyncio.sleep(0.05)
