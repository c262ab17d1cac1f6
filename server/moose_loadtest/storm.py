"""`moose loadtest --spawn --instances 3 --storm N`: an instance dies under its players.

N players, spread round-robin over the instances, play games through the public
queue (at `--rate` moves a second in all, default `DEFAULT_RATE`). In the middle
of the measured window the last instance is killed (SIGKILL: no close frame, no
drain). Each of its players notices its socket gone and reconnects as the
client library does (`moose.backoff`: full jitter, the other instances in an
order of its own), says hello with its token and syncs every game it had or
the welcome lists; once each sync is answered it is back (resynced), and
answers the last event if it asks for its move.

The report: the dead instance's players, how many came back, the time from the
kill to the last one resynced, how their reconnects spread over the others,
the turns lost (a seat of the dead instance's players played by timeout from
the kill on), and the move latency of the other players (whose instances
lived) before the kill and from it to the last one resynced.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections import Counter
from typing import Any

import aiohttp

from moose import backoff
from moose.protocol import PROTOCOL_VERSION
from moose_loadtest.crowd import HELLO_TIMEOUT, Job, Player, Run, msg_pack, msg_unpack
from moose_loadtest.run import Options, Ui, percentiles, run_workers, summary

__all__ = ["DEFAULT_RATE", "StormPlayer", "storm_phase"]

DEFAULT_RATE = 500.0  # moves a second in all when --rate is not given
GIVE_UP = 60.0  # seconds a player keeps trying to reconnect
CONNECT_TIMEOUT = 10.0  # seconds for one attempt: the socket and the welcome
DRAIN = 5.0  # seconds after the window: games at a human pace are not waited for


class StormPlayer(Player):
    """A lean player that reconnects when its socket drops, and resyncs its games."""

    def __init__(self, run: Run, index: int, session: aiohttp.ClientSession) -> None:
        super().__init__(run, index, session)
        self.closing = False
        self.doomed = self.instance == run.job.kill  # on the instance that will die
        self.syncs: dict[int, str] = {}  # sync request id -> game, until answered
        self.held: dict[str, dict[str, Any]] = {}  # game -> its last event while syncing
        self.latest: dict[str, dict[str, Any]] = {}  # game -> the last event we had
        self.timeouts: set[tuple[str, int]] = set()  # (game, seq) of our seats timed out
        self.record: dict[str, Any] | None = None  # the reconnect, once the socket dropped

    async def close(self) -> None:
        self.closing = True
        await super().close()

    async def _send(self, msg: dict[str, Any]) -> None:
        # A move sent as the instance dies is lost with it: the resync asks again.
        with contextlib.suppress(ConnectionError, RuntimeError, aiohttp.ClientError):
            await super()._send(msg)

    async def _receive(self) -> dict[str, Any] | None:
        while True:
            msg = await super()._receive()
            if msg is None:
                if self.closing or not await self._reconnect():
                    return None
                continue
            kind = msg.get("type")
            if kind == "synced" or (kind == "error" and msg.get("id") in self.syncs):
                await self._synced(msg)
                continue
            if kind == "error" and msg.get("code") == "already_queued":
                continue  # the ticket of the old socket is still in the queue
            if kind == "event":
                self._timed_out(msg)
            return msg

    def _timed_out(self, msg: dict[str, Any]) -> None:
        """Keep the turns of our own seats that the server played by timeout."""
        event, game = msg["event"], msg["game"]
        mine = event.get("seat") == self.seats.get(game)
        if event.get("kind") == "move" and event.get("auto") == "timeout" and mine:
            self.timeouts.add((game, msg["seq"]))

    async def _on_event(self, msg: dict[str, Any]) -> bool:
        game, view = msg["game"], msg.get("view")
        if game not in self.seats and view and view.get("seat") is not None:
            self.seats[game] = view["seat"]  # matched while we were away
        self.latest[game] = msg
        if game in self.held:
            # Syncing: take every event, act once `synced` came (on the last one).
            self.held[game] = msg
            over = msg["event"].get("kind") == "over" or (view and view.get("over"))
            return await super()._on_event(msg) if over else False
        return await super()._on_event(msg)

    async def _synced(self, msg: dict[str, Any]) -> None:
        game = self.syncs.pop(msg["id"])
        last = self.held.pop(game, None)
        if not last and msg.get("seq") == self.latest.get(game, {}).get("seq"):
            # Nothing missed, but our answer to the last event may have died with the
            # instance: answer it again (a move it did commit would have had an event).
            last = self.latest[game]
        if msg["type"] == "error":  # no_such_game: gone
            self.seats.pop(game, None)
        elif last and last["event"].get("kind") != "over":
            await super()._on_event(last)
        if not self.syncs and self.record is not None:
            self.record["resynced"] = time.monotonic()
            if not self.seats and self.run.queueing:
                await self.queue()

    async def _reconnect(self) -> bool:
        """Back on an instance with full-jitter backoff, every game synced; False: gave up."""
        lost = time.monotonic()
        for task in self._paced:  # moves of the old socket: the resync asks again
            task.cancel()
        self.record = {"lost": lost, "doomed": self.doomed, "attempts": 0}
        spread = self.run.job.spread or (self.url,)
        order = backoff.reconnect_order(list(spread), self.url)
        attempt = 0
        while True:
            await asyncio.sleep(backoff.delay(attempt))
            url = order[attempt % len(order)]
            attempt += 1
            try:
                async with asyncio.timeout(CONNECT_TIMEOUT):
                    welcome = await self._hello(url)
                break
            except (aiohttp.ClientError, OSError, TimeoutError, ConnectionError) as exc:
                self.run.tally.errors[
                    f"reconnect attempt: {str(exc)[:40] or type(exc).__name__}"
                ] += 1
                if time.monotonic() - lost > GIVE_UP:
                    return False
        self.url = url
        self.record.update(attempts=attempt, welcomed=time.monotonic(), instance=spread.index(url))
        games = set(self.seats) | set(welcome.get("games") or ())
        for game in sorted(games):
            sync_id = next(self._ids)
            self.syncs[sync_id] = game
            self.held[game] = {}
            since = self.last.get(game, (None,))[0]
            msg: dict[str, Any] = {"type": "sync", "id": sync_id, "game": game}
            if since is not None:
                msg["since"] = since
            await self._send(msg)
        if not games:
            self.record["resynced"] = time.monotonic()
            if self.run.queueing:
                await self.queue()
        return True

    async def _hello(self, url: str) -> dict[str, Any]:
        """Open a socket to `url` and say hello with our token; the welcome."""
        ws = await self.session.ws_connect(
            url, autoping=True, heartbeat=None, max_msg_size=0, compress=0
        )
        try:
            hello = {"type": "hello", "id": 0, "protocol": PROTOCOL_VERSION, "token": self.token}
            await ws.send_bytes(msg_pack(hello))
            async with asyncio.timeout(HELLO_TIMEOUT):
                welcome = await _answer(ws, 0)
            if welcome.get("type") != "welcome":
                raise ConnectionError(f"hello refused: {welcome.get('code', '?')}")
        except BaseException:
            await ws.close()
            raise
        self.ws = ws
        return welcome

    def _on_moved(self, msg: dict[str, Any]) -> None:
        sent = self._moves.get(msg["id"])
        super()._on_moved(msg)
        if sent is not None and not self.doomed and self.run.in_window(sent):
            self.run.tally.storm.setdefault("survivor_moves", []).append(
                (sent, (time.monotonic() - sent) * 1000)
            )

    def report(self) -> None:
        """Put this player's reconnect and timeouts in the tally."""
        storm = self.run.tally.storm
        storm.setdefault("players", []).append((self.doomed, self.record))
        for game, seq in self.timeouts:
            storm.setdefault("timeouts", []).append((self.doomed, game, seq))


async def _answer(ws: aiohttp.ClientWebSocketResponse, msg_id: int) -> dict[str, Any]:
    """The answer to request `msg_id`; what comes before it (a game's events, which the
    server may send as soon as it knows the player) is skipped: the sync resends it."""
    while True:
        raw = await ws.receive()
        if raw.type != aiohttp.WSMsgType.BINARY:
            raise ConnectionError(f"closed during hello ({raw.type.name})")
        msg = msg_unpack(raw.data)
        if msg.get("id") == msg_id:
            return msg  # type: ignore[no-any-return]


async def storm_phase(
    opts: Options,
    urls: list[str],
    pids: list[int],
    redis_url: str | None,
    ui: Ui,
    source_ips: int,
) -> dict[str, Any]:
    """Players over every instance; the last one killed in the window's middle.
    `source_ips`: loopback source addresses per load-generator process."""
    if len(urls) < 2 or len(pids) < len(urls):
        raise ValueError("--storm needs --spawn and --instances 2 or more")
    kill = len(urls) - 1  # the first holds the bundled Redis: another one dies
    players = opts.storm - opts.storm % opts.table
    job = Job(
        mode="storm",
        url=urls[0],
        players=players,
        table=opts.table,
        bot=opts.bot,
        rate=opts.rate or DEFAULT_RATE,
        warmup=opts.warmup,
        duration=opts.duration,
        drain=min(opts.drain, DRAIN),
        source_ips=source_ips,
        spread=tuple(urls),
        redis_url=redis_url,
        kill=kill,
    )
    killed: dict[str, float] = {}

    async def window(start: float, workers: list[int]) -> None:
        await asyncio.sleep(max(0.0, start + opts.warmup + opts.duration / 2 - time.monotonic()))
        killed["at"] = time.monotonic()
        os.kill(pids[kill], signal.SIGKILL)

    merged = await run_workers(job, opts.procs, ui, "storm", window)
    out = summary(merged, opts.duration)
    out.update(storm_figures(merged.get("storm", {}), killed.get("at"), opts, len(urls)))
    return out


def storm_figures(
    storm: dict[str, list[Any]], kill_at: float | None, opts: Options, instances: int
) -> dict[str, Any]:
    """The storm's figures from the players' records (times: monotonic, one clock)."""
    if kill_at is None:
        return {"killed": False}
    records = storm.get("players", [])
    doomed = [r for d, r in records if d]
    back = [r for r in doomed if r and "resynced" in r]
    resynced = sorted(r["resynced"] - kill_at for r in back)
    last = kill_at + (resynced[-1] if resynced else 0.0)
    window_start = kill_at - opts.duration / 2
    moves = storm.get("survivor_moves", [])
    before = [ms for sent, ms in moves if window_start <= sent < kill_at]
    during = [ms for sent, ms in moves if kill_at <= sent <= max(last, kill_at + 1.0)]
    timeouts = storm.get("timeouts", [])
    return {
        "killed": True,
        "instances": instances,
        "players_of_dead_instance": len(doomed),
        "back": len(back),
        "kill_to_resynced_s": percentiles(resynced),
        "kill_to_last_resynced_s": round(resynced[-1], 3) if resynced else None,
        "attempts": percentiles([float(r["attempts"]) for r in back]),
        "back_on_instance": dict(sorted(Counter(r["instance"] for r in back).items())),
        "turns_lost": sum(1 for d, _, _ in timeouts if d),
        "timeouts_of_others": sum(1 for d, _, _ in timeouts if not d),
        "reconnects_of_others": sum(1 for d, r in records if not d and r),
        "survivors_move_ms_before": percentiles(before),
        "survivors_move_ms_during": percentiles(during),
    }
