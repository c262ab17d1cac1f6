"""The subcommands of `moose admin`, one small function each (commands/admin.py parses).

Imported only when `moose admin` runs: it needs the server's dependencies.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from rich.console import Console

from moose_server.accounts.store import PlayerStore
from moose_server.commands.admin_arena import arena
from moose_server.commands.admin_output import table, when
from moose_server.moderation.moderator import ModerationError, Moderator, Target, parse_duration
from moose_server.moderation.store import ModerationStore
from moose_server.play.games import Games
from moose_server.settings import Settings
from moose_server.storage.connection import open_redis
from moose_server.storage.store import Store

__all__ = ["ACTIONS", "AdminError", "moderator"]

AdminError = ModerationError


@contextlib.asynccontextmanager
async def moderator(url: str, by: str) -> AsyncIterator[Moderator]:
    """A Moderator on the servers' Redis (MOOSE_BUCKETS as the servers have it)."""
    settings = Settings.from_env(redis_url=url)
    redis = await open_redis(url, 4)
    try:
        store = Store(redis, settings.buckets)
        records = ModerationStore(redis)
        games = Games(store, settings)
        kept = int(settings.token_ttl * 1000)
        yield Moderator(records, store, PlayerStore(redis), games, by, kept)
    finally:
        await redis.aclose()


async def _target(args: argparse.Namespace, mod: Moderator) -> Target:
    if (args.player is None) == (args.address is None):
        raise AdminError("name one account (NAME or player id) or one --address")
    return mod.address(args.address) if args.address else await mod.account(args.player)


def _heard(console: Console, instances: int) -> None:
    console.print(
        f"heard by {instances} instance(s)"
        if instances
        else "no instance is listening: it applies when one starts"
    )


async def ban(args: argparse.Namespace, mod: Moderator, console: Console) -> int:
    """`moose admin ban`."""
    target = await _target(args, mod)
    done, heard = await mod.ban(target, args.reason, parse_duration(args.duration))
    end = "for good" if not done.until else f"until {when(done.until)} UTC"
    console.print(f"banned {target.kind} {target} {end}: {args.reason}")
    _heard(console, heard)
    return 0


async def unban(args: argparse.Namespace, mod: Moderator, console: Console) -> int:
    """`moose admin unban`."""
    target = await _target(args, mod)
    heard = await mod.unban(target, args.reason)
    console.print(f"unbanned {target.kind} {target}")
    _heard(console, heard)
    return 0


async def bans(args: argparse.Namespace, mod: Moderator, console: Console) -> int:
    """`moose admin bans`."""
    rows = [
        (
            b.kind,
            f"{b.name} ({b.subject})" if b.name else b.subject,
            "permanent" if not b.until else when(b.until),
            b.reason,
            b.by,
            when(b.at),
        )
        for b in await mod.bans()
    ]
    console.print(table("Bans", ("kind", "who", "until (UTC)", "reason", "by", "since"), rows))
    return 0


async def end_session(args: argparse.Namespace, mod: Moderator, console: Console) -> int:
    """`moose admin end-session`."""
    target = await mod.account(args.player)
    heard = await mod.end_session(target, args.reason)
    console.print(f"ended the session of {target}")
    _heard(console, heard)
    return 0


async def takeover(args: argparse.Namespace, mod: Moderator, console: Console) -> int:
    """`moose admin takeover`."""
    target, heard = await mod.take_over(args.game, args.player, args.reason)
    console.print(f"the bot plays the seat of {target} in {args.game} until they come back")
    _heard(console, heard)
    return 0


async def refusals(args: argparse.Namespace, mod: Moderator, console: Console) -> int:
    """`moose admin refusals`."""
    recent = await mod.records.refusals(args.count)
    rows = [
        (when(r["at"]), r["limit"], r["address"], r.get("player", ""), r.get("name", ""))
        for r in recent
    ]
    console.print(
        table("Recent refusals", ("when (UTC)", "limit", "address", "player", "name"), rows)
    )
    now = await mod.store.now_ms()
    heavy = await mod.records.heaviest(now, args.hours, args.top)
    top_rows = [(limit, client, n) for limit, top in heavy.items() for client, n in top]
    console.print(
        table(f"Heaviest users, last {args.hours} h", ("limit", "client", "refusals"), top_rows)
    )
    return 0


async def reports(args: argparse.Namespace, mod: Moderator, console: Console) -> int:
    """`moose admin reports`."""
    rows = [
        (
            when(r["at"]),
            f"{r.get('name', '')} ({r.get('player', '')})",
            f"{r.get('reporter_name', '')} ({r.get('reporter', '')})",
            r.get("game", ""),
            r.get("reason", ""),
            r.get("text", ""),
        )
        for r in await mod.records.reports(args.count)
    ]
    # "chat line": the reported line's text, when a report names one
    columns = ("when (UTC)", "reported", "by", "game", "reason", "chat line")
    console.print(table("Reports", columns, rows))
    return 0


async def audit(args: argparse.Namespace, mod: Moderator, console: Console) -> int:
    """`moose admin audit`."""
    rows = [
        (when(r["at"]), r["by"], r["action"], r["target"], _until_or_game(r), r.get("reason", ""))
        for r in await mod.records.audit_log(args.count)
    ]
    columns = ("when (UTC)", "by", "action", "target", "until / game", "reason")
    console.print(table("Audit log", columns, rows))
    return 0


def _until_or_game(row: dict[str, str]) -> str:
    until = row.get("until", "")
    return when(until) if until.isdigit() else until or row.get("game", "")


ACTIONS: dict[str, Any] = {
    "ban": ban,
    "unban": unban,
    "bans": bans,
    "end-session": end_session,
    "takeover": takeover,
    "refusals": refusals,
    "reports": reports,
    "audit": audit,
    "arena": arena,
}
