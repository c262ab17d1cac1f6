"""`moose admin`'s command line: help for every action, and clear refusals that change nothing."""

from __future__ import annotations

import pytest
import redis

from moose_server.commands import admin
from moose_server.storage.keys import ModerationKeys

ACTIONS = ("ban", "unban", "bans", "end-session", "takeover", "refusals", "reports", "audit")


@pytest.mark.parametrize("action", ACTIONS)
def test_every_action_has_help(action, capsys):
    with pytest.raises(SystemExit) as done:
        admin.main([action, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert f"moose admin {action}" in text and len(text.splitlines()) > 4


def test_admin_alone_lists_its_actions(capsys):
    assert admin.main([]) == 2
    text = capsys.readouterr().out
    assert all(action in text for action in ACTIONS)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["ban", "--reason", "x"], "name one account"),
        (["ban", "bob", "--address", "10.0.0.1", "--reason", "x"], "name one account"),
        (["ban", "--address", "10.0.0.1", "--for", "soon", "--reason", "x"], "not a duration"),
        (["ban", "nobody", "--reason", "x"], "no account is called 'nobody'"),
        (["unban", "--address", "10.0.0.1"], "is not banned"),
        (["takeover", "g_nothing", "bob"], "no game"),
    ],
)
def test_a_wrong_action_is_refused_and_changes_nothing(redis_url, capsys, args, said):
    assert admin.main(["--redis", redis_url, *args]) == 1
    assert said in capsys.readouterr().err
    with redis.Redis.from_url(redis_url) as r:
        keys = ModerationKeys()
        assert not r.exists(keys.bans, keys.audit)


def test_no_redis_and_no_laptop_server_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MOOSE_REDIS_URL", raising=False)
    assert admin.main(["--data-dir", str(tmp_path), "bans"]) == 1
    assert "no moose serve runs with the data folder" in capsys.readouterr().err
