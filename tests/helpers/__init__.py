"""Everything the tests share, imported as ``from helpers import ...``.

Fixtures live in conftest.py; the names they and the test modules share live
here, so that no test module imports another (pytest puts ``tests/`` on the
path in rootdir mode).

- `games`: games without a server (stacked decks, scripted moves, seeded games).
- `cluster`: a Redis Cluster of three real servers (the embedded binary).
- `aof`: a copy of a server's AOF, put back to lose the writes made since.
- `servers`: `moose serve` subprocesses and in-process server instances.
- `hubs`: hubs of several instances over one Redis, and sockets that keep what they get.
- `sockets`: a raw WebSocket client, and games played and checked over it.
- `wire`: a WebSocket speaking JSON frames with no project code, for raw-protocol tests.
- `clients`: games played through the client library.
- `cli`: `moose` commands as subprocesses, driven line by line.
- `timing`: waiting for a condition instead of sleeping, a clock stepped by hand, a
  game's deadline made due.
- `certs`: a CA of a test's own and a server certificate it signed.
- `workout`: a server put through most of what it does (every Redis command it sends).
- `arenas`: `moose serve` processes for arena tests, and arenas made in Redis.
- `releases`: the previous release of the server, unpacked from git (deploy/RELEASES).
- `push`, `mail`: a push service on loopback and an SMTP server's handler, for notices.
- `lanes`: the `slow` mark and the guard behind the fast lane (conftest registers it).
"""

from __future__ import annotations

from helpers.aof import aof_copy, aof_restore
from helpers.arenas import arena_servers, create_arena
from helpers.certs import Certs, make_certs
from helpers.cli import ASK, FINAL, Run, admin, drive, spawn
from helpers.clients import check_views, play_match, play_seat
from helpers.cluster import RedisClusterNodes
from helpers.games import (
    ALLOW,
    EMPTYING_END,
    EMPTYING_HANDS,
    PASS,
    TRAP,
    card_count,
    deal,
    discard,
    door,
    emptying_game,
    find_position,
    house,
    moose,
    play,
    random_game,
    replay,
    room,
    stacked_deck,
)
from helpers.releases import (
    Release,
    listed_releases,
    previous_release,
    previous_source,
    release_is_ancestor,
)
from helpers.servers import (
    Instance,
    LoopbackPort,
    Serve,
    ServeProcess,
    cleanup,
    http_base,
    open_games,
    open_store,
    serve_several,
)
from helpers.sockets import (
    RawClient,
    account_socket,
    card_codes,
    check_game,
    check_no_leak,
    keys_of,
    play_in_order,
    play_out,
    replay_states,
    table_game,
)
from helpers.timing import Clock, make_due, make_due_after_lost_writes, stopped, until
from helpers.workout import readme_acl, workout

__all__ = [
    "ALLOW",
    "ASK",
    "EMPTYING_END",
    "EMPTYING_HANDS",
    "FINAL",
    "PASS",
    "TRAP",
    "Certs",
    "Clock",
    "Instance",
    "LoopbackPort",
    "RawClient",
    "RedisClusterNodes",
    "Release",
    "Run",
    "Serve",
    "ServeProcess",
    "account_socket",
    "admin",
    "aof_copy",
    "aof_restore",
    "arena_servers",
    "card_codes",
    "card_count",
    "check_game",
    "check_no_leak",
    "check_views",
    "cleanup",
    "create_arena",
    "deal",
    "discard",
    "door",
    "drive",
    "emptying_game",
    "find_position",
    "house",
    "http_base",
    "keys_of",
    "listed_releases",
    "make_certs",
    "make_due",
    "make_due_after_lost_writes",
    "moose",
    "open_games",
    "open_store",
    "play",
    "play_in_order",
    "play_match",
    "play_out",
    "play_seat",
    "previous_release",
    "previous_source",
    "random_game",
    "readme_acl",
    "release_is_ancestor",
    "replay",
    "replay_states",
    "room",
    "serve_several",
    "spawn",
    "stacked_deck",
    "stopped",
    "table_game",
    "until",
    "workout",
]
