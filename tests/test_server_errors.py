"""Every bad input gets its stable error code, and the game in Redis stays unchanged.

Each row shows the error the sender gets AND that the game's version in Redis is
what it was; the socket stays open unless PROTOCOL.md says it closes.
"""

from __future__ import annotations

import time
from typing import Any

import msgpack
import pytest
import redis.asyncio as aioredis

from moose_server.accounts.tokens import Tokens
from moose_server.storage.connection import open_redis
from moose_server.storage.keys import SECRET_KEY
from moose_server.storage.store import Store

from helpers import table_game


@pytest.fixture
async def store(redis_url: str) -> Any:
    """A Store over the test Redis, to read games as the server wrote them."""
    client = aioredis.Redis.from_url(redis_url)
    gw = await open_redis(redis_url, 8)
    yield Store(gw, 16)
    await client.aclose()
    await gw.aclose()


@pytest.fixture
async def game(moose_server, ws_client, store) -> Any:
    """A started 2-seat game: (url, game id, [client to act, the other], version)."""
    url = await moose_server()
    a, b = await ws_client(url, "ada"), await ws_client(url, "bob", binary=False)
    game_id, seats = await table_game([a, b])
    first = await a.expect(type="event", game=game_id)
    await b.expect(type="event", game=game_id)
    actor, other = (a, b) if first["view"]["to_act"] == seats[0] else (b, a)
    version = (await store.load(game_id)).version
    return url, game_id, [actor, other], version


async def version(store: Store, game_id: str) -> int:
    """The game's version in Redis."""
    return (await store.load(game_id)).version


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"\xc1", "bad_frame"),  # never valid msgpack
        ("{not json", "bad_frame"),
        (msgpack.packb([1, 2]), "bad_message"),
        ('{"id": 3}', "bad_message"),  # no type
        (msgpack.packb({"type": "dance", "id": 3}), "unknown_type"),
        ('{"type": "move", "id": 3, "game": 5, "move": {}}', "bad_message"),
        ('{"type": "move", "id": 3, "game": "g", "move": {}, "seq": "7"}', "bad_message"),
        (msgpack.packb({"type": "sync", "id": 3, "game": "g", "since": 1.5}), "bad_message"),
    ],
)
async def test_bad_frames_get_errors_and_change_nothing(game, store, frame, code):
    _, game_id, (actor, _other), before = game
    await actor.send_frame(frame)
    error = await actor.expect(type="error")
    assert error["code"] == code
    assert (await actor.request("ping"))["type"] == "pong"  # the socket stays open
    assert await version(store, game_id) == before


async def test_game_errors_leave_the_game_unchanged(game, store, ws_client):
    url, game_id, (actor, other), before = game
    event = await actor.request("sync", game=game_id)  # a state event, then synced
    state = await actor.expect(type="event", game=game_id, seq=before)
    legal = state["legal"]
    assert event["type"] == "synced" and legal
    stranger = await ws_client(url, "eve")
    rows = [
        (actor, {"move": {"action": "play", "card": "trap", "target": 1}}, "illegal_move"),
        (actor, {"move": {"action": "fly"}}, "illegal_move"),
        (other, {"move": legal[0]}, "not_your_turn"),
        (stranger, {"move": legal[0]}, "not_in_game"),
        (actor, {"move": legal[0], "seq": before - 1}, "stale_seq"),
    ]
    for client, fields, code in rows:
        answer = await client.request("move", game=game_id, **fields)
        assert answer["code"] == code, (code, answer)
        assert await version(store, game_id) == before
    missing = await actor.request("move", game="g_nope", move=legal[0])
    assert missing["code"] == "no_such_game"
    assert (await actor.request("record", game=game_id))["code"] == "not_over"
    assert (await stranger.request("sync", game=game_id))["code"] == "not_in_game"
    assert await version(store, game_id) == before


async def test_repeated_move_id_gets_the_same_answer_and_moves_once(game, store):
    _, game_id, (actor, _other), before = game
    await actor.request("sync", game=game_id)
    legal = (await actor.expect(type="event", game=game_id, seq=before))["legal"]
    first = await actor.request("move", game=game_id, move=legal[0], move_id="once")
    assert first == {"type": "moved", "game": game_id, "seq": before + 1, "id": first["id"]}
    after = await version(store, game_id)
    again = await actor.request("move", game=game_id, move=legal[0], move_id="once")
    assert again["type"] == "moved" and again["seq"] == first["seq"]
    assert await version(store, game_id) == after
    moves = (await store.load(game_id)).data["moves"]
    assert len(moves) == 1


async def test_session_errors(game, store, ws_client, redis_url):
    url, game_id, (actor, _), before = game
    fresh = await ws_client(url, None)
    assert (await fresh.request("ping"))["code"] == "hello_required"
    assert (await fresh.request("hello", protocol=2, name="x"))["code"] == "protocol_version"
    assert (await fresh.request("hello", protocol=1, name=""))["code"] == "bad_message"
    assert (await fresh.request("hello", protocol=1))["code"] == "bad_message"
    secret = (await store.redis.get(SECRET_KEY)).decode()
    now = time.time()
    forged = Tokens("not-the-secret", 3600).issue(actor.player, "ada", now)
    expired = Tokens(secret, 10).issue(actor.player, "ada", now - 3600)
    tampered = actor.token[:-1] + ("0" if actor.token[-1] != "0" else "1")
    rows = [("garbage", "bad_token"), (forged, "bad_token"), (tampered, "bad_token")]
    for token, code in [*rows, (expired, "token_expired")]:
        assert (await fresh.hello(token=token))["code"] == code
    welcome = await fresh.hello(token=actor.token)  # the socket stayed open all along
    assert welcome["player"] == actor.player and welcome["games"] == [game_id]
    assert (await fresh.request("hello", protocol=1, name="again"))["code"] == "already_hello"
    assert await version(store, game_id) == before


async def test_table_errors(moose_server, ws_client):
    url = await moose_server()
    host, guest, third = [await ws_client(url, n) for n in ("h", "g", "t")]
    table = await host.request("create_table", players=2)
    code = table["code"]
    assert (await guest.request("join_table", code="ZZZZZZZZ"))["code"] == "bad_code"
    assert (await guest.request("join_table", code="no!"))["code"] == "bad_code"
    assert (await guest.request("join_table", code=code))["type"] == "table"
    assert (await guest.request("join_table", code=code))["code"] == "already_seated"
    assert (await third.request("join_table", code=code))["code"] == "table_full"
    assert (await guest.request("start_table", code=code))["code"] == "not_host"
    assert (await guest.request("add_bot", code=code, bot="greedy"))["code"] == "not_host"
    assert (await guest.request("queue"))["code"] == "already_queued"
    left = await guest.request("leave_table", code=code)
    assert left["type"] == "table"
    joined = await host.expect(type="table", code=code, id=None)
    assert joined["seats"][1]["player"] == guest.player
    update = await host.expect(type="table", code=code, id=None)
    assert update["seats"][1] is None


def _frame_of(size: int) -> bytes:
    """A msgpack ping of exactly `size` bytes."""
    head = len(msgpack.packb({"type": "ping", "id": 1, "pad": ""}))
    pad = size - head - 2  # a str of 256..65535 bytes has a 3-byte header, "" a 1-byte one
    frame = msgpack.packb({"type": "ping", "id": 1, "pad": "x" * pad})
    assert len(frame) == size
    return frame


async def test_a_frame_of_exactly_64_kib_is_read_and_one_byte_more_closes_with_1009(
    moose_server, ws_client
):
    client = await ws_client(await moose_server())
    await client.send_frame(_frame_of(64 * 1024))
    assert (await client.expect(id=1))["type"] == "pong"
    await client.send_frame(_frame_of(64 * 1024 + 1))
    assert await client.closed() == 1009


async def test_a_flood_is_rate_limited_then_closed_with_1008(game, store):
    _, game_id, (actor, _), before = game
    for i in range(200):
        try:
            await actor.send({"type": "ping", "id": i})
        except ConnectionError:
            break
    assert await actor.closed() == 1008
    codes = [m.get("code") for m in actor.received if m["type"] == "error"]
    assert "rate_limited" in codes
    assert await version(store, game_id) == before


async def test_rate_limited_errors_carry_the_request_id(moose_server, ws_client):
    # One message per 100 s after the burst: the 8 below cannot earn another, however slowly
    # a busy machine sends them.
    client = await ws_client(await moose_server(rate=0.01, burst=3, rate_strikes=100))
    ids = [f"r{i}" for i in range(8)]
    for msg_id in ids:
        await client.send({"type": "ping", "id": msg_id})
    answers = [await client.expect(id=msg_id) for msg_id in ids]
    refused = [a for a in answers if a["type"] == "error"]
    assert len(refused) >= 5, answers  # the hello took one of the 3
    assert {a["code"] for a in refused} == {"rate_limited"}
    await client.send_frame(b"\xc1")  # refused too, and with no id to give back
    assert (await client.expect(type="error", id=None))["code"] == "rate_limited"


async def test_values_that_cannot_be_encoded_are_bad_message_and_the_socket_stays(
    game, store, caplog
):
    """A JSON frame after a msgpack hello: the answer is msgpack, which cannot hold these."""
    _, game_id, clients, before = game
    actor = next(c for c in clients if c.binary)
    rows = [
        '{"type": "ping", "id": "\\ud800"}',
        '{"type": "ping", "id": 100000000000000000000000000000}',
        '{"type": "ping", "id": 1, "x": 1}'.replace("1, ", "18446744073709551615, "),
        *(
            f'{{"type": "{kind}", "id": 7, "game": "g_\\ud800"{extra}}}'
            for kind, extra in [
                ("record", ""),
                ("watch", ""),
                ("sync", ""),
                ("move", ', "move": {"action": "pass"}'),
            ]
        ),
        '{"type": "move", "id": 7, "game": "GAME", "move": {"action": "\\udc00"}}'.replace(
            "GAME", game_id
        ),
    ]
    with caplog.at_level("WARNING"):
        for frame in rows:
            await actor.send_frame(frame)
            error = await actor.expect(type="error")
            assert error["code"] == "bad_message", (frame, error)
            assert (await actor.request("ping"))["type"] == "pong"  # still open
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    assert await version(store, game_id) == before
