"""A loop turn's commands on a Redis Cluster: one batch per primary (`Shards`).

redis-py's cluster pipeline sends a batch's commands to their nodes side by
side, but answers only once every node has: when a primary dies, its commands
are retried until a replica takes its slots over (a few seconds, the cluster's
``cluster-node-timeout`` and more), and the commands of the healthy primaries
in the same batch wait as long. A move, a deadline claim or an event read of a
game on a healthy primary would stall behind a dead one.

`Shards` keeps one `Batcher` (batch.py) per primary, each with its own batch in
flight: a command goes to the `Lane` of the primary that holds its key's slot,
as the cluster client's slot table says when it is queued. A dead primary
stalls only the commands of its own slots; the others' lanes go on. A command
with no key goes to a lane of its own, through the cluster client.

A lane knows its node, so it sends its batch as batch.py does on one node: on a
redis-py connection of its own to that node (made by `node_client`'s pool: the
cluster client's options for that node, the hiredis packer of packing.py, no
socket timeout) rather than through the cluster pipeline, which works out each
command's slot and node again, wraps each in objects of its own and packs it in
pure Python (one instance's server CPU a move on a Cluster: x1.36 one node's
that way, x1.08 on a plain pipeline to the node; BENCHMARKS.md, "Several
instances"; on the connection, 0.87x the pipeline's at full speed, alternated
runs: BENCHMARKS.md). The cluster client keeps the slot table and takes what a
node does not answer itself, with its redirects and retries:

- a reply that says the command was not the node's to run, so it ran nowhere
  (MOVED, ASK: a slot moved or moving; TRYAGAIN, CLUSTERDOWN; CROSSSLOT, which
  the cluster client refuses before sending): that command, through the cluster
  pipeline, which follows the redirect and learns the slot's new primary (the
  next commands of that slot go to its lane);
- a lost connection (a primary killed, a connection closed; the lane's client
  does not try again itself): the whole batch, through the cluster pipeline and
  then one by one with the cluster client's retries (batch.py), which refresh
  the slot table until a replica has taken the slots over. The node may have run
  some of it: every command is safe to send twice (store.py's docstring);
- a batch that cannot be sent (a command that cannot be encoded): each command
  alone through the cluster client, as batch.py does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import (
    AskError,
    ClusterCrossSlotError,
    ClusterDownError,
    ConnectionError,
    MovedError,
    RedisError,
    TryAgainError,
)

from moose_server.storage.batch import BUSY, WINDOW, Arg, Batcher
from moose_server.storage.packing import packing

__all__ = ["Lane", "Shards", "key_of"]

SCRIPTS = {b"EVALSHA", b"EVAL", b"EVALSHA_RO", b"EVAL_RO", b"FCALL", b"FCALL_RO"}
KEYLESS = {b"TIME", b"PING", b"SCRIPT", b"INFO", b"CLUSTER", b"PUBLISH", b"SPUBLISH"}

# A node's replies that say a command was not its to run, and ran nowhere: the cluster
# client sends it where its slot is now (MOVED, ASK), waits for the cluster (TRYAGAIN,
# CLUSTERDOWN), or refuses it as the client refuses keys of two slots (CROSSSLOT).
ELSEWHERE = (MovedError, AskError, TryAgainError, ClusterDownError, ClusterCrossSlotError)

# The cluster client's own connection options that a plain client to one node has no use for.
CLUSTER_ONLY = {"himport_registry", "oss_cluster_maint_notifications_handler"}


def key_of(args: tuple[Arg, ...]) -> Arg | None:
    """The key a command is routed by (its first one), or None if it names none."""
    name = args[0]
    command = (name.encode() if isinstance(name, str) else bytes(name)).upper()  # type: ignore[arg-type]
    if command in SCRIPTS:
        return args[3] if len(args) > 3 and int(args[2]) > 0 else None
    if command in KEYLESS or len(args) < 2:
        return None
    return args[1]


def node_client(node: ClusterNode) -> aioredis.Redis:
    """A plain client to one cluster node, with the options of the cluster client's own
    connections to it (credentials, TLS) and the hiredis packer (packing.py); no socket
    timeout (the batch's own bound is enough, batch.py) and no retry of its own (a lane
    sends what failed through the cluster client). Its pool makes the lane's one
    connection (batch.py): a lane has one batch in flight."""
    options: dict[str, Any] = {
        k: v for k, v in node.connection_kwargs.items() if k not in CLUSTER_ONLY
    }
    options.update(socket_timeout=None, retry=Retry(NoBackoff(), 0))
    base: Any = node.connection_class  # TCP or TLS, as the cluster client's
    options["connection_class"] = packing(base)
    pool = aioredis.BlockingConnectionPool(max_connections=1, timeout=10, **options)
    return aioredis.Redis(connection_pool=pool)


class Lane(Batcher):
    """The batcher of one primary: its batch on a connection to that node; what the
    node does not answer itself goes through the cluster client (module docstring)."""

    retried = ELSEWHERE  # not the node's to run: through the cluster client
    resends = 0  # a lost connection's batch goes through the cluster client (`_lost`)

    def __init__(
        self,
        node: aioredis.Redis,
        cluster: RedisCluster,
        timeout: float = 10.0,
        connections: int = 8,
        window: float = WINDOW,
        busy: float = BUSY,
    ) -> None:
        super().__init__(node, timeout, connections, window, busy)
        # The cluster client's path: its pipeline, with its routing and retries.
        self.routed = Batcher(cluster, timeout, connections)
        self.rerouted = 0  # commands the node did not take, sent through the cluster client

    async def _lost(self, commands: list[tuple[Arg, ...]], exc: Exception) -> list[Any]:
        """The node went (a failover?) or dropped the connection: the whole batch through
        the cluster client; whatever of it the node ran is safe to run again (batch.py)."""
        return await self._again(commands)

    async def _unsendable(self, commands: list[tuple[Arg, ...]]) -> list[Any]:
        """Each command alone through the cluster client (Batcher._unsendable)."""
        return await self.routed._alone(commands)

    async def _again(self, commands: list[tuple[Arg, ...]]) -> list[Any]:
        """Commands the node did not take, through the cluster client, which follows
        a redirect and learns the slot's new primary."""
        self.rerouted += len(commands)
        return await self.routed._replies(commands)


class Shards:
    """One `Batcher` per cluster primary, chosen by each command's key (see above)."""

    def __init__(self, cluster: RedisCluster, timeout: float = 10.0, connections: int = 8) -> None:
        self.cluster = cluster
        self.timeout = timeout
        self.connections = connections  # a node's pool: commands sent alone at once, per lane
        self.window, self.busy = WINDOW, BUSY  # each lane's (Batcher), set as it is made
        self._lanes: dict[str, Batcher] = {}
        self._nodes: list[aioredis.Redis] = []
        self._closed = False

    @property
    def batches(self) -> int:
        """Batches sent: one round trip each, per primary."""
        return sum(lane.batches for lane in self._lanes.values())

    @property
    def rerouted(self) -> int:
        """Commands a primary's lane sent through the cluster client (a redirect, a lost node)."""
        return sum(lane.rerouted for lane in self._lanes.values() if isinstance(lane, Lane))

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
        """Refuse new commands; wait until every lane's queued commands have replies;
        close the connections to the nodes."""
        self._closed = True
        await asyncio.gather(*(lane.aclose() for lane in self._lanes.values()))
        nodes, self._nodes = self._nodes, []
        for node in nodes:
            await node.aclose()

    @property
    def lanes(self) -> list[Batcher]:
        """The batchers made so far, one per primary."""
        return list(self._lanes.values())

    def _lane(self, args: tuple[Arg, ...]) -> Batcher:
        node = self._primary(args)
        name = "" if node is None else node.name
        lane = self._lanes.get(name)
        if lane is None:
            if node is None:  # no key, or no slot table: the cluster client routes it
                lane = Batcher(self.cluster, self.timeout, self.connections, self.window, self.busy)
            else:
                client = node_client(node)
                self._nodes.append(client)
                lane = Lane(
                    client, self.cluster, self.timeout, self.connections, self.window, self.busy
                )
            self._lanes[name] = lane
        return lane

    def _primary(self, args: tuple[Arg, ...]) -> ClusterNode | None:
        """The primary of the command's slot; None if it has no key or none is known."""
        key = key_of(args)
        if key is None:
            return None
        try:
            return self.cluster.nodes_manager.get_node_from_slot(self.cluster.keyslot(key))
        except (RedisError, AttributeError):  # no slot table yet, or a slot uncovered
            return None
