"""`moose admin arena create/list/end`: arena tournaments."""

from __future__ import annotations

import argparse

from rich.console import Console

from moose_server.arenas.runner import new_arena, parse_sizes
from moose_server.arenas.store import ArenaError, ArenaStore
from moose_server.commands.admin_output import table, when
from moose_server.moderation.moderator import ModerationError, Moderator, parse_duration

__all__ = ["arena"]


async def arena(args: argparse.Namespace, mod: Moderator, console: Console) -> int:
    """`moose admin arena STEP`."""
    arenas = ArenaStore(mod.store.redis)
    try:
        if args.arena_action == "create":
            return await _create(args, arenas, mod, console)
        if args.arena_action == "end":
            done = await arenas.finish(args.arena, now=True)
            console.print(f"arena {args.arena}: {done['status']} (games under way still count)")
            return 0
    except ArenaError as exc:
        raise ModerationError(exc.message) from exc
    now = await mod.store.now_ms()
    rows = [
        (
            a.id,
            a.name,
            a.who,
            f"{a.min_players}-{a.max_players}",
            when(a.start),
            when(a.end),
            a.state(now),
            ", ".join(a.winners),
        )
        for a in await arenas.listed()
    ]
    columns = ("id", "name", "for", "players", "start (UTC)", "end (UTC)", "state", "winners")
    console.print(table("Arenas", columns, rows))
    return 0


async def _create(
    args: argparse.Namespace, arenas: ArenaStore, mod: Moderator, console: Console
) -> int:
    try:
        sizes = parse_sizes(args.players)
        later = parse_duration(args.start_in) if args.start_in else 0
        start = await mod.store.now_ms() + later if later else 0
        call = new_arena(
            args.name, args.who, args.minutes, sizes, start_ms=start, rated=args.rated, by=mod.by
        )
    except ValueError as exc:
        raise ModerationError(str(exc)) from exc
    await arenas.create(call)
    got = await arenas.get(call.arena)
    sizes_text = f"{got.min_players}-{got.max_players}"
    console.print(
        f"created arena {got.id} for {got.who}: {when(got.start)} to "
        f"{when(got.end)} UTC, tables of {sizes_text}"
    )
    console.print(f"join it: moose arena join {got.id}")
    return 0
