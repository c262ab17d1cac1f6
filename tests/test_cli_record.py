"""Game records on the command line: `moose play` keeps each one, `moose record` fetches
one, `moose verify GAME` checks one on the server; refusals said plainly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from moose import record as records

from helpers import drive, spawn


def test_an_api_refusal_saved_as_a_record_is_named_as_such() -> None:
    body = '{"error": "no_such_game", "message": "no game g_0123456789"}'
    with pytest.raises(
        records.RecordError,
        match="not a game record but the server's refusal: no game g_0123456789 \\(no_such_game\\)",
    ):
        records.loads(body)


@pytest.mark.slow
async def test_play_keeps_the_record_and_record_and_verify_fetch_it(
    url: str, tmp_path: Path
) -> None:
    run = await drive(
        await spawn("play", "--url", url, "--name", "host", "--create", "2", "--bots", "greedy")
    )
    assert run.code == 0, run.text + run.err
    game = re.search(r"game (g_\w+): you are seat", run.text)
    saved = re.search(r"the game's record is saved in (\S+) \(`moose verify`", run.text)
    assert game and saved, run.text
    kept = Path(saved[1])
    assert kept.name == f"moose-{game[1]}.json" and kept.is_relative_to(tmp_path)
    assert records.replay(records.load(kept)).ok

    checked = await drive(await spawn("verify", str(kept)))
    assert (checked.code, checked.text) == (0, "fair\n"), checked.err
    # A private table's game: its players fetch it, others need the join code.
    code = re.search(r"table (\w+) created", run.text)
    assert code
    stranger = await drive(await spawn("record", game[1], "--url", url, "--name", "eve"))
    assert stranger.code == 1
    assert f"game {game[1]} is a private table's: give its join code with --code" in stranger.err
    out = tmp_path / "rec.json"
    fetched = await drive(
        await spawn(
            "record", game[1], "--url", url, "--name", "eve", "--code", code[1], "-o", str(out)
        )
    )
    assert fetched.code == 0, fetched.err
    assert f"saved the record of game {game[1]} to {out}" in fetched.text
    assert records.load(out) == records.load(kept)
    by_id = await drive(await spawn("verify", game[1], "--url", url, "--name", "host"))
    assert (by_id.code, by_id.text) == (0, "fair\n"), by_id.err


@pytest.mark.slow
async def test_record_of_an_unknown_game_says_the_server_has_none(url: str) -> None:
    for command in ("record", "verify"):
        run = await drive(await spawn(command, "g_0000000000", "--url", url))
        assert run.code == (1 if command == "record" else 2)
        said = run.err + run.text
        assert "no finished game g_0000000000 on this server" in said, said
        assert "Traceback" not in said and "'players'" not in said
