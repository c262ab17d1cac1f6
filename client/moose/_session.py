"""A session over the socket: the games it follows, events in order, the inbox.

`Session` keeps, for every game it sits at or watches, the last seq delivered;
it hands events to `events()` in seq order, once each, and asks for `sync` when
it sees a gap. After a reconnect it syncs every game again, watches again and
queues again (`_restore`), and reads the chat lines it missed. `match`, `table`,
`event`, `deadline`, `chat` and rematch messages go to the inbox that
`moose.client.Client.events()` reads, and `gone` for a game that no longer
exists; challenges go to their own queue (`Client.challenges()`).

Redis may come back without its last writes; a game's history then goes back.
A `state` event is the game as it is now and is always taken, even at a seq
lower than one seen. An event at a seq seen before with another `server_time`
(its commit's time) shows a history written anew: events are dropped until the
`state` asked for arrives. A reconnect's sync starts one event early to check
that one.

A move whose event Redis lost is sent again with its move id (PROTOCOL.md, "When
the server loses its last writes"): the client keeps, for each move it sent, the
event it answered (its seq and a digest of its view). When an event at that seq
comes again after a `state` (the `state` itself, or one of the events that
follow it) and shows the same view, with the move among its legal moves, the
same move goes again with the same `move_id`, and the event reaches `events()`
without `legal`: it is answered. An event there that shows another view means
the game went another way: the moves sent from that seq on are forgotten.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import secrets
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from moose._chat import ChatLog
from moose._connection import CLOSED, Connection, Message
from moose._errors import MooseError

__all__ = ["Session", "is_final"]

log = logging.getLogger("moose.client")

SENT_KEPT = 64  # moves remembered per game, to send again: more than a seat makes in one
VIEWS_KEPT = 4  # views of the latest events of a game, for the moves that answer them


def view_digest(view: Message | None) -> str:
    """A fingerprint of a view: two are the same when their JSON is ("" for none)."""
    if view is None:
        return ""
    text = json.dumps(view, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


@dataclass
class _Sent:
    """A move sent in a game: sent again, with its move id, should Redis lose it."""

    move: Message
    move_id: str
    view: str  # view_digest of the event it answered ("": not known)


@dataclass
class _Game:
    """What the client knows of one game it sits at or watches."""

    seat: int | None
    seq: int = 0  # the last seq delivered
    top: int = 0  # the highest seq seen, ahead of `seq` while there is a gap
    watching: bool = False
    code: str | None = None  # the join code watched with (a private table's game)
    announced: bool = True  # whether `match` was delivered for it
    syncing: bool = False
    over: bool = False  # ended, or gone
    gone: bool = False  # the server no longer has it
    time: int = 0  # server_time of the event at `seq` (0 after a `state`)
    rewound: bool = False  # an event was rewritten: drop events until a `state`
    sent: dict[int, _Sent] = field(default_factory=dict)  # by the seq each answered
    views: dict[int, Message] = field(default_factory=dict)  # the latest events' views
    # Our deadline at `seq` as the server last told it: the event's, or a later
    # `deadline` message's or `synced` answer's (a spared turn, an outage, moves
    # deadlines without an event).
    deadline: int | None = None


class Session(Connection):
    """The games side of a client; the public API is `moose.client.Client`."""

    def __init__(
        self,
        url: str | Sequence[str],
        *,
        name: str | None = None,
        token: str | None = None,
        binary: bool = True,
        reconnect_timeout: float | None = 120.0,
        password: str | None = None,
        bot: bool = False,
    ) -> None:
        super().__init__(
            url,
            name=name,
            token=token,
            binary=binary,
            reconnect_timeout=reconnect_timeout,
            password=password,
            bot=bot,
        )
        self._games: dict[str, _Game] = {}
        self._queue_args: Message | None = None  # set while we want to be queued
        self._follow_games = False  # set while we follow the live games list
        # Provably fair deals: whether our next games' seats send a seed
        # (set by queue/create_table/join_table with fair=True), and the seed each sent.
        self.fair = False
        self.seeds: dict[str, str] = {}
        self._arenas_watched: set[str] = set()  # watched again after a reconnect
        # The unfinished games the last `welcome` listed: a session that comes back
        # to them hears of each as a `match` (with "resumed": true) once synced.
        self.welcome_games: list[str] = []
        # Challenges: `challenge_offer` messages, one queue per reader of
        # `Client.challenges()`; those heard before any reader wait for the first one.
        self._challenge_readers: list[asyncio.Queue[Any]] = []
        self._challenges_unread: deque[Message] = deque(maxlen=100)
        # Challenges a welcome listed (correspondence ones that waited for us): each is
        # heard once, however many welcomes list it again.
        self._challenges_listed: set[str] = set()
        self.chat = ChatLog()  # chat lines seen per room, muted seats

    def _heard_challenge(self, msg: Message) -> None:
        """A `challenge_offer` for every reader of `challenges()` (kept until the first)."""
        for reader in self._challenge_readers:
            reader.put_nowait(msg)
        if not self._challenge_readers:
            self._challenges_unread.append(msg)

    def _welcomed(self, welcome: Message) -> None:
        """Follow the unfinished games the welcome lists; hear the challenges it lists
        (correspondence ones that waited for us) as `challenge_offer`s, once each."""
        self.welcome_games = [g for g in welcome.get("games") or () if isinstance(g, str)]
        for game in welcome.get("games") or ():
            known = self._games.get(game)
            if known is None or known.gone:
                # A seat we did not know of: matched while the socket was down, or
                # an earlier session's game. `sync` tells us the seat.
                self._games[game] = _Game(seat=None, announced=False)
                self._queue_args = None
            elif known.over:
                known.over = False  # the server lost its end: it is being played again
        for offer in welcome.get("challenges") or ():
            if isinstance(offer, dict) and offer.get("challenge") not in self._challenges_listed:
                self._challenges_listed.add(str(offer.get("challenge")))
                self._heard_challenge(offer)

    def _restore(self) -> None:
        """After hello: sync followed games, watch again, queue again."""
        for game, known in self._games.items():
            if known.over:
                continue
            known.syncing = False
            self._sync(game, known, check=True)
            if known.watching:
                code = {"code": known.code} if known.code else {}
                self._internal("watch", self._log_error, game=game, **code)
        queueing = any(r.message["type"] == "queue" for r in self._pending.values())
        if self._queue_args is not None and not queueing:
            self._internal("queue", self._log_error, **self._queue_args)
        if self._follow_games:
            self._internal("games", self._games_again, follow=True)
        for arena in self._arenas_watched:
            self._internal("watch_arena", self._arena_again, arena=arena)
        for target, room, line in self.chat.hold():  # the lines said while we were away
            place = {"code" if room == "table" else "game": target}
            done = functools.partial(self._chat_again, (target, room))
            self._internal("chat_history", done, room=room, since=line, **place)

    async def _dispatch(self, msg: Message) -> None:
        if self.trace is not None:
            self.trace("recv", msg)
        mtype = msg.get("type")
        req = self._pending.pop(msg["id"], None) if "id" in msg and mtype != "event" else None
        if req is not None:
            self._answer(req, msg)
        elif mtype == "event":
            self._on_event(msg)
        elif mtype == "match":
            self._on_match(msg)
        elif mtype in ("table", "game_list", "rematch_offer", "rematch_started", "arena"):
            self._inbox.put_nowait(msg)
        elif mtype == "challenge_offer":
            if msg.get("to_player") == self.player and msg.get("status") == "open":
                self._challenges_listed.add(str(msg.get("challenge")))  # told: not again
            self._heard_challenge(msg)
        elif mtype == "chat":
            for line in self.chat.take(msg):
                self._inbox.put_nowait(line)
        elif mtype == "gone" and isinstance(msg.get("game"), str):
            self._gone(msg["game"])
        elif mtype == "deadline":
            self._on_deadline(msg)
        elif mtype == "error" and msg.get("code") == "rate_limited":
            self._refuse_oldest(msg)
        elif mtype == "error":
            log.warning("server error: %s: %s", msg.get("code"), msg.get("message"))
        await self._flush()

    def _on_match(self, msg: Message) -> None:
        """A game dealt to us: new, unless it is the very game we play (a second copy).

        A game id seen before, ended or gone, is a new deal: Redis lost that game
        (or its end) and the matchmaker dealt its table again under the same id.
        """
        self._queue_args = None
        game_id, seat = msg["game"], msg.get("seat")
        known = self._games.get(game_id)
        if known is None or known.over or known.seat not in (None, seat):
            known = self._games[game_id] = _Game(seat=seat)
        elif known.announced and known.seat == seat:
            return  # the game in progress: its events (or a `state`) follow as they come
        known.seat, known.announced = seat, True
        if self.fair and isinstance(msg.get("deal"), dict) and game_id not in self.seeds:
            self._send_seed(game_id)
        self._inbox.put_nowait(msg)

    def _send_seed(self, game_id: str) -> None:
        """Our random seed for a fair deal (PROTOCOL.md, "Provably fair deals")."""
        seed = self.seeds[game_id] = secrets.token_urlsafe(24)  # 32 printable characters

        def answered(answer: Message) -> None:
            if answer.get("type") == "error":  # too late (the seed time passed): dealt anyway
                log.info("seed for %s: %s", game_id, answer.get("message"))
                self.seeds.pop(game_id, None)

        self._internal("seed", answered, game=game_id, seed=seed)

    def _on_event(self, msg: Message) -> None:
        """Deliver events in seq order, once each; a gap asks for `sync`."""
        game_id, seq = msg.get("game"), msg.get("seq")
        if not isinstance(game_id, str) or not isinstance(seq, int):
            return
        view = msg.get("view") or {}
        known = self._games.get(game_id)
        if known is None:
            known = self._games[game_id] = _Game(seat=view.get("seat"), announced=False)
        kind = (msg.get("event") or {}).get("kind")
        if kind == "state":
            if not known.gone:
                self._take_state(game_id, known, msg)
            return
        if known.rewound or known.gone:
            return  # waiting for the state; or a game the server lost
        if seq <= known.seq:
            if seq == known.seq and known.time and msg.get("server_time") != known.time:
                self._rewound(game_id, known)
            return  # seen already (a resend, or a sync overlapping live events)
        if seq > known.seq + 1:
            known.top = max(known.top, seq)
            self._sync(game_id, known)
            return
        known.seq, known.time = seq, msg.get("server_time") or 0
        known.top = max(known.top, seq)
        self._deliver(game_id, known, msg)

    def _take_state(self, game_id: str, known: _Game, msg: Message) -> None:
        """A `state` event: the game as it is now, whatever the client saw before."""
        seq = msg["seq"]
        if seq < known.seq:
            log.warning(
                "game %s went back from seq %d to %d: the server lost its last writes",
                game_id,
                known.seq,
                seq,
            )
        known.seq = known.top = seq
        known.time, known.rewound = 0, False
        self._deliver(game_id, known, msg)

    def _on_deadline(self, msg: Message) -> None:
        """A turn goes on past its deadline (a spared turn, an outage): taken when it is
        for the last event we had (ours too, when the turn is our seat's), and handed
        to `events()`."""
        game_id, deadline = msg.get("game"), msg.get("deadline")
        known = self._games.get(game_id) if isinstance(game_id, str) else None
        if known is None or known.seq != msg.get("seq") or not isinstance(deadline, int):
            return  # out of date: a later event has a deadline of its own
        if known.seat is not None and msg.get("to_act") == known.seat:
            known.deadline = deadline
        self._inbox.put_nowait(msg)

    def deadline(self, game: str, seq: int) -> int | None:
        """Our deadline (ms, server clock) at event `seq` of `game` as the server last told
        it: a `deadline` message or a `synced` answer may have moved it since the event.
        None when `seq` is not the last event we had, or it is not our move there."""
        known = self._games.get(game)
        if known is None or known.seq != seq:
            return None
        return known.deadline

    def remember_move(self, game: str, seq: int | None, move: Message, move_id: str) -> None:
        """A move is being sent in answer to the event at `seq`: kept to send again."""
        known = self._games.get(game)
        if known is None or seq is None:
            return
        known.sent[seq] = _Sent(move, move_id, view_digest(known.views.get(seq)))
        while len(known.sent) > SENT_KEPT:
            del known.sent[min(known.sent)]

    def forget_move(self, game: str, seq: int | None, move_id: str) -> None:
        """The server refused the move: nothing to send again."""
        known = self._games.get(game)
        sent = known.sent.get(seq) if known is not None and seq is not None else None
        if known is not None and sent is not None and sent.move_id == move_id:
            del known.sent[seq]  # type: ignore[arg-type]

    def _answer_again(self, game_id: str, known: _Game, msg: Message, sent: _Sent) -> Message:
        """An event we answered came again after a `state`: Redis lost our move.

        The same view: the same move with the same move id, and the event goes on
        without `legal` (answered). Another view: the game went another way, and
        what we sent from this seq on answered events that no longer are.
        """
        seq = msg["seq"]
        same = not sent.view or view_digest(msg.get("view")) == sent.view
        if not same or sent.move not in (msg.get("legal") or ()):
            for old in [s for s in known.sent if s >= seq]:
                del known.sent[old]
            return msg

        def answered(answer: Message) -> None:
            if answer.get("type") == "error" and known.seq == seq:
                self._inbox.put_nowait(msg)  # let the player answer it after all

        log.info(
            "game %s: sending our move at seq %d again (move id %s): the server lost it",
            game_id,
            seq,
            sent.move_id,
        )
        self._internal(
            "move", answered, game=game_id, move=sent.move, seq=seq, move_id=sent.move_id
        )
        return {**msg, "legal": None, "deadline": None}

    def _rewound(self, game_id: str, known: _Game) -> None:
        """An event seen before came again as another: ask for the game as it is now."""
        log.warning(
            "game %s: event %d is not the one seen before: the server lost its "
            "last writes; asking for the game as it is",
            game_id,
            known.seq,
        )
        known.rewound = True
        self._sync(game_id, known)

    def _gone(self, game_id: str) -> None:
        """The game no longer exists on the server (lost, or expired): leave it."""
        known = self._games.get(game_id)
        if known is None or known.over:
            return
        known.over = known.gone = True
        log.warning("game %s no longer exists on the server: leaving it", game_id)
        if known.seat is not None or known.watching:
            self._inbox.put_nowait({"type": "gone", "game": game_id})

    def _deliver(self, game_id: str, known: _Game, msg: Message) -> None:
        """Hand an event to the inbox (after a `match` for a game not announced yet)."""
        seq = msg["seq"]
        sent = known.sent.get(seq)
        if sent is not None:  # only after a `state`: we answer events as they come
            msg = self._answer_again(game_id, known, msg, sent)
        known.views[seq] = msg.get("view")  # type: ignore[assignment]
        deadline = msg.get("deadline")
        known.deadline = deadline if isinstance(deadline, int) else None
        if len(known.views) > VIEWS_KEPT:
            del known.views[min(known.views)]
        view = msg.get("view") or {}
        if known.seat is None and view.get("seat") is not None:
            known.seat = view["seat"]
        if not known.announced and known.seat is not None:
            # A game we learnt of from `welcome` or a sync: announce it as a match.
            known.announced = True
            self._queue_args = None
            self._inbox.put_nowait(
                {
                    "type": "match",
                    "game": game_id,
                    "seat": known.seat,
                    "players": view.get("players"),
                    "names": (msg.get("event") or {}).get("names"),  # a `state` names them
                    "resumed": True,
                }
            )
        known.over = is_final(msg)  # a `state` may show a lost end undone
        self._inbox.put_nowait(msg)

    def _sync(self, game_id: str, known: _Game, *, check: bool = False) -> None:
        """Ask for the events after the last one seen (one sync at a time per game).

        `check`: from the one before, whose `server_time` shows whether the
        server still holds the history we saw (after a reconnect).
        """
        if known.syncing:
            return
        known.syncing = True
        before = known.seq

        def done(answer: Message) -> None:
            known.syncing = False
            if answer.get("type") == "error":
                if answer.get("code") == "no_such_game":
                    self._gone(game_id)
                elif answer.get("code") != "not_in_game":  # a spectator may not sync
                    log.warning("sync of %s failed: %s", game_id, answer.get("message"))
                return
            deadline = answer.get("deadline")
            if answer.get("seq") == known.seq and (deadline is None or isinstance(deadline, int)):
                known.deadline = deadline  # the deadline now, which an outage may have moved
            if known.rewound or known.top > known.seq > before:
                self._sync(game_id, known)  # live events ran ahead during the sync

        fields: Message = {"game": game_id}
        if known.seq > 0 and not known.rewound:
            fields["since"] = known.seq - 1 if check and known.time else known.seq
        self._internal("sync", done, **fields)

    def _games_again(self, answer: Message) -> None:
        """The list as it is after a reconnect: the followers' next update."""
        if answer.get("type") == "game_list":
            self._inbox.put_nowait({k: v for k, v in answer.items() if k != "id"})
        else:
            self._log_error(answer)

    def _arena_again(self, answer: Message) -> None:
        """A watched arena as it is after a reconnect: its watchers' next update."""
        if answer.get("type") == "arena":
            self._inbox.put_nowait({k: v for k, v in answer.items() if k != "id"})
        else:
            self._log_error(answer)

    def _chat_again(self, room: tuple[str, str], answer: Message) -> None:
        """The lines missed while away, and those held meanwhile, as `chat` lines."""
        got = answer.get("lines") if answer.get("type") == "chat_history" else None
        if got is None:
            self._log_error(answer)
        for line in self.chat.caught_up(room, [{"type": "chat", **ln} for ln in got or ()]):
            self._inbox.put_nowait(line)

    def _log_error(self, answer: Message) -> None:
        if answer.get("type") == "error" and answer.get("code") != "already_queued":
            log.warning("%s: %s", answer.get("code"), answer.get("message"))


def is_final(msg: Message) -> bool:
    """Whether an event ends its game: the `over` event, or a `state` of a finished game
    (over by the rules, or abandoned: ended by the server)."""
    event = msg.get("event") or {}
    if event.get("kind") == "state" and event.get("abandoned"):
        return True
    return event.get("kind") == "over" or (
        event.get("kind") == "state" and bool((msg.get("view") or {}).get("over"))
    )


class _Events:
    """The async iterator behind `Client.events()`."""

    def __init__(self, client: Session) -> None:
        self._client = client

    def __aiter__(self) -> _Events:
        return self

    async def __anext__(self) -> Message:
        inbox = self._client._inbox
        item = await inbox.get()
        if item is CLOSED or isinstance(item, MooseError):
            inbox.put_nowait(item)  # every later reader ends the same way
            if isinstance(item, MooseError):
                raise item
            raise StopAsyncIteration
        message: Message = item
        return message
