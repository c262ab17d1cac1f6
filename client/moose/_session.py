"""A session over the socket: the games it follows, events in order, the inbox.

`Session` keeps, for every game it sits at or watches, the last seq delivered;
it hands events to `events()` in seq order, once each, and asks for `sync` when
it sees a gap. After a reconnect it syncs every game again, watches again and
queues again (`_restore`). `match`, `table` and `event` messages go to the inbox
that `moose.client.Client.events()` reads.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from moose._connection import CLOSED, Connection, Message
from moose._errors import MooseError

__all__ = ["Session", "is_final"]

log = logging.getLogger("moose.client")


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
    over: bool = False


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
            url, name=name, token=token, binary=binary, reconnect_timeout=reconnect_timeout,
            password=password, bot=bot,
        )  # fmt: skip
        self._games: dict[str, _Game] = {}
        self._queue_args: Message | None = None  # set while we want to be queued
        self._follow_games = False  # set while we follow the live games list

    def _welcomed(self, welcome: Message) -> None:
        """Follow the unfinished games the welcome lists."""
        for game in welcome.get("games") or ():
            if game not in self._games:
                # A seat we did not know of: matched while the socket was down, or
                # an earlier session's game. `sync` tells us the seat.
                self._games[game] = _Game(seat=None, announced=False)
                self._queue_args = None

    def _restore(self) -> None:
        """After hello: sync followed games, watch again, queue again."""
        for game, known in self._games.items():
            if known.over:
                continue
            known.syncing = False
            self._sync(game, known)
            if known.watching:
                code = {"code": known.code} if known.code else {}
                self._internal("watch", self._log_error, game=game, **code)
        queueing = any(r.message["type"] == "queue" for r in self._pending.values())
        if self._queue_args is not None and not queueing:
            self._internal("queue", self._log_error, **self._queue_args)
        if self._follow_games:
            self._internal("games", self._games_again, follow=True)

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
            self._queue_args = None
            known = self._games.setdefault(msg["game"], _Game(seat=msg.get("seat")))
            known.seat, known.announced = msg.get("seat"), True
            self._inbox.put_nowait(msg)
        elif mtype in ("table", "game_list"):
            self._inbox.put_nowait(msg)
        elif mtype == "error" and msg.get("code") == "rate_limited":
            self._refuse_oldest(msg)
        elif mtype == "error":
            log.warning("server error: %s: %s", msg.get("code"), msg.get("message"))
        await self._flush()

    def _on_event(self, msg: Message) -> None:
        """Deliver events in seq order, once each; a gap asks for `sync`."""
        game_id, seq = msg.get("game"), msg.get("seq")
        if not isinstance(game_id, str) or not isinstance(seq, int):
            return
        view = msg.get("view") or {}
        known = self._games.get(game_id)
        if known is None:
            known = self._games[game_id] = _Game(seat=view.get("seat"), announced=False)
        if seq <= known.seq:
            return  # seen already (a resend, or a sync overlapping live events)
        kind = (msg.get("event") or {}).get("kind")
        if kind != "state" and seq > known.seq + 1:
            known.top = max(known.top, seq)
            self._sync(game_id, known)
            return
        known.seq = seq
        known.top = max(known.top, seq)
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
        if is_final(msg):
            known.over = True
        self._inbox.put_nowait(msg)

    def _sync(self, game_id: str, known: _Game) -> None:
        """Ask for the events after the last one seen (one sync at a time per game)."""
        if known.syncing:
            return
        known.syncing = True
        before = known.seq

        def done(answer: Message) -> None:
            known.syncing = False
            if answer.get("type") == "error":
                if answer.get("code") != "not_in_game":  # a spectator may not sync
                    log.warning("sync of %s failed: %s", game_id, answer.get("message"))
                return
            if known.top > known.seq > before:
                self._sync(game_id, known)  # live events ran ahead during the sync

        fields: Message = {"game": game_id}
        if known.seq > 0:
            fields["since"] = known.seq
        self._internal("sync", done, **fields)

    def _games_again(self, answer: Message) -> None:
        """The list as it is after a reconnect: the followers' next update."""
        if answer.get("type") == "game_list":
            self._inbox.put_nowait({k: v for k, v in answer.items() if k != "id"})
        else:
            self._log_error(answer)

    def _log_error(self, answer: Message) -> None:
        if answer.get("type") == "error" and answer.get("code") != "already_queued":
            log.warning("%s: %s", answer.get("code"), answer.get("message"))


def is_final(msg: Message) -> bool:
    """Whether an event ends its game: the `over` event, or a `state` of a finished game."""
    kind = (msg.get("event") or {}).get("kind")
    return kind == "over" or (kind == "state" and bool((msg.get("view") or {}).get("over")))


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
