"""A server put through most of what it does, over the public protocol and the HTTP API.

For tests that must see every Redis command the server sends (a least-privilege
ACL user misses none) and every line it logs (no password in them): bots play a
queue game to its end, an account registers and logs in again, a private table
(and a correspondence one) is filled with a bot and started, the game is watched,
and the leaderboards, profiles, live games and records are read over the socket
and over HTTP; a player is reported and a limit refuses a client (moderation's
records).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shlex
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["readme_acl", "workout"]

import moose

PASSWORD = "correct horse battery staple"  # an account of the test's own


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


async def workout(url: str, timeout: float = 60.0) -> dict[str, Any]:
    """Put the server at `url` (ws://host:port/ws) through its paces; what it answered."""
    http = url.replace("ws://", "http://").removesuffix("/ws")
    async with asyncio.timeout(timeout):
        results = await asyncio.gather(
            *(
                moose.play_bot(url, "greedy", 1, name=f"bot{i}", max_players=2, seed=i)
                for i in range(2)
            )
        )
        game = results[0][0].game
        async with moose.connect(url, name="walker") as walker:
            await walker.register(PASSWORD)
            profile = await walker.profile(name="walker")
            board = await walker.leaderboard("bots")
            record = await walker.record(game)
            table = await walker.create_table(2)
            await walker.add_bot(table["code"])
            started = await walker.start_table(table["code"])
            # A correspondence table: its game waits days for the walker (a compact commit).
            days = await walker.create_table(2, days=3)
            await walker.add_bot(days["code"])
            await walker.start_table(days["code"])
            live = await walker.games()
            # Moderation's writes: a report, and refusals of a limit (recorded).
            await walker.report("bot0", "workout", game)
            for _ in range(11):  # MOOSE_CODE_GUESSES (10), then rate_limited
                with contextlib.suppress(moose.ServerError):
                    await walker.join_table("ZZZZ-ZZZZ")
        async with moose.connect(url, name="walker", password=PASSWORD) as again:
            watched = await again.watch(game)
        statuses = {
            path: await asyncio.to_thread(_get, http + path)
            for path in (
                "/api/leaderboard?kind=bots",
                f"/api/games/{game}/record",
                f"/api/players/{profile['player']}",
                "/api/players/walker",
            )
        }
    return {
        "results": results,
        "profile": profile,
        "board": board,
        "record": record,
        "started": started,
        "live": live,
        "watched": watched,
        "http": statuses,
    }


def readme_acl(password: str, cluster: bool = False) -> list[str]:
    """The rules of deploy/README.md's `ACL SETUSER moose ...` (with `password`), and with
    `cluster` those it adds for a Redis Cluster."""
    text = (Path(__file__).resolve().parents[2] / "deploy" / "README.md").read_text()
    blocks = re.findall(r"^redis-cli (ACL SETUSER moose .*?)\n```", text, re.M | re.S)
    assert len(blocks) == 2, "deploy/README.md shows two `redis-cli ACL SETUSER moose ...`"
    rules = []
    for block in blocks[: 2 if cluster else 1]:
        words = shlex.split(block.replace("\\\n", " "))
        assert words[:3] == ["ACL", "SETUSER", "moose"]
        rules += [f">{password}" if w.startswith(">") else w for w in words[3:]]
    return rules
