"""`moose admin arena create/list/end`, on a real Redis."""

from __future__ import annotations

import re

import pytest
import redis

from moose_server.commands import admin
from moose_server.storage.keys import ARENAS_KEY


def test_an_operator_creates_lists_and_ends_an_arena(redis_url, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the table on one line a row
    assert (
        admin.main(
            [
                "--redis",
                redis_url,
                "arena",
                "create",
                "--name",
                "Friday bots",
                "--minutes",
                "30",
                "--players",
                "2-3",
                "--for",
                "bots",
                "--start-in",
                "5m",
            ]
        )
        == 0
    )
    said = capsys.readouterr().out
    arena = re.search(r"created arena (a_[0-9a-f]{8}) for bots", said)
    assert arena is not None, said
    assert admin.main(["--redis", redis_url, "arena", "list"]) == 0
    listed = capsys.readouterr().out
    assert arena[1] in listed and "upcoming" in listed and "2-3" in listed
    assert admin.main(["--redis", redis_url, "arena", "end", arena[1]]) == 0
    assert "over" in capsys.readouterr().out  # no game was under way
    assert admin.main(["--redis", redis_url, "arena", "list"]) == 0
    assert "over" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["create", "--name", "x", "--minutes", "30", "--players", "1-4"], "table sizes"),
        (["create", "--name", "x", "--minutes", "0"], "more than 0 minutes"),
        (["create", "--name", "x", "--minutes", "5", "--start-in", "soon"], "not a duration"),
        (["end", "a_nothing"], "no such arena"),
    ],
)
def test_a_wrong_arena_action_is_refused_and_creates_nothing(redis_url, capsys, args, said):
    assert admin.main(["--redis", redis_url, "arena", *args]) == 1
    assert said in capsys.readouterr().err
    with redis.Redis.from_url(redis_url) as r:
        assert not r.exists(ARENAS_KEY)
