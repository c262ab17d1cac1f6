"""`moose challenges` as a real subprocess: says and changes who may challenge you, and
the server holds to it (a raw client's challenge to that player is `not_allowed`)."""

from __future__ import annotations

import pytest

from moose import _saved

from helpers import drive, spawn

pytestmark = pytest.mark.slow  # runs `moose challenges`


async def test_moose_challenges_reads_and_changes_who_may_challenge_you(
    serve, config_home, ws_client
) -> None:
    url = (await serve()).url
    first = await drive(await spawn("challenges", "--url", url, "--name", "ann"))
    assert first.code == 0, first.text + first.err
    assert "anyone may challenge you (everyone)" in first.text
    changed = await drive(
        await spawn("challenges", "--url", url, "--name", "ann", "--from", "nobody")
    )
    assert changed.code == 0 and "nobody may challenge you (nobody)" in changed.text
    # The player the command kept a session of: online, and refused to a challenger.
    ann = await ws_client(url, None)
    token = _saved.load(url, "ann")
    assert token is not None and (await ann.hello(token=token))["type"] == "welcome"
    assert (await ann.request("challenge_setting"))["challenges"] == "nobody"
    bob = await ws_client(url, "bob")
    refused = await bob.request("challenge", name=ann.player)
    assert refused["code"] == "not_allowed", refused
    again = await drive(await spawn("challenges", "--url", url, "--name", "ann"))
    assert "nobody may challenge you (nobody)" in again.text, again.text
    bad = await drive(await spawn("challenges", "--url", url, "--name", "ann", "--from", "pals"))
    assert bad.code == 2 and "invalid choice" in bad.err
