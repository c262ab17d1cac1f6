"""Protocol-level helpers: a raw WebSocket client, and whole games played over it.

Every check here looks at what one seat received: seqs without gaps, views equal
to `rules.view` of the replayed record, and no card that seat may not see.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from typing import Any

import aiohttp

from moose import fair, protocol, rules

Message = dict[str, Any]


class RawClient:
    """A bare WebSocket speaking PROTOCOL.md frames; keeps every message it receives."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, binary: bool) -> None:
        self.ws, self.binary = ws, binary
        self.received: list[dict[str, Any]] = []  # everything, in order (for leak checks)
        self._unread: list[dict[str, Any]] = []
        self._arrived = asyncio.Event()
        self._ids = itertools.count(1000)
        self.player = self.token = self.name = ""
        self.close_code: int | None = None
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.ws:
            if raw.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
                msg = protocol.decode(raw.data)
                self.received.append(msg)
                self._unread.append(msg)
                self._arrived.set()
        self.close_code = self.ws.close_code
        self._arrived.set()

    async def send(self, msg: dict[str, Any], *, binary: bool | None = None) -> None:
        """Send one message in our encoding (or the one given)."""
        await self.send_frame(
            protocol.encode(msg, binary=self.binary if binary is None else binary)
        )

    async def send_frame(self, frame: bytes | str) -> None:
        """Send a raw frame, valid or not."""
        if isinstance(frame, bytes):
            await self.ws.send_bytes(frame)
        else:
            await self.ws.send_str(frame)

    async def expect(self, timeout: float = 10.0, **match: Any) -> dict[str, Any]:
        """The first unread message whose fields equal `match` (others stay unread)."""
        async with asyncio.timeout(timeout):
            while True:
                for i, msg in enumerate(self._unread):
                    if all(msg.get(k) == v for k, v in match.items()):
                        return self._unread.pop(i)
                if self._reader.done():
                    raise ConnectionError(f"closed ({self.close_code}) waiting for {match}")
                self._arrived.clear()
                await self._arrived.wait()

    async def request(self, mtype: str, **fields: Any) -> dict[str, Any]:
        """Send a request with a fresh id and return its answer (or error)."""
        msg_id = next(self._ids)
        await self.send({"type": mtype, "id": msg_id, **fields})
        return await self.expect(id=msg_id)

    async def hello(self, name: str = "", token: str = "") -> dict[str, Any]:
        """Say hello; remember the player, name and token of the welcome."""
        fields: dict[str, Any] = {"token": token} if token else {"name": name}
        answer = await self.request("hello", protocol=1, **fields)
        if answer["type"] == "welcome":
            self.player, self.token, self.name = answer["player"], answer["token"], answer["name"]
        return answer

    async def closed(self, timeout: float = 10.0) -> int | None:
        """Wait until the server closes the socket; its close code."""
        async with asyncio.timeout(timeout):
            await asyncio.shield(self._reader)
        return self.close_code

    async def close(self) -> None:
        """Close our side and stop reading."""
        await self.ws.close()
        self._reader.cancel()
        await asyncio.gather(self._reader, return_exceptions=True)


async def table_game(
    clients: list[Any], bots: tuple[str, ...] = (), codes: list[str] | None = None
) -> tuple[str, list[int]]:
    """Seat the clients (and bots) at a private table and start it; game id and seats.

    The table's join code is appended to `codes`, when given.
    """
    host = clients[0]
    table = await host.request("create_table", players=len(clients) + len(bots))
    assert table["type"] == "table", table
    if codes is not None:
        codes.append(table["code"])
    for client in clients[1:]:
        joined = await client.request("join_table", code=table["code"])
        assert joined["type"] == "table", joined
        await host.expect(type="table", code=table["code"])  # the host hears of each join
    for bot in bots:
        assert (await host.request("add_bot", code=table["code"], bot=bot))["type"] == "table"
    started = await host.request("start_table", code=table["code"])
    assert started["type"] == "table"
    matches = [await c.expect(type="match") for c in clients]
    assert len({m["game"] for m in matches}) == 1
    return matches[0]["game"], [m["seat"] for m in matches]


async def play_out(
    client: Any, game: str, seed: int, *, timeout: float = 30, first: Message | None = None
) -> list[Message]:
    """Play random legal moves for our seat until the game is over; every event seen.

    `first`: an event already taken from the socket, handled before the others.
    """
    rng = random.Random(seed)
    events: list[Message] = []
    while True:
        event = first or await client.expect(type="event", game=game, timeout=timeout)
        first = None
        events.append(event)
        if event["event"]["kind"] == "over":
            return events
        if event["legal"]:
            answer = await client.request(
                "move",
                game=game,
                seq=event["seq"],
                move=rng.choice(event["legal"]),
                move_id=f"{client.player}-{event['seq']}",
            )
            assert answer["type"] == "moved", answer
            assert answer["seq"] == event["seq"] + 1


def replay_states(record: Message, events: list[Message]) -> list[rules.State]:
    """The state after each event, replaying the record's moves at each `move` event."""
    state = rules.new_game(record["players"], deck=record["deck"], dealer=record["dealer"])
    moves = iter(record["moves"])
    states = []
    for event in events:
        if event["event"]["kind"] == "move":
            state = rules.apply(state, next(moves))
        states.append(state)
    return states


def card_codes(value: Any) -> list[str]:
    """Every card code anywhere in a message (a room's cover "door" is not a card code)."""
    if isinstance(value, dict):
        return [c for k, v in value.items() if k != "cover" for c in card_codes(v)]
    if isinstance(value, list):
        return [c for v in value for c in card_codes(v)]
    return [value] if isinstance(value, str) and value in rules.CARD_CODES else []


def check_no_leak(msg: Message, seat: int | None, state: rules.State) -> None:
    """A message shows no other hand and no draw pile: only cards this seat may see."""
    assert not {"hands", "deck", "draw"} & set(keys_of(msg)), msg
    own = state.hands[seat] if seat is not None else []
    public = set(state.discard) | set(own)
    event = msg.get("event") or {}
    if event.get("kind") == "move" and "card" in event["move"]:
        public.add(event["move"]["card"])
    if state.pending:
        public.add(state.pending[2])
    leaked = set(card_codes(msg)) - public
    assert not leaked, (seat, leaked, msg)
    view = msg["view"]
    assert view["seat"] == seat
    if seat is None:
        assert "hand" not in view and msg["legal"] is None
    else:
        assert view["hand"] == sorted(own)
    assert view == rules.view(state, seat)


def keys_of(value: Any) -> list[str]:
    """Every dict key anywhere in a message."""
    if isinstance(value, dict):
        return [*value, *(k for v in value.values() for k in keys_of(v))]
    if isinstance(value, list):
        return [k for v in value for k in keys_of(v)]
    return []


async def check_game(client: Any, game: str, seat: int | None, events: list[Message]) -> Message:
    """Seqs from 1 without gaps, views and secrecy right, record replays; the record."""
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["event"]["kind"] == "start"
    answer = await client.request("record", game=game)
    assert answer["type"] == "record", answer
    record = answer["record"]
    final = None
    for msg, state in zip(events, replay_states(record, events), strict=True):
        check_no_leak(msg, seat, state)
        final = state
    assert final is not None and final.over
    over = dict(events[-1]["event"])
    ratings = over.pop("ratings", None)  # a rated game's: one per seat, see test_results.py
    assert ratings is None or len(ratings) == final.n
    deal = over.pop("deal", None)  # a provably fair deal's, told at the end (test_deals.py)
    assert deal == record.get("deal")
    assert deal is None or fair.verify(record) == []
    assert over == {
        "kind": "over",
        "scores": rules.scores(final),
        "winners": rules.winners(final),
    }
    assert record["result"] == {"scores": rules.scores(final), "winners": rules.winners(final)}
    return record


async def play_in_order(
    client: Any, game: str, rng: random.Random, events: list[Message], stop: int | None = None
) -> None:
    """Play random legal moves, keeping events in seq order as a client must.

    An event past a gap is skipped (the `sync` that follows resends it); one seen
    already is ignored. Returns at the end of the game or once seq `stop` is seen.
    """
    while True:
        event = await client.expect(type="event", game=game)
        if events and event["seq"] != events[-1]["seq"] + 1:
            continue
        events.append(event)
        if event["event"]["kind"] == "over":
            return
        if event["legal"]:
            answer = await client.request(
                "move", game=game, seq=event["seq"], move=rng.choice(event["legal"])
            )
            assert answer["type"] == "moved" or answer["code"] == "stale_seq", answer
        if stop is not None and event["seq"] >= stop:
            return


async def account_socket(ws_client: Any, url: str, name: str, password: str) -> RawClient:
    """A socket of a new account called `name`, its token kept on it."""
    client: RawClient = await ws_client(url, name)
    answer = await client.request("register", password=password)
    assert answer["type"] == "registered", answer
    client.token = answer["token"]
    return client
