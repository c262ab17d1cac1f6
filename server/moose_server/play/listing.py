"""`my_games`: a player's unfinished games, those where it is their move first.

A correspondence player keeps many games going (play/correspondence.py), so the
list says of each whose move it is and until when; those waiting for this player
come first, the one with the least time left first, then the others by their
deadline. Real-time games are listed too (with no `days`): a page shows them
all in one place.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

from moose import rules
from moose_server.play.frames import seat_deadline
from moose_server.play.game import Game, GameError
from moose_server.play.games import Games
from moose_server.storage.store import Store

__all__ = ["game_entry", "my_games"]

Message = dict[str, Any]


def game_entry(game: Game, player: str) -> Message | None:
    """What `my_games` says of one game of the player; None when it is not theirs to
    list (finished, or no seat of theirs)."""
    seat = game.seat_of(player)
    if seat is None or game.finished:
        return None
    acting = rules.to_act(game.state)
    return {
        "game": game.id,
        "seat": seat,
        "names": game.names,
        "opponents": [name for i, name in enumerate(game.names) if i != seat],
        "days": game.days,
        "to_act": acting,
        "your_move": seat_deadline(game, seat) is not None,
        "deadline": game.deadline or None,
    }


def _order(entry: Message) -> tuple[bool, float]:
    """Your move first; then by the deadline, the soonest first (none last)."""
    deadline = entry["deadline"]
    return not entry["your_move"], math.inf if deadline is None else deadline


async def my_games(games: Games, store: Store, player: str) -> Message:
    """The `my_games` answer: the player's unfinished games in the order above, and the
    server's time to count the deadlines from."""
    ids = await store.player_games(player)
    loaded = await asyncio.gather(*(games.load(g) for g in ids), return_exceptions=True)
    entries = []
    for game in loaded:
        if isinstance(game, GameError):  # expired, or its fair deal waits for seeds
            continue
        if isinstance(game, BaseException):
            raise game
        entry = game_entry(game, player)
        if entry is not None:
            entries.append(entry)
    entries.sort(key=_order)
    return {"type": "my_games", "games": entries, "server_time": await store.now_ms()}
