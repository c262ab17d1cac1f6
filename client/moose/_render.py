"""Game events and views as text and rich renderables, for `moose play` and `moose watch`.

Card codes and moves are shown in RULES.md notation (`moose:kitchen`, `door`),
so what a player reads in the terminal is what the protocol and records say.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

Message = dict[str, Any]

_COVER_STYLE = {None: "green", "moose": "bold red", "door": "blue"}
_COVER_MARK = {None: "", "moose": "+moose", "door": "+door"}


def seat_name(names: Sequence[str] | None, seat: int | None, me: int | None = None) -> str:
    """A seat as a player reads it: its name, or `seat N`; `you` for your own seat."""
    if seat is None:
        return "nobody"
    if seat == me:
        return "you"
    if names and 0 <= seat < len(names) and names[seat]:
        return str(names[seat])
    return f"seat {seat}"


def _room(view: Message | None, owner: int, index: int) -> str:
    """`room 1 (kitchen)` when the view tells the type, else `room 1`."""
    try:
        rtype = view["houses"][owner]["rooms"][index]["type"] if view else None
    except (IndexError, KeyError, TypeError):
        rtype = None
    return f"room {index} ({rtype})" if rtype else f"room {index}"


def describe_move(
    move: Message,
    seat: int | None,
    names: Sequence[str] | None = None,
    *,
    me: int | None = None,
    view: Message | None = None,
) -> str:
    """One move as a sentence: `bob played door on room 0 (kitchen)`."""
    who = seat_name(names, seat, me)
    action = move.get("action")
    card = move.get("card", "")
    if action == "discard":
        return f"{who} discarded {card}"
    if action == "pass":
        return f"{who} passed"
    if action == "trap":
        return f"{who} sprang a trap: the moose and the trap go to the discard pile"
    if action == "allow":
        return f"{who} let the moose in"
    if card == "door" and seat is not None:
        whose = "your" if who == "you" else "their"
        return f"{who} played door on {whose} {_room(view, seat, move.get('room', 0))}"
    target = seat_name(names, move.get("target"), me)
    if card.startswith("moose:"):
        where = _room(view, move.get("target", 0), move.get("room", 0))
        return f"{who} played {card} on {_possessive(target)} {where}"
    return f"{who} played {card} on {target}"


def _possessive(who: str) -> str:
    return "your" if who == "you" else f"{who}'s"


def describe_choice(move: Message, view: Message, names: Sequence[str] | None = None) -> str:
    """A legal move as a menu entry, said to the seat that would make it."""
    me = view.get("seat")
    action = move.get("action")
    if action == "trap":
        return "trap: discard the moose with your trap (and draw a card)"
    if action == "allow":
        return "allow: let the moose in (keep your trap)"
    if action == "pass":
        return "pass (nothing can be played)"
    if action == "discard":
        return f"discard {move.get('card')}"
    text = describe_move(move, me, names, me=me, view=view)
    return text.removeprefix("you played ").replace("on your ", "on your own ", 1)


def describe_event(msg: Message, names: Sequence[str] | None = None, me: int | None = None) -> str:
    """One `event` message as a line of the game log."""
    event = msg.get("event") or {}
    view = msg.get("view") or {}
    kind = event.get("kind")
    seq = msg.get("seq")
    if kind == "start":
        names = event.get("names") or names
        who = ", ".join(seat_name(names, k, me) for k in range(event.get("players", 0)))
        dealer = seat_name(names, event.get("dealer"), me)
        text = f"cards dealt to {who}; {dealer} dealt"
    elif kind == "move":
        text = describe_move(event.get("move") or {}, event.get("seat"), names, me=me, view=view)
        auto = event.get("auto")
        if auto:
            text += f" ({auto})"
    elif kind == "away" and event.get("seat") == me:
        text = "you are away: the server plays for you"
    elif kind == "away":
        text = f"{seat_name(names, event.get('seat'), me)} is away: the server plays for them"
    elif kind == "back":
        who = seat_name(names, event.get("seat"), me)
        text = f"{who} {'are' if who == 'you' else 'is'} back"
    elif kind in ("over", "state") and event.get("abandoned"):
        text = "game abandoned: every player was away, so the server ended it (no winner)"
    elif kind in ("over", "state") and event.get("forfeit"):
        lost = " and ".join(seat_name(names, k, me) for k in event["forfeit"])
        won = " and ".join(seat_name(names, k, me) for k in event.get("winners") or [])
        text = f"game over: {lost} lost by forfeit (banned by a moderator); {won or 'nobody'} won"
    elif kind == "over":
        scores, winners = event.get("scores") or [], event.get("winners") or []
        text = "game over: " + _result_line(scores, winners, names, me)
        text += tie_note(view, scores, winners, names, me)
    elif kind == "state":
        text = f"following the game from here (turn of {seat_name(names, view.get('turn'), me)})"
    else:
        text = f"{kind} {event}"
    return f"[{seq}] {text}"


def describe_deadline(
    msg: Message, names: Sequence[str] | None = None, me: int | None = None
) -> str:
    """A `deadline` message (a turn goes on past its deadline) as a line of the game log."""
    who = seat_name(names, msg.get("to_act"), me)
    left = max(0, round((msg.get("deadline", 0) - msg.get("server_time", 0)) / 1000))
    if msg.get("reason") == "spared":
        why = "your connection dropped" if who == "you" else f"{who}'s connection dropped"
        text = f"{why}: {'your' if who == 'you' else 'their'} turn goes on, {left}s more"
    elif msg.get("reason") == "outage":
        whose = "your" if who == "you" else f"{who}'s"
        text = f"the server was briefly away: {whose} turn goes on, {left}s more"
    else:
        text = f"{who}'s turn goes on, {left}s more ({msg.get('reason')})"
    return f"[{msg.get('seq')}] {text}"


def _result_line(
    scores: Sequence[int], winners: Sequence[int], names: Sequence[str] | None, me: int | None
) -> str:
    parts = ", ".join(f"{seat_name(names, k, me)} {s}" for k, s in enumerate(scores))
    won = " and ".join(seat_name(names, k, me) for k in winners) or "nobody"
    return f"scores {parts}; {won} won"


def tie_note(
    view: Message,
    scores: Sequence[int],
    winners: Sequence[int],
    names: Sequence[str] | None,
    me: int | None,
) -> str:
    """How a tie on the lowest score was decided (RULES.md: the most doors), or ""."""
    if not scores or not winners:
        return ""
    tied = [k for k, score in enumerate(scores) if score == min(scores)]
    if len(tied) < 2:
        return ""
    houses = view.get("houses") or []
    doors = [
        sum(1 for room in (houses[k].get("rooms") or []) if room.get("cover") == "door")
        if k < len(houses)
        else 0
        for k in tied
    ]
    counts = ", ".join(f"{seat_name(names, k, me)} {d}" for k, d in zip(tied, doors, strict=True))
    if len(winners) == len(tied):
        return f" (a tie on {min(scores)}, and on doors too: {counts}; they share the win)"
    return f" (a tie on {min(scores)}, decided on doors: {counts})"


def final_view(msg: Message) -> Message:
    """The view of a game's last event, marked `abandoned` (with the scores as they
    stood) when the server ended it, `over` when a seat forfeited: by the rules such a
    game is not over."""
    view: Message = msg.get("view") or {}
    event = msg.get("event") or {}
    if event.get("abandoned"):
        return {**view, "abandoned": True, "scores": event.get("scores") or []}
    if event.get("forfeit"):  # lost by a banned seat: over, though not by the rules
        return {**view, "over": True, "scores": event.get("scores") or []}
    return view


def status_line(view: Message, names: Sequence[str] | None, seconds_left: float | None) -> Text:
    """Whose turn it is, and how long is left."""
    me = view.get("seat")
    if view.get("abandoned"):
        return Text("The game was abandoned: every player was away.", style="bold")
    if view.get("over"):
        return Text("The game is over.", style="bold")
    pending = view.get("pending")
    clock = f" - {max(0, int(seconds_left))}s left" if seconds_left is not None else ""
    if pending and pending.get("seat") == me:
        attacker = seat_name(names, pending.get("attacker"), me)
        room = _room(view, me, pending.get("room", 0)) if me is not None else "a room"
        return Text(
            f"{attacker} plays {pending.get('card')} on your {room}! Trap it or allow it{clock}",
            style="bold red",
        )
    to_act = view.get("to_act")
    if to_act is not None and to_act == me:
        return Text(f"Your move{clock}", style="bold yellow")
    who = seat_name(names, to_act, me)
    if pending:
        return Text(f"Waiting for {who} to answer a moose{clock}")
    return Text(f"Waiting for {who}{clock}")


def rating_text(rating: Message | None) -> str:
    """A seat's rating as shown: `1520`, `540?` while provisional, `-` for none."""
    if not rating:
        return "-"
    return f"{rating.get('rating')}{'?' if rating.get('provisional') else ''}"


def board(
    view: Message,
    names: Sequence[str] | None = None,
    seats: Message | None = None,
) -> Table:
    """Every seat's house (rooms with covers) and hand size, one row per seat.

    `seats`: the `bots` and `ratings` of the game's `match` or `start`, when known.
    """
    me = view.get("seat")
    table = Table(
        title=f"draw pile {view.get('draw_pile', 0)}, discard top "
        f"{(view.get('discard') or ['-'])[-1]}",
        expand=False,
        show_lines=False,
    )
    table.add_column("seat")
    table.add_column("house")
    table.add_column("rooms (index:type+cover)")
    table.add_column("hand", justify="right")
    bots, ratings = (seats or {}).get("bots") or [], (seats or {}).get("ratings") or []
    if ratings:
        table.add_column("rating", justify="right")
    scores = view.get("scores")
    if scores:
        table.add_column("score", justify="right")
    for k, house in enumerate(view.get("houses") or []):
        marker = "> " if view.get("to_act") == k else "  "
        # The seat's number: what `/mute SEAT` and `/block SEAT` take.
        name = Text(f"{marker}{k} {seat_name(names, k)}" + (" (you)" if k == me else ""))
        if k < len(bots) and bots[k]:
            name.append(" [bot]", style="magenta")
        if k == view.get("dealer"):
            name.append(" D", style="dim")
        rooms = Text()
        for i, room in enumerate(house.get("rooms") or []):
            if i:
                rooms.append("  ")
            cover = room.get("cover")
            rooms.append(
                f"{i}:{room.get('type')}{_COVER_MARK.get(cover, '')}",
                style=_COVER_STYLE.get(cover, ""),
            )
        row: list[RenderableType] = [
            name,
            "house" if house.get("house") else "-",
            rooms or Text("-", style="dim"),
            str((view.get("hand_sizes") or [0] * (k + 1))[k]),
        ]
        if ratings:
            row.append(rating_text(ratings[k] if k < len(ratings) else None))
        if scores:
            row.append(str(scores[k]))
        table.add_row(*row)
    return table


def hand_line(view: Message) -> Text:
    """Your own hand."""
    hand = view.get("hand")
    if hand is None:
        return Text("(spectating: no hand)", style="dim")
    return Text("Your hand: " + (" ".join(hand) if hand else "(empty)"), style="bold")


def choices(legal: Sequence[Message], view: Message, names: Sequence[str] | None) -> Text:
    """The legal moves, numbered from 1."""
    out = Text()
    for i, move in enumerate(legal, 1):
        if i > 1:
            out.append("\n")
        out.append(f"{i:>3}) ", style="bold cyan")
        out.append(describe_choice(move, view, names))
    return out


def final_scores(
    view: Message, names: Sequence[str] | None, ratings: Sequence[Message | None] | None = None
) -> Text:
    """The result of a finished game, said to the seat that reads it.

    `ratings`: the `over` event's, when the game was rated.
    """
    me = view.get("seat")
    scores, winners = view.get("scores") or [], view.get("winners") or []
    if view.get("abandoned"):
        parts = ", ".join(f"{seat_name(names, k)} {s}" for k, s in enumerate(scores))
        return Text(
            f"Final: abandoned, nobody won (every player was away; the server ended "
            f"it with the scores as they stood: {parts}).",
            style="bold",
        )
    result = _result_line(scores, winners, names, None) + tie_note(
        view, scores, winners, names, None
    )
    line = Text("Final: " + result + ".", style="bold")
    if me is not None:
        line.append("  You won!" if me in winners else "  You lost.", style="bold")
    mine = ratings[me] if ratings and me is not None and me < len(ratings) else None
    if mine:
        line.append(f"  Your rating: {rating_text(mine)} ({mine.get('change', 0):+d}).")
    return line


def screen(
    view: Message | None,
    names: Sequence[str] | None,
    *,
    legal: Sequence[Message] | None,
    seconds_left: float | None,
    log: Sequence[str],
    header: str,
    prompt: str,
    seats: Message | None = None,
    over_ratings: Sequence[Message | None] | None = None,
    banner: str | None = None,
) -> RenderableType:
    """The whole `moose play` screen: board, hand, whose turn, moves, log and prompt.

    `banner`: what the player must know for as long as it holds (an away seat).
    """
    parts: list[RenderableType] = [Text(header, style="dim")]
    if view is not None:
        parts += [
            board(view, names, seats),
            hand_line(view),
            status_line(view, names, seconds_left),
        ]
        if legal:
            parts.append(choices(legal, view, names))
        if view.get("over") or view.get("abandoned"):
            parts.append(final_scores(view, names, over_ratings))
    if banner:
        parts.append(Text(banner, style="bold reverse"))
    parts.append(Text("\n".join(log[-8:]), style="dim"))
    parts.append(Text(prompt, style="bold"))
    return Group(*parts)


def live_games(listing: Message) -> RenderableType:
    """A `game_list`: the live public games, newest first, and who is online."""
    now = listing.get("server_time") or 0
    table = Table(title="live games", title_justify="left")
    for column in ("game", "seats", "players", "started"):
        table.add_column(column)
    for game in listing.get("games") or ():
        bots = game.get("bots") or [None] * len(game.get("names") or ())
        who = ", ".join(
            f"{name} (bot)" if bot else str(name)
            for name, bot in zip(game.get("names") or (), bots, strict=False)
        )
        ago = max(0, (now - int(game.get("started") or now)) // 1000)
        table.add_row(str(game.get("game")), str(game.get("players")), who, f"{ago} s ago")
    footer = Text(
        f"{listing.get('online', 0)} players online, {listing.get('waiting', 0)} waiting; "
        "`moose watch GAME_ID` follows one."
    )
    if not listing.get("games"):
        return Group(Text("No public game is being played right now."), footer)
    return Group(table, footer)
