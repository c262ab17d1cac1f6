"""Redis memory of accounts, ratings, histories and finished rated games (MEMORY USAGE).

Plays GAMES rated 4-seat games among PLAYERS guests in this process, through the
server's own Games and Results over a bundled redis-server, then measures each
kind of key with MEMORY USAGE (bytes, Redis' own estimate with allocator
overhead) and registers ACCOUNTS accounts. Prints one JSON object; with an
argument, also writes it to that file.

    python bench/bench_player_memory.py OUT.json
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from moose import rules
from moose_server.accounts.calls import AccountClaimCall
from moose_server.accounts.identity import hash_password, name_key
from moose_server.accounts.store import PlayerStore
from moose_server.play.game import Game
from moose_server.play.games import Games
from moose_server.play.results import Results
from moose_server.play.seats import Seat
from moose_server.settings import Settings
from moose_server.storage.connection import open_node
from moose_server.storage.embedded import EmbeddedRedis, free_port
from moose_server.storage.keys import NAMES_KEY, history_key, profile_key, rated_key, top_key
from moose_server.storage.store import Store, connect

PLAYERS, GAMES, ACCOUNTS, SEATS = 40, 200, 1000, 4


async def play(games: Games, game: Game, rng: random.Random) -> Game:
    while not game.state.over:
        seat = rules.to_act(game.state)
        player = game.players[seat] if seat is not None else None
        if player is not None and game.auto_kind() is None:
            await games.move(game.id, player, rng.choice(game.legal), seq=game.version)
        else:
            await asyncio.sleep(0.001)  # a forced pass: the server plays it
        game = await games.load(game.id)
    return game


async def usage(redis: Any, keys: list[str]) -> list[int]:
    async with redis.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.memory_usage(key, samples=0)
        return [int(n or 0) for n in await pipe.execute()]


def mean(values: list[int]) -> float:
    return round(statistics.mean(values), 1)


async def main() -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="moose-mem-"))
    with EmbeddedRedis(folder, port=free_port(), appendonly=False) as server:
        redis = connect(server.url, 16)
        settings = Settings(redis_url=server.url, turn_time=3600, provisional_games=5)
        gateway = open_node(server.url, 16)
        store, players = Store(gateway, 16), PlayerStore(gateway)
        results = Results(store, players, settings)
        games = Games(store, settings, results)
        rng = random.Random(1)
        ids = [f"p_{i:010x}" for i in range(PLAYERS)]
        before = int((await redis.info("memory"))["used_memory"])
        played: list[Game] = []
        t0 = time.monotonic()
        for g in range(GAMES):
            chosen = rng.sample(ids, SEATS)
            seats = [Seat(p, f"player-{p[-4:]}", None) for p in chosen]
            profiles = await results.profiles(seats)
            game = await games.create(
                [Seat(s.player, s.name, None) for s in seats], seed=g, rated=True, profiles=profiles
            )
            played.append(await play(games, game, rng))
        await results.sweep(forgotten=False)
        after = int((await redis.info("memory"))["used_memory"])
        moves = mean([len(g.moves) for g in played])
        game_ids = [g.id for g in played]
        held = [store.keys_of(g) for g in game_ids]
        out: dict[str, Any] = {
            "redis": (await redis.info("server"))["redis_version"],
            "games": GAMES,
            "seats": SEATS,
            "players": PLAYERS,
            "moves_per_game": moves,
            "seconds": round(time.monotonic() - t0, 1),
            "per_finished_game": {
                "game_hash": mean(await usage(redis, [k.game for k in held])),
                "event_stream": mean(await usage(redis, [k.events for k in held])),
                "kept_record": mean(await usage(redis, [k.record for k in held])),
                "rated_marker": mean(await usage(redis, [rated_key(g) for g in game_ids])),
            },
            "used_memory_per_game": round((after - before) / GAMES),
        }
        histories = await usage(redis, [history_key(p) for p in ids])
        entries = [await redis.llen(history_key(p)) for p in ids]
        out["per_player"] = {
            "history_entries": mean(entries),
            "history_bytes_per_entry": round(sum(histories) / sum(entries), 1),
            "guest_profile": mean(await usage(redis, [profile_key(p) for p in ids])),
        }
        # Accounts: a guest claims its name (profile with password hash and generation,
        # an entry in the names hash).
        names_before = (await usage(redis, [NAMES_KEY]))[0]
        used_before = int((await redis.info("memory"))["used_memory"])
        pw = hash_password("correct horse battery")  # the same size as any other
        new = [f"p_a{i:09x}" for i in range(ACCOUNTS)]
        for i, player in enumerate(new):
            name = f"account-{i:05d}"
            claim = AccountClaimCall(
                player=player, name_key=name_key(name), name=name, pw=pw, bot=False, now=0
            )
            await players.claim(claim)
        used_after = int((await redis.info("memory"))["used_memory"])
        names_after = (await usage(redis, [NAMES_KEY]))[0]
        out["per_account"] = {
            "profile_before_any_game": mean(await usage(redis, [profile_key(p) for p in new])),
            "names_index": round((names_after - names_before) / ACCOUNTS, 1),
            "used_memory": round((used_after - used_before) / ACCOUNTS, 1),
        }
        lb = (await usage(redis, [top_key("humans")]))[0]
        listed = await redis.zcard(top_key("humans"))
        out["leaderboard_bytes_per_player"] = round(lb / max(1, listed), 1)
        await games.close()
        await redis.aclose()
    return out


if __name__ == "__main__":
    report = asyncio.run(main())
    text = json.dumps(report, indent=2)
    print(text)
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(text + "\n")
