"""The JavaScript bot kit (examples/js-bot) against a real `moose serve`.

The bot speaks JSON text frames only, as any outside client would. These tests
need `node` and `npm`: without them they are skipped, except in CI (CI set),
where that is a failure (.ci/run installs them). `npm ci` installs the kit's
locked `ws` into a copy of the kit, once per session.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

import moose
from moose import record
from moose.client import Client, ServerError
from moose_server.storage.embedded import free_port

from helpers import ServeProcess, admin, arena_servers, play_seat, until

pytestmark = pytest.mark.slow  # node, npm and `moose serve` processes

KIT = Path(__file__).resolve().parent.parent / "examples" / "js-bot"
OVER = re.compile(
    r"game (g_\w+) over: seat (\d), scores (\[[\d,]*\]), winners (\[[\d,]*\]): (won|lost)"
)
RUN_TIMEOUT = 90.0  # for a bot's few games, a restart and its reconnects

Message = dict[str, Any]


@pytest.fixture(scope="session")
def bot_js(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bot.js in a copy of the kit whose locked packages `npm ci` installed."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but node or npm is missing (.ci/run installs nodejs and npm)")
        pytest.skip("node and npm are not installed (apt-get install nodejs npm); CI runs these")
    kit = tmp_path_factory.mktemp("js-bot")
    ignore = shutil.ignore_patterns("node_modules", "*.token")
    shutil.copytree(KIT, kit, dirs_exist_ok=True, ignore=ignore)
    npm = subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund"],
        cwd=kit,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert npm.returncode == 0, f"npm ci failed:\n{npm.stdout}\n{npm.stderr}"
    return kit / "bot.js"


class JsBot:
    """`node bot.js` as a subprocess: its stdout line by line, its stderr in a file."""

    def __init__(self, proc: asyncio.subprocess.Process, stderr: Path) -> None:
        self.proc, self.stderr = proc, stderr
        self.lines: list[str] = []

    async def line(self, prefix: str) -> str:
        """Read stdout until a line starts with `prefix`; that line."""
        assert self.proc.stdout is not None
        async with asyncio.timeout(RUN_TIMEOUT):
            while raw := await self.proc.stdout.readline():
                self.lines.append(raw.decode().rstrip("\n"))
                if self.lines[-1].startswith(prefix):
                    return self.lines[-1]
        raise AssertionError(f"no line {prefix!r}: {self.lines}\n{self.stderr.read_text()}")

    async def finish(self) -> list[str]:
        """Wait for a clean exit (status 0); every stdout line."""
        assert self.proc.stdout is not None
        async with asyncio.timeout(RUN_TIMEOUT):
            rest = await self.proc.stdout.read()
            status = await self.proc.wait()
        self.lines += rest.decode().splitlines()
        assert status == 0, f"exit {status}: {self.lines}\n{self.stderr.read_text()}"
        return self.lines

    def games(self) -> dict[str, tuple[int, list[int], list[int]]]:
        """The finished games it printed: game -> (seat, scores, winners)."""
        found = [OVER.fullmatch(line) for line in self.lines if line.startswith("game ")]
        assert all(found), self.lines
        return {m[1]: (int(m[2]), json.loads(m[3]), json.loads(m[4])) for m in found if m}


RunJs = Callable[..., Awaitable[JsBot]]


@pytest.fixture
async def run_js(bot_js: Path, tmp_path: Path) -> AsyncIterator[RunJs]:
    """``bot = await run_js(url, name, *args)``: a JS bot with its own token file."""
    bots: list[JsBot] = []

    async def start(url: str, name: str, *args: str) -> JsBot:
        stderr = tmp_path / f"{name}.err"
        with stderr.open("wb") as err:
            proc = await asyncio.create_subprocess_exec(
                "node",
                str(bot_js),
                "--url",
                url,
                "--name",
                name,
                "--token-file",
                str(tmp_path / f"{name}.token"),
                *args,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                cwd=tmp_path,
            )
        bots.append(JsBot(proc, stderr))
        return bots[-1]

    yield start
    for bot in bots:
        if bot.proc.returncode is None:
            bot.proc.kill()
            await bot.proc.wait()


async def check_records(url: str, bot: JsBot, name: str, code: str | None = None) -> None:
    """Each game the bot printed replays from its record, with the bot's seat and result.

    `code`: a private table's join code, which its game's record is read with.
    """
    async with moose.connect(url, name="referee") as client:
        for game, (seat, scores, winners) in bot.games().items():
            rec = record.validate(await client.record(game, code))
            assert record.replay(rec).ok
            assert rec.names is not None and rec.names[seat] == name
            assert rec.result == {"scores": scores, "winners": winners}


async def test_two_js_bots_and_a_python_bot_finish_games_in_the_queue(
    run_js: RunJs, moose_serve: Callable[..., ServeProcess], tmp_path: Path
) -> None:
    # Server bots fill a table for whoever waits alone (three bots at 2-player tables).
    proc = moose_serve("--data-dir", str(tmp_path / "data"), "--queue-bots-after", "1")
    ann = await run_js(proc.url, "ann", "--games", "3", "--players", "2")
    ben = await run_js(proc.url, "ben", "--games", "3", "--players", "2")
    python = moose.play_bot(proc.url, "greedy", 3, name="greta", min_players=2, max_players=2)
    _, _, results = await asyncio.gather(ann.finish(), ben.finish(), python)
    assert len(results) == 3
    for bot, name in ((ann, "ann"), (ben, "ben")):
        assert len(bot.games()) == 3 and bot.lines[-1] == "finished 3 games"
        assert re.search(r"\] error ", bot.stderr.read_text()) is None  # nothing refused
        await check_records(proc.url, bot, name)


async def test_js_bots_play_at_a_private_table(
    run_js: RunJs, moose_serve: Callable[..., ServeProcess], tmp_path: Path
) -> None:
    proc = moose_serve("--data-dir", str(tmp_path / "data"))
    ann = await run_js(proc.url, "ann", "--create", "3", "--add-bot", "greedy")
    code = (await ann.line("table ")).split()[1]
    ben = await run_js(proc.url, "ben", "--join", code.lower())  # typed codes: any case
    await asyncio.gather(ann.finish(), ben.finish())
    assert ann.games().keys() == ben.games().keys() and len(ann.games()) == 1
    await check_records(proc.url, ann, "ann", code)
    await check_records(proc.url, ben, "ben", code)


async def test_the_js_bot_resumes_by_sync_when_the_server_restarts_mid_game(
    run_js: RunJs, moose_serve: Callable[..., ServeProcess], tmp_path: Path
) -> None:
    data = str(tmp_path / "data")
    server = moose_serve("--data-dir", data)
    ann = await run_js(server.url, "ann", "--players", "2")
    async with moose.connect(server.url, name="tess") as tess:
        await tess.queue(2, 2)
        game, ann_moves = await play_restarting(tess, lambda: restart(server, moose_serve, data))
    await ann.finish()
    assert list(ann.games()) == [game]
    log = ann.stderr.read_text()
    assert "closed 1012" in log  # the server drained: reconnect and sync
    hellos = re.findall(r"hello: ann \((p_\w+)\)", log)
    assert len(hellos) >= 2 and len(set(hellos)) == 1  # the saved token: the same player
    autos = {e["auto"] for e in ann_moves}  # ann played, not the server ("forced": a pass)
    assert None in autos and autos <= {None, "forced"}, ann_moves
    await check_records(server.url, ann, "ann")


def restart(server: ServeProcess, moose_serve: Callable[..., ServeProcess], data: str) -> None:
    """Stop `moose serve` (its sockets get close 1012) and start it again: same port, data."""
    assert server.stop() == 0
    moose_serve("--data-dir", data, port=server.port, log="serve-again.log")


async def play_restarting(tess: Client, restart: Callable[[], None]) -> tuple[str, list[Message]]:
    """Play tess's seat (first legal move); at her second turn restart the server.

    Returns the game and the other seat's moves after the restart.
    """
    game, seat, turns, after = "", -1, 0, []
    async for msg in tess.events():
        if msg["type"] == "match":
            game, seat = msg["game"], msg["seat"]
        if msg["type"] != "event" or msg["game"] != game:
            continue
        event = msg["event"]
        if turns >= 2 and event["kind"] == "move" and event["seat"] != seat:
            after.append(event)
        if msg["view"]["over"]:
            return game, after
        if msg["legal"]:
            turns += 1
            if turns == 2:
                await asyncio.to_thread(restart)
            try:
                await tess.move(game, msg["legal"][0], seq=msg["seq"])
            except ServerError as exc:  # an event seen again after the reconnect
                assert exc.code in ("stale_seq", "not_your_turn"), exc
    raise AssertionError("the events ended before the game did")


class DroppingProxy:
    """A WebSocket relay in front of the server that loses the bot's first `move`.

    That move never reaches the server, and the bot's socket is closed right
    after it, as when a connection dies with a move in flight. `moves` holds
    every `move` the bot sent, in order.
    """

    def __init__(self, target: str) -> None:
        self.target = target
        self.moves: list[Message] = []
        self.url = ""

    async def __aenter__(self) -> DroppingProxy:
        app = web.Application()
        app.router.add_get("/ws", self._serve)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        port = free_port()
        await web.TCPSite(self.runner, "127.0.0.1", port).start()
        self.url, self.session = f"ws://127.0.0.1:{port}/ws", aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.session.close()
        await self.runner.cleanup()

    async def _serve(self, request: web.Request) -> web.WebSocketResponse:
        bot = web.WebSocketResponse()
        await bot.prepare(request)
        async with self.session.ws_connect(self.target) as server:
            pumps = [
                asyncio.ensure_future(self._up(bot, server)),
                asyncio.ensure_future(self._down(server, bot)),
            ]
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
        await bot.close()
        return bot

    async def _up(
        self, bot: web.WebSocketResponse, server: aiohttp.ClientWebSocketResponse
    ) -> None:
        async for frame in bot:
            msg = json.loads(frame.data)
            if msg["type"] == "move":
                self.moves.append(msg)
                if len(self.moves) == 1:
                    return  # lost on the way: the bot's socket closes
            await server.send_str(frame.data)

    async def _down(
        self, server: aiohttp.ClientWebSocketResponse, bot: web.WebSocketResponse
    ) -> None:
        async for frame in server:
            await bot.send_str(frame.data)


async def test_a_move_lost_with_its_socket_is_sent_again_with_the_same_move_id(
    run_js: RunJs, moose_serve: Callable[..., ServeProcess], tmp_path: Path
) -> None:
    # Alone in the queue, ann gets a server bot after 0.5 s.
    proc = moose_serve("--data-dir", str(tmp_path / "data"), "--queue-bots-after", "0.5")
    async with DroppingProxy(proc.url) as proxy:
        ann = await run_js(proxy.url, "ann", "--players", "2")
        await ann.finish()
    lost, again = proxy.moves[:2]
    assert again == {**lost, "id": again["id"]}  # the same game, seq, move and move_id
    assert re.search(r"\] error ", ann.stderr.read_text()) is None  # and it was taken
    await check_records(proc.url, ann, "ann")


async def test_the_js_bot_stops_when_a_moderator_ends_its_session(
    run_js: RunJs, moose_serve: Callable[..., ServeProcess], redis_url: str
) -> None:
    proc = moose_serve("--redis", redis_url)
    ann = await run_js(proc.url, "ann", "--create", "2")  # waits at its table
    await ann.line("table ")
    (player,) = re.findall(r"hello: ann \((p_\w+)\)", ann.stderr.read_text())
    ended = await admin("--redis", redis_url, "end-session", player, "--reason", "cool off")
    assert ended.code == 0, ended.err
    async with asyncio.timeout(RUN_TIMEOUT):
        assert await ann.proc.wait() == 3  # stopped by the server, without reconnecting
    log = ann.stderr.read_text()
    assert "closed 4004: a moderator ended the session" in log and log.count("hello:") == 1


async def test_the_js_bot_waits_retry_after_when_it_is_rate_limited(
    run_js: RunJs, moose_serve: Callable[..., ServeProcess], tmp_path: Path
) -> None:
    # 3 messages a second: under the bot's own pace of 15, so its moves are refused.
    # A turn of 60 s: a bot that did not send a refused move again would not finish.
    slow = {"MOOSE_RATE": "3", "MOOSE_BURST": "3"}
    args = ("--data-dir", str(tmp_path / "data"), "--queue-bots-after", "0.5", "--turn-time", "60")
    proc = moose_serve(*args, env=slow)
    ann = await run_js(proc.url, "ann", "--players", "2")
    await ann.finish()
    log = ann.stderr.read_text()
    assert "error rate_limited (move)" in log
    assert "closed" not in log  # never flooding: 5 refusals in a row close with 1008
    await check_records(proc.url, ann, "ann")


async def test_a_js_bot_refused_a_bot_session_asks_again_until_one_is_free(
    run_js: RunJs, moose_serve: Callable[..., ServeProcess], tmp_path: Path
) -> None:
    # One bot session per address: ben is refused while ann waits at her table.
    args = ("--data-dir", str(tmp_path / "data"), "--queue-bots-after", "0.5")
    proc = moose_serve(*args, env={"MOOSE_BOT_SESSIONS_PER_ADDRESS": "1"})
    ann = await run_js(proc.url, "ann", "--create", "2")
    code = (await ann.line("table ")).split()[1]
    ben = await run_js(proc.url, "ben", "--players", "2")

    async def refused() -> bool:
        return "error too_many_sessions (hello)" in ben.stderr.read_text()

    await until(refused)
    async with moose.connect(proc.url, name="tess") as tess:  # a person: no bot session
        await tess.join_table(code)
        await play_seat(tess, "greedy")  # ann plays her game, and leaves
    await asyncio.gather(ann.finish(), ben.finish())  # then ben is let in
    await check_records(proc.url, ben, "ben")


async def test_a_python_client_challenges_the_js_bot_by_its_player_id_and_they_play(
    run_js: RunJs, moose_serve: Callable[..., ServeProcess], tmp_path: Path
) -> None:
    proc = moose_serve("--data-dir", str(tmp_path / "data"))
    ann = await run_js(proc.url, "ann", "--accept-challenges")  # one game, then it stops
    player = (await ann.line("challenge me: ")).split()[-1]
    async with moose.connect(proc.url, name="carl") as carl:
        sent = await carl.challenge(player, 2)  # a guest bot: challenged by its player id
        assert (sent["to"], sent["to_player"], sent["status"]) == ("ann", player, "open")
        async with asyncio.timeout(RUN_TIMEOUT):  # an unanswered challenge: no match
            game, _, _ = await play_seat(carl, "greedy")
    assert (await ann.finish())[-1] == "finished 1 game"
    assert list(ann.games()) == [game]
    assert f"challenge {sent['challenge']} from carl: accepted" in ann.stderr.read_text()
    await check_records(proc.url, ann, "ann")


async def test_two_js_bots_join_an_arena_and_play_its_games_until_it_is_over(
    run_js: RunJs, moose_serve: Callable[..., ServeProcess], redis_url: str
) -> None:
    [proc] = arena_servers(moose_serve, redis_url, 1)
    arena = await admin_arena(redis_url)
    bots = [await run_js(proc.url, name, "--arena", arena) for name in ("ann", "ben")]
    for bot in bots:  # each plays until the arena is over
        lines = await bot.finish()
        assert f"arena {arena} over" in lines and bot.games(), lines
    async with moose.connect(proc.url, name="referee") as referee:
        shown = await referee.arena(arena)
    assert shown["arena"]["state"] == "over"
    scored = {g["game"] for g in shown["games"] if g["points"] is not None}
    for bot, name in zip(bots, ("ann", "ben"), strict=True):
        assert set(bot.games()) <= scored  # every game it printed was this arena's
        (mine,) = [s for s in shown["standings"] if s["name"] == name]
        assert mine["games"] == len(bot.games())
        await check_records(proc.url, bot, name)


async def test_a_js_bot_with_games_leaves_the_arena_after_its_last_game(
    run_js: RunJs, moose_serve: Callable[..., ServeProcess], redis_url: str
) -> None:
    [proc] = arena_servers(moose_serve, redis_url, 1)
    arena = await admin_arena(redis_url)
    ann = await run_js(proc.url, "ann", "--arena", arena, "--games", "1")
    ben = await run_js(proc.url, "ben", "--arena", arena)  # then waits alone until the end
    assert (await ann.finish())[-1] == "finished 1 game"
    assert len(ann.games()) == 1 and f"arena {arena} over" not in ann.lines
    async with moose.connect(proc.url, name="referee") as referee:
        standings = (await referee.arena(arena))["standings"]
    (mine,) = [s for s in standings if s["name"] == "ann"]
    assert (mine["state"], mine["games"]) == ("left", 1)  # not seated again
    assert f"arena {arena} over" in await ben.finish()


async def admin_arena(redis_url: str) -> str:
    """`moose admin arena create`: a 12-second arena for bots at 2-player tables; its id."""
    made = await admin(
        "--redis",
        redis_url,
        "arena",
        "create",
        "--name",
        "JS bots",
        "--minutes",
        "0.2",
        "--players",
        "2-2",
        "--for",
        "bots",
    )
    assert made.code == 0, made.err
    found = re.search(r"created arena (a_[0-9a-f]+)", "".join(made.out))
    assert found is not None, made.out
    return found[1]


def test_the_token_files_the_kit_keeps_are_ignored_by_git() -> None:
    kit = Path(__file__).parent.parent / "examples" / "js-bot"
    default = re.search(r"tokenFile: .*`\$\{v\.name\}(\.\w+)`", (kit / "options.js").read_text())
    assert default, "options.js names the token file NAME.token"
    ignored = (kit / ".gitignore").read_text().split()
    assert f"*{default[1]}" in ignored
