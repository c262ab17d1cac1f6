"""`moose top` and `moose profile NAME`: leaderboards and players, from the server's HTTP API."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import sys
import urllib.parse
from typing import Any

from moose.commands._common import DEFAULT_URL, url_help

Message = dict[str, Any]


def add_parser(subparsers: Any) -> None:
    """Register `moose top` and `moose profile`."""
    top = subparsers.add_parser(
        "top",
        help="show the leaderboard",
        description="The best rated players of a server, humans or bots (provisional ratings "
        "are not listed), in real-time games or in correspondence games (days a move: a "
        "rating of their own).",
    )
    top.add_argument("--bots", action="store_true", help="the bots' leaderboard")
    top.add_argument(
        "--correspondence",
        action="store_true",
        help="the correspondence games' leaderboard (default: real time)",
    )
    top.add_argument("--limit", type=int, default=20, help="players shown, 1-100 (default 20)")
    _common(top)
    top.set_defaults(func=run_top)
    profile = subparsers.add_parser(
        "profile",
        help="show a player's rating and last games",
        description="A player's rating, rank and last games: an account by name, or "
        "any player by id (p_...).",
    )
    profile.add_argument("player", metavar="NAME", help="an account's name, or a player id")
    profile.add_argument("--games", type=int, default=10, help="games shown (default 10)")
    _common(profile)
    profile.set_defaults(func=run_profile)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", default=DEFAULT_URL, help=url_help())
    p.add_argument("--json", action="store_true", help="print the server's JSON answer")


def http_base(url: str) -> str:
    """The HTTP base of a server from its WebSocket URL: ws://h:p/ws -> http://h:p."""
    parts = urllib.parse.urlsplit(url.split(",")[0].strip())
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    path = parts.path.removesuffix("/ws")
    return urllib.parse.urlunsplit((scheme, parts.netloc, path, "", ""))


async def fetch(url: str, path: str, **query: Any) -> tuple[int, Message]:
    """GET an API path; (status, JSON answer)."""
    import aiohttp

    async with (
        aiohttp.ClientSession() as session,
        session.get(http_base(url) + path, params=query) as resp,
    ):
        return resp.status, await resp.json()


def _get(args: argparse.Namespace, path: str, **query: Any) -> Message | None:
    """The answer, or None after printing why there is none."""
    import aiohttp

    try:
        status, answer = asyncio.run(fetch(args.url, path, **query))
    except (aiohttp.ClientError, OSError, ValueError) as exc:
        print(f"cannot reach {http_base(args.url)}: {exc}", file=sys.stderr)
        return None
    if status != 200:
        why = f"{answer.get('message', 'refused')} ({answer.get('error', status)})"
        print(why, file=sys.stderr)
        return None
    return answer


def run_top(args: argparse.Namespace) -> int:
    """Entry point of `moose top`."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    kind = "bots" if args.bots else "humans"
    pool = "correspondence" if args.correspondence else "realtime"
    answer = _get(args, "/api/leaderboard", kind=kind, limit=args.limit, pool=pool)
    if answer is None:
        return 1
    if args.json:
        print(json.dumps(answer, indent=2))
        return 0
    title = f"leaderboard: {kind}" + (", correspondence" if args.correspondence else "")
    table = Table(title=title)
    for col, justify in (
        ("#", "right"),
        ("name", "left"),
        ("rating", "right"),
        ("games", "right"),
        ("player", "left"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for rank, p in enumerate(answer["players"], 1):
        name = p["name"] + (" [bot]" if p["bot"] else "")
        table.add_row(str(rank), Text(name), str(p["rating"]), str(p["games"]), p["player"])
    Console(highlight=False).print(table)
    if not answer["players"]:
        print("nobody yet: a player is listed once their rating is no longer provisional")
    return 0


def run_profile(args: argparse.Namespace) -> int:
    """Entry point of `moose profile`."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    answer = _get(args, "/api/players/" + urllib.parse.quote(args.player, safe=""))
    if answer is None:
        return 1
    if args.json:
        print(json.dumps(answer, indent=2))
        return 0
    console = Console(highlight=False)
    p = answer
    kind = "bot" if p["bot"] else "account" if p["account"] else "guest"
    rank = f"#{p['rank']} of the {'bots' if p['bot'] else 'humans'}" if p["rank"] else "unranked"
    rating = f"{p['rating']}{'?' if p['provisional'] else ''}"
    if p["rating"] is None:  # a player whose games changed no rating
        rating = "none yet"
    console.print(
        f"{p['name']} ({kind}, {p['player']}): rating {rating} after {p['games']} "
        f"rated games, {rank}",
        markup=False,
    )
    c = p.get("correspondence")
    if c and c["rating"] is not None:
        where = f"#{c['rank']}" if c["rank"] else "unranked"
        console.print(
            f"correspondence: rating {c['rating']}{'?' if c['provisional'] else ''} after "
            f"{c['games']} rated games, {where}",
            markup=False,
        )
    table = Table(title="last games")
    for col in ("when (UTC)", "game", "table", "place", "rating", "change"):
        table.add_column(col)
    for g in p["history"][: args.games]:
        when = datetime.datetime.fromtimestamp(g["time"] / 1000, datetime.UTC)
        seats = ", ".join(
            f"{n}{' [bot]' if b else ''} {s}"
            for n, b, s in zip(g["names"], g["bots"], g["scores"], strict=True)
        )
        # An unrated game (a private table's, say) changed no rating.
        rated = g["rating"] is not None
        change = f"{g['change']:+d}" if rated else "unrated"
        table.add_row(
            when.strftime("%Y-%m-%d %H:%M"),
            g["game"],
            Text(seats),
            f"{g['place']}/{len(g['names'])}",
            str(g["rating"]) if rated else "-",
            change,
        )
    console.print(table)
    return 0
