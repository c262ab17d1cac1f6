"""A ban ends the banned player's games and their sessions for good: two real `moose
serve` instances over one Redis, raw frames from PROTOCOL.md alone, `moose admin`.

A banned player's unfinished rated game ends at once, lost by forfeit (the other
seat wins and both ratings change), heard on the other instance, whether the ban
names the account or the address it is connected from; their unrated game's seat
goes to the server's bot at once. No token issued before the ban
works after the unban, an account's nor a guest's: the account logs in again.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp

from helpers import RawClient, account_socket, admin, serve_several, table_game

PASSWORD = "tr0ub4dor&3 moose house"
ENV = {"MOOSE_BAN_REFRESH": "1", "MOOSE_TURN_TIME": "60", "MOOSE_ANSWER_TIME": "60"}


async def rated_game(host: RawClient, guest: RawClient) -> tuple[str, list[int]]:
    """A rated private table of the two, started: its game id and their seats."""
    table = await host.request("create_table", players=2, rated=True)
    assert table["type"] == "table" and table["rated"] is True, table
    assert (await guest.request("join_table", code=table["code"]))["type"] == "table"
    assert (await host.request("start_table", code=table["code"]))["type"] == "table"
    matches = [await c.expect(type="match") for c in (host, guest)]
    return matches[0]["game"], [m["seat"] for m in matches]


async def hello(ws_client: Any, url: str, **fields: Any) -> dict[str, Any]:
    """A new socket's answer to a hello with these fields."""
    client: RawClient = await ws_client(url, None)
    answer = await client.request("hello", protocol=1, **fields)
    await client.close()
    return answer


async def test_a_banned_players_rated_game_is_lost_by_forfeit_at_once(
    moose_serve, redis_url, ws_client
):
    first, second = serve_several(moose_serve, redis_url, ENV)
    mallory = await account_socket(ws_client, first.url, "mallory", PASSWORD)
    ivan = await account_socket(ws_client, second.url, "ivan", PASSWORD)
    game, [bad, good] = await rated_game(mallory, ivan)
    run = await admin("--redis", redis_url, "ban", "mallory", "--for", "1h", "--reason", "cheat")
    assert run.code == 0, run.err
    # Ivan, on the other instance, hears the end now, not two timeouts later.
    while (over := await ivan.expect(type="event", game=game))["event"]["kind"] != "over":
        pass
    event = over["event"]
    assert event["forfeit"] == [bad] and event["winners"] == [good], event
    assert event["ratings"][good]["change"] > 0 > event["ratings"][bad]["change"], event
    assert not [m for m in ivan.received if m.get("event", {}).get("auto") == "timeout"]
    # Rated as the `over` event said, once (the instance that committed it applies it).
    while not (profile := await ivan.request("profile"))["history"]:
        pass
    [entry] = profile["history"]
    assert (entry["game"], entry["place"], entry["change"]) == (
        game,
        1,
        event["ratings"][good]["change"],
    )

    # Unbanned, the tokens issued before the ban stay refused; the password works.
    run = await admin("--redis", redis_url, "unban", "mallory", "--reason", "appeal")
    assert run.code == 0, run.err
    while (old := await hello(ws_client, second.url, token=mallory.token))["code"] == "banned":
        pass  # until the unban reaches the instance's copy of the bans
    assert old["type"] == "error" and old["code"] == "token_revoked", old
    login = await hello(ws_client, second.url, name="mallory", password=PASSWORD)
    assert login["type"] == "welcome" and login["player"] == mallory.player, login


@contextlib.asynccontextmanager
async def from_addresses() -> AsyncIterator[Callable[[str, str, str], Awaitable[RawClient]]]:
    """`account(url, address, name)`: a socket of a new account whose client says it
    comes from `address` (X-Forwarded-For, trusted from loopback); all closed after."""
    async with aiohttp.ClientSession() as session:
        made: list[RawClient] = []

        async def account(url: str, address: str, name: str) -> RawClient:
            ws = await session.ws_connect(url, headers={"X-Forwarded-For": address})
            client = RawClient(ws, True)
            made.append(client)
            assert (await client.hello(name))["type"] == "welcome"
            registered = await client.request("register", password=PASSWORD)
            assert registered["type"] == "registered", registered
            client.token = registered["token"]
            return client

        try:
            yield account
        finally:
            for client in made:
                await client.close()


async def test_an_address_ban_forfeits_the_rated_games_of_the_players_connected_from_it(
    moose_serve, redis_url
):
    env = {**ENV, "MOOSE_TRUSTED_PROXIES": "127.0.0.1"}
    first, second = serve_several(moose_serve, redis_url, env)
    async with from_addresses() as account:
        mallory = await account(first.url, "203.0.113.66", "mallory")
        ivan = await account(second.url, "198.51.100.5", "ivan")
        game, [bad, good] = await rated_game(mallory, ivan)
        run = await admin(
            "--redis", redis_url, "ban", "--address", "203.0.113.66", "--reason", "cheat"
        )
        assert run.code == 0, run.err
        assert (await mallory.expect(type="error", code="banned"))["reason"] == "cheat"
        assert await mallory.closed() == 4003
        # Ivan, on the other instance, hears the end now: Mallory's seat lost by forfeit.
        while (over := await ivan.expect(type="event", game=game))["event"]["kind"] != "over":
            pass
        event = over["event"]
        assert event["forfeit"] == [bad] and event["winners"] == [good], event
        assert event["ratings"][good]["change"] > 0 > event["ratings"][bad]["change"], event
        assert (await ivan.request("ping"))["type"] == "pong"  # another address: still here


async def test_a_banned_guests_unrated_seat_goes_to_the_bot_and_their_token_dies(
    moose_serve, redis_url, ws_client
):
    first, second = serve_several(moose_serve, redis_url, ENV)
    guest: RawClient = await ws_client(first.url, "gus")
    ivan: RawClient = await ws_client(second.url, "ivan")
    game, [seat, _] = await table_game([guest, ivan])
    run = await admin("--redis", redis_url, "ban", guest.player, "--reason", "spam")
    assert run.code == 0, run.err
    await ivan.expect(type="event", game=game, event={"kind": "away", "seat": seat})
    run = await admin("--redis", redis_url, "unban", guest.player, "--reason", "ok")
    assert run.code == 0, run.err
    while (answer := await hello(ws_client, second.url, token=guest.token))["code"] == "banned":
        pass  # until the unban reaches the instance's copy of the bans
    assert answer["type"] == "error" and answer["code"] == "token_revoked", answer
