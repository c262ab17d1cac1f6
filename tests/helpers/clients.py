"""Games played through the client library (`moose.client.Client`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from moose import rules
from moose.bots import make_bot
from moose.client import Client, ServerError, is_final

Message = dict[str, Any]


async def play_match(
    client: Any, progress: dict[str, int], on_turn: Callable[[str, Message], Awaitable[None]]
) -> tuple[str, int, list[Message]]:
    """Follow the next match of `client` (a `moose.client.Client`) to its end.

    `progress[game]` keeps the highest seq seen; `on_turn(game, msg)` is awaited on
    each event where it is our seat's turn with legal moves. Returns the game, our
    seat and every event of the game delivered, the last one the end.
    """
    game, seat, events = "", -1, []
    async for msg in client.events():
        if msg["type"] == "match":
            game, seat = msg["game"], msg["seat"]
            continue
        if msg["type"] != "event" or msg["game"] != game:
            continue
        events.append(msg)
        progress[game] = max(progress.get(game, 0), msg["seq"])
        if msg["view"]["over"]:
            return game, seat, events
        if msg.get("legal") and msg["view"]["to_act"] == seat:
            await on_turn(game, msg)
    raise AssertionError("the events ended before the game did")


async def play_seat(
    client: Client,
    bot_name: str = "greedy",
    *,
    on_event: Callable[[Message], Awaitable[None]] | None = None,
    game: str = "",
    seat: int = -1,
) -> tuple[str, int, list[Message]]:
    """Play one game with a bot (the next match, or `game`); our seat and every event."""
    bot = make_bot(bot_name, seed=1)
    events: list[Message] = []
    async for msg in client.events():
        if msg["type"] == "match" and not game:
            game, seat = msg["game"], msg["seat"]
            continue
        if msg["type"] != "event" or msg["game"] != game:
            continue
        events.append(msg)
        if on_event is not None:
            await on_event(msg)
        view = msg["view"]
        if is_final(msg):
            return game, seat, events
        if msg.get("legal") and view["to_act"] == seat:
            try:
                await client.move(game, bot.choose(view, msg["legal"]), seq=msg["seq"])
            except ServerError as exc:
                assert exc.code in ("stale_seq", "not_your_turn"), exc
    raise AssertionError("the events ended before the game did")


def check_views(events: list[Message], record: Message, seat: int) -> None:
    """Every view delivered is exactly rules.view of the replayed game for our seat."""
    state = rules.new_game(record["players"], deck=record["deck"], dealer=record["dealer"])
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    for msg in events:
        event = msg["event"]
        if event["kind"] == "move":
            state = rules.apply(state, event["move"])
        assert msg["view"] == rules.view(state, seat), f"seq {msg['seq']}"
        legal = rules.legal_moves(state) if rules.to_act(state) == seat else None
        if legal == [{"action": "pass"}]:
            legal = None  # the server passes at once for a seat that can only pass
        assert msg["legal"] == legal
    assert state.over
