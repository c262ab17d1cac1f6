"""A loop turn's commands on a Redis Cluster: one pipeline per primary (`Shards`).

redis-py's cluster pipeline sends a batch's commands to their nodes side by
side, but answers only once every node has: when a primary dies, its commands
are retried until a replica takes its slots over (a few seconds, the cluster's
``cluster-node-timeout`` and more), and the commands of the healthy primaries
in the same batch wait as long. A move, a deadline claim or an event read of a
game on a healthy primary would stall behind a dead one.

`Shards` keeps one `Batcher` (batch.py) per primary, each with its own batch in
flight: a command goes to the lane of the primary that holds its key's slot, as
the client's slot table says when it is queued. A dead primary stalls only the
commands of its own slots; the others' lanes go on. After a failover the slot
table names the replica that took over, and new commands go to its lane (the
cluster pipeline routes each command anew anyway: a lane is only whom it
waits with). A command with no key goes to a lane of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError, RedisError

from moose_server.storage.batch import BUSY, WINDOW, Arg, Batcher

__all__ = ["Shards", "key_of"]

SCRIPTS = {b"EVALSHA", b"EVAL", b"EVALSHA_RO", b"EVAL_RO", b"FCALL", b"FCALL_RO"}
KEYLESS = {b"TIME", b"PING", b"SCRIPT", b"INFO", b"CLUSTER", b"PUBLISH", b"SPUBLISH"}


def key_of(args: tuple[Arg, ...]) -> Arg | None:
    """The key a command is routed by (its first one), or None if it names none."""
    name = args[0]
    command = (name.encode() if isinstance(name, str) else bytes(name)).upper()  # type: ignore[arg-type]
    if command in SCRIPTS:
        return args[3] if len(args) > 3 and int(args[2]) > 0 else None
    if command in KEYLESS or len(args) < 2:
        return None
    return args[1]


class Shards:
    """One `Batcher` per cluster primary, chosen by each command's key (see above)."""

    def __init__(self, cluster: RedisCluster, timeout: float = 10.0, connections: int = 8) -> None:
        self.cluster = cluster
        self.timeout = timeout
        self.connections = connections  # a node's pool: commands sent alone at once, per lane
        self.window, self.busy = WINDOW, BUSY  # each lane's (Batcher), set as it is made
        self._lanes: dict[str, Batcher] = {}
        self._closed = False

    @property
    def batches(self) -> int:
        """Pipelines sent: one round trip each, per primary."""
        return sum(lane.batches for lane in self._lanes.values())

    def send(self, args: tuple[Arg, ...], source: str | None = None) -> asyncio.Future[Any]:
        """Queue one command in its primary's batch of this turn (Batcher.send)."""
        if self._closed:
            raise ConnectionError("the Redis batcher is closed")
        return self._lane(args).send(args, source)

    def script(
        self, sha: str, source: str, keys: Sequence[Arg], args: Sequence[Arg]
    ) -> asyncio.Future[Any]:
        """EVALSHA a script on its keys' primary; EVAL it where the node lacks it."""
        return self.send(("EVALSHA", sha, len(keys), *keys, *args), source)

    async def aclose(self) -> None:
        """Refuse new commands; wait until every lane's queued commands have replies."""
        self._closed = True
        await asyncio.gather(*(lane.aclose() for lane in self._lanes.values()))

    @property
    def lanes(self) -> list[Batcher]:
        """The batchers made so far, one per primary."""
        return list(self._lanes.values())

    def _lane(self, args: tuple[Arg, ...]) -> Batcher:
        name = self._primary(args)
        lane = self._lanes.get(name)
        if lane is None:
            lane = self._lanes[name] = Batcher(
                self.cluster, self.timeout, self.connections, self.window, self.busy
            )
        return lane

    def _primary(self, args: tuple[Arg, ...]) -> str:
        """The name ("host:port") of the primary of the command's slot; "" if none known."""
        key = key_of(args)
        if key is None:
            return ""
        try:
            slot = self.cluster.keyslot(key)
            return str(self.cluster.nodes_manager.get_node_from_slot(slot).name)
        except (RedisError, AttributeError):  # no slot table yet, or a slot uncovered
            return ""
