"""Redis comes back without its last writes while bots play on two instances.

Redis runs with `appendonly yes` and `appendfsync everysec`; a copy of its AOF
is taken, 0.8 s later Redis is killed (SIGKILL) and started again on the same
port from the copy: the writes of those 0.8 s are lost, as after a host crash.
Twelve bots, built on the client library's public API (`connect`, `events()`,
`move` with a `move_id`), play 2-player queue games with turns of 3 s on two
`moose serve` instances meanwhile.

What must hold: every move acknowledged (`moved`) is in its game's history as
that bot's move under its move id (a move Redis lost was sent again with the
same `move_id` and applied), unless the bot was told its game is `gone`; no
turn of these connected, ready bots is played by a timeout; every game ends or
is left by every seat.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from moose.client import Client
from moose_server.storage.embedded import EmbeddedRedis
from moose_server.storage.keys import move_field
from moose_server.storage.store import Store

from helpers import (
    RawClient,
    aof_copy,
    aof_restore,
    open_store,
    serve_several,
    table_game,
)
from helpers.fleet import BOTS, ENV, FLAGS, Bot, Fleet

Message = dict[str, Any]

LOST = 0.8  # seconds of writes Redis loses
THINK = 0.05  # seconds a bot takes over a move: a few moves of each game in the lost window
MOVES_BEFORE = 40  # moves acknowledged before the fault: every bot is busy
TIMEOUT = 50.0


async def lose_last_writes(redis_server: EmbeddedRedis) -> float:
    """Copy the AOF, wait LOST s, kill Redis, put the copy back, start it: the kill's time."""
    copy = aof_copy(redis_server)
    await asyncio.sleep(LOST)
    killed = time.time()
    redis_server.kill()  # as a host crash: what was not fsynced is lost
    aof_restore(redis_server, copy)
    await asyncio.to_thread(redis_server.start)
    return killed


@dataclass
class Outcome:
    """What one run counted."""

    lost: int = 0  # acknowledged moves whose event Redis lost
    again: int = 0  # ...applied again under their move id
    gone: int = 0  # ...in a game the bot was told is gone
    timeouts: int = 0  # turns the server played by timeout
    problems: list[str] = field(default_factory=list)


async def judge(store: Store, fleet: Fleet, killed: float) -> Outcome:
    """Check every acknowledged move, every game's history and every seat's end."""
    out = Outcome()
    killed_ms = int(killed * 1000)
    histories = {}
    for game in fleet.seated:
        histories[game] = {e.seq: e for e in await store.events(game)}
        for entry in histories[game].values():
            kind = entry.event["kind"]
            if entry.event.get("auto") == "timeout" or kind == "away":
                out.timeouts += kind != "away"
                out.problems.append(f"{game} seq {entry.seq}: {entry.event}")
    for ack in fleet.acked:
        if (ack.bot, ack.game) in fleet.gone:
            out.lost, out.gone = out.lost + 1, out.gone + 1
            continue
        raw: Any = await store.redis.hget(
            store.keys_of(ack.game).moves, move_field(ack.player, ack.move_id)
        )
        again = histories[ack.game].get(int(raw)) if raw is not None else None
        mine = {"kind": "move", "seat": ack.seat, "move": ack.move, "auto": None}
        applied = again is not None and again.event == mine
        if ack.at < killed and (not applied or again.time >= killed_ms):  # type: ignore[union-attr]
            out.lost += 1  # its event is gone, or written again after Redis came back
            out.again += applied
        if not applied:
            now = histories[ack.game].get(ack.seq)
            replaced = now.event if now is not None else None
            out.problems.append(f"{ack} lost, not applied again: seq {ack.seq} is {replaced}")
    for game, bots in fleet.seated.items():
        data = (await store.load(game)).data
        for bot in bots:
            if (bot, game) in fleet.gone:
                continue
            if data is None or not data["state"]["over"] or (bot, game) not in fleet.ended:
                out.problems.append(f"{bot} in {game}: neither ended nor gone")
    return out


async def test_moves_redis_lost_are_applied_again_and_no_ready_turn_times_out(
    moose_serve, redis_factory
):
    redis_server = redis_factory(appendonly=True, appendfsync="everysec")
    procs = serve_several(moose_serve, redis_server.url, ENV, flags=FLAGS)
    urls = [p.url for p in procs]
    fleet = Fleet()
    clients = [
        Client(urls[i % 2 :] + urls[: i % 2], name=f"bot{i}", reconnect_timeout=60.0)
        for i in range(BOTS)
    ]
    bots = [Bot(c, fleet, seed=i, think=THINK) for i, c in enumerate(clients)]
    try:
        async with asyncio.timeout(TIMEOUT):
            for client in clients:
                await client.open()
            tasks = [asyncio.create_task(b.run()) for b in bots]
            while len(fleet.acked) < MOVES_BEFORE or len(fleet.seated) < BOTS // 2:
                assert not any(t.done() for t in tasks), [t.result() for t in tasks if t.done()]
                await asyncio.sleep(0.02)
            killed = await lose_last_writes(redis_server)
            fleet.stopping = True  # finish the games under way, queue no more
            await asyncio.gather(*tasks)
    finally:
        for client in clients:
            await client.close()
    async with open_store(redis_server.url) as store:
        out = await judge(store, fleet, killed)
    logs = "".join(p.log.read_text() for p in procs)
    print(
        f"acked {len(fleet.acked)}, lost {out.lost}, applied again {out.again}, "
        f"gone {out.gone}, timeouts {out.timeouts}, problems {len(out.problems)}"
    )
    assert out.lost, "the fault lost no acknowledged move: it tested nothing"
    assert not out.problems, "\n".join(out.problems[:20])
    assert "went back" in logs  # the servers saw their sockets' games go back


class FromTheProtocol:
    """A seat played from PROTOCOL.md alone (JSON frames), with its rule for the moves
    a server lost ("Sending your lost moves again")."""

    def __init__(self, raw: RawClient, game: str, seat: int) -> None:
        self.raw, self.game, self.seat = raw, game, seat
        self.kept: dict[int, tuple[Message, Message, str]] = {}  # seq -> view, move, move id
        self.acked: list[tuple[int, Message, str]] = []  # seq of the event, move, move id
        self.sent: dict[int, int] = {}  # request id -> the seq its move answered
        self.ids = itertools.count(1)
        self.states: list[Message] = []
        self.waiting: Message | None = None  # an event of ours to answer once playing
        self.playing = asyncio.Event()
        self.playing.set()

    async def run(self) -> None:
        """Answer every message in order until the game is over."""
        while True:
            try:
                msg = await self.raw.expect(timeout=0.02)
            except TimeoutError:
                if self.playing.is_set() and self.waiting is not None:
                    await self.answer(self.waiting)  # our turn came while paused
                continue
            if msg["type"] == "moved":
                seq = self.sent.pop(msg["id"])
                self.acked.append((msg["seq"], *self.kept[seq][1:]))
            elif msg["type"] == "error" and msg.get("id") in self.sent:
                self.kept.pop(self.sent.pop(msg["id"]), None)  # refused: forget it (rule 1)
            elif msg["type"] == "event" and msg["game"] == self.game:
                if msg["view"]["over"]:
                    return
                await self.on_event(msg)

    async def on_event(self, msg: Message) -> None:
        if msg["event"]["kind"] == "state":
            self.states.append(msg)
        self.waiting = None
        seq, kept = msg["seq"], self.kept.get(msg["seq"])
        if kept is not None:  # an event we answered before: the server lost our move
            view, move, move_id = kept
            if view == msg["view"] and move in (msg["legal"] or ()):
                await self.send(seq, move, move_id)  # rule 2: the same move, the same id
                return
            for old in [s for s in self.kept if s >= seq]:  # the game went another way
                del self.kept[old]
        if msg["legal"] and msg["view"]["to_act"] == self.seat:
            await self.answer(msg)

    async def answer(self, msg: Message) -> None:
        """A new move (the first legal one), unless the test has paused us."""
        if not self.playing.is_set():
            self.waiting = msg
            return
        self.waiting, seq, move = None, msg["seq"], msg["legal"][0]
        self.kept[seq] = (msg["view"], move, f"{self.seat}-{seq}-{len(self.acked)}")
        await self.send(seq, move, self.kept[seq][2])

    async def send(self, seq: int, move: Message, move_id: str) -> None:
        request = next(self.ids)
        self.sent[request] = seq
        await self.raw.send(
            {
                "type": "move",
                "id": request,
                "game": self.game,
                "seq": seq,
                "move": move,
                "move_id": move_id,
            }
        )


async def test_a_client_following_the_protocol_gets_its_lost_moves_applied(
    moose_serve, redis_factory, ws_client
):
    """The same fault, for two clients written from PROTOCOL.md alone: every move
    Redis lost after answering it is applied again, by its move id, as theirs."""
    # appendfsync always: the copy holds exactly the moves answered before it.
    redis_server = redis_factory(appendonly=True, extra=["--appendfsync", "always"])
    proc = moose_serve("--redis", redis_server.url, *FLAGS, env=ENV)
    raws = [await ws_client(proc.url, name, binary=False) for name in ("ann", "bob")]
    game, seats = await table_game(raws)
    seated = [FromTheProtocol(r, game, seat) for r, seat in zip(raws, seats, strict=True)]
    tasks = [asyncio.create_task(s.run()) for s in seated]

    def acked() -> int:
        return sum(len(s.acked) for s in seated)

    async with asyncio.timeout(TIMEOUT):
        while acked() < 4:
            await asyncio.sleep(0.005)
        for s in seated:
            s.playing.clear()
        while any(s.sent for s in seated):  # no move in flight: the copy is exact
            await asyncio.sleep(0.005)
        copy, marks = aof_copy(redis_server), [len(s.acked) for s in seated]
        for s in seated:
            s.playing.set()
        while acked() < sum(marks) + 6:
            await asyncio.sleep(0.005)
        for s in seated:
            s.playing.clear()
        while any(s.sent for s in seated):
            await asyncio.sleep(0.005)
        # Answered after the copy: Redis loses them.
        lost = [(s, ack) for s, mark in zip(seated, marks, strict=True) for ack in s.acked[mark:]]
        redis_server.kill()
        aof_restore(redis_server, copy)
        await asyncio.to_thread(redis_server.start)
        for s in seated:
            s.playing.set()
        await asyncio.gather(*tasks)
    assert len(lost) >= 6
    # The seat to act is told with time to answer: its deadline was held (the outage
    # grace, MOOSE_OUTAGE_GRACE), not the turn Redis had (3 s from a commit before the loss).
    told = [m for s in seated for m in s.states if m["legal"]]
    assert told and all(m["deadline"] - m["server_time"] > 4000 for m in told), told
    async with open_store(redis_server.url) as store:
        events = {e.seq: e.event for e in await store.events(game)}
        for s, (seq, move, move_id) in lost:
            found = await store.redis.hget(
                store.keys_of(game).moves, move_field(s.raw.player, move_id)
            )
            assert found is not None, (s.seat, seq, move)  # applied again, by its move id
            assert events[int(found)] == {
                "kind": "move",
                "seat": s.seat,
                "move": move,
                "auto": None,
            }
    assert not [e for e in events.values() if e.get("auto") == "timeout"]
