"""The Redis client: one server (`REDIS_URL`) or a Redis Cluster (`REDIS_CLUSTER_NODES=host:port,...`).

Both get the same timeouts and retry policy. The cluster client (redis-py's asyncio `RedisCluster`)
follows MOVED/ASK redirects, refreshes its slot map when a master fails over, and retries a command
whose connection broke on the slot's new master.

`check_layout` makes every process agree on the key layout (memory/keys.py): the first process records
the layout version and partition count in Redis; a process configured otherwise refuses to start.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import ClusterNode, ClusterPipeline, NodesManager, RedisCluster
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import (
    CrossSlotTransactionError,
    InvalidPipelineStack,
    MasterDownError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
)

from app.settings import Settings
from memory import keys
from memory.redis_client import RedisClient

CLUSTER_MIN_CONNECTIONS_PER_NODE = 100


def cluster_nodes(spec: str) -> list[ClusterNode]:
    nodes: list[ClusterNode] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        host, sep, port = part.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"REDIS_CLUSTER_NODES entries are host:port, got {part!r}")
        nodes.append(ClusterNode(host, int(port)))
    if not nodes:
        raise ValueError("REDIS_CLUSTER_NODES is empty")
    return nodes


# Errors after which a command is retried once, on a fresh connection (redis-py drops the failed one
# first): a connection refused, closed or lost (a pooled connection that went stale when Redis
# restarted), a server still loading its dataset (BusyLoadingError), READONLY or MASTERDOWN from a
# demoted master during a failover. Each means the command was refused or never reached the server
# (barring a crash mid-command). Timeouts are not retried: a timed-out write may still be applied, and
# must not be applied twice; a slow Redis answers 503 instead of twice as late.
REDIS_RETRIED: tuple[type[RedisError], ...] = (RedisConnectionError, ReadOnlyError, MasterDownError)


def redis_retry() -> Retry:
    # redis.asyncio.retry.Retry, not redis.retry.Retry: the synchronous class given to the asyncio
    # client returns the command's coroutine from inside its try block unawaited, so it never retried.
    return Retry(ExponentialWithJitterBackoff(cap=0.25, base=0.05), retries=1, supported_errors=REDIS_RETRIED)


# uvloop's words when a write goes to a transport that is already closed (asyncio's own loop drops the
# write and the read fails instead): a connection the server dropped, found when it is next used
CLOSED_TRANSPORT = "the handler is closed"


class TransportCheckedConnection(Connection):
    """redis-py's connection, with a write to a closed transport raised as the lost connection it is.

    Under uvloop (uvicorn[standard]'s loop), writing to a connection whose socket the server closed
    raises `RuntimeError: unable to perform operation on <TCPTransport closed=True ...>; the handler is
    closed`; redis-py drops the connection and re-raises it as it is, so no retry saw it and the request
    answered 500 (seen once in the compose suite's Redis master kill). Raised as `ConnectionError`, the
    command is retried on a fresh connection like any lost one (nothing was sent), and if that fails
    too it is answered 503 `redis_unavailable` with Retry-After."""

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        try:
            await super().send_packed_command(command, check_health)
        except RuntimeError as exc:
            if CLOSED_TRANSPORT not in str(exc):
                raise
            raise RedisConnectionError(f"the connection was closed under the command: {exc}") from exc


# RedisClusterException raised by mnemo's own mistakes (keys of several slots in one transaction, a
# pipeline used wrongly): these stay errors (500, logged), every other one is about the topology.
CLUSTER_USAGE_ERRORS: tuple[type[Exception], ...] = (CrossSlotTransactionError, InvalidPipelineStack)


class ResilientNodesManager(NodesManager):
    """The cluster client's slot map loader: a map that cannot be loaded now is a lost connection."""

    __slots__ = ()

    async def initialize(self, *args: Any, **kwargs: Any) -> None:
        try:
            await super().initialize(*args, **kwargs)
        except CLUSTER_USAGE_ERRORS:
            raise
        except RedisClusterException as exc:
            raise RedisConnectionError(f"the cluster's slot map cannot be loaded now: {exc}") from exc


class ResilientClusterPipeline(ClusterPipeline):
    """A cluster pipeline whose connection torn down mid-reconnect is a lost connection (see below)."""

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
        try:
            return await super().execute(raise_on_error=raise_on_error, allow_redirections=allow_redirections)
        except AttributeError as exc:
            raise RedisConnectionError(f"connection torn down while reconnecting: {exc}") from exc


class ResilientRedisCluster(RedisCluster):
    """redis-py 8.1's asyncio cluster client, with two of its failure modes turned into what they mean.

    - While a failover makes it reconnect, a connection can be torn down under a command that is using
      it (seen in the failover test: `'NoneType' object has no attribute 'writelines'` from deep inside
      `Connection.send_packed_command`), in a single command or a pipeline. That is a lost connection:
      raised as `ConnectionError`, it is retried like one.
    - Reloading the slot map raises a bare `RedisClusterException` when no node answers ("Redis Cluster
      cannot be connected") or the nodes that answer do not cover every slot (a master and its replica
      both gone, or the moment a failover is decided): seen as 500s during a Redis master kill in the
      compose suite. That too is "Redis cannot serve this now": a `ConnectionError`.

    Either, if it persists, is answered 503 `redis_unavailable` with Retry-After, never 500. A write to a
    connection whose socket is closed is a third (`TransportCheckedConnection`), for both clients."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # every reload of the slot map (first command, after a connection error, inside a pipeline's
        # or a transaction's retry) goes through the nodes manager's `initialize`; redis-py builds the
        # manager itself, so it becomes the subclass in place (same slots, only a method added)
        self.nodes_manager.__class__ = ResilientNodesManager
        # the cluster client takes no connection class: every node, the startup ones and those its slot
        # map names later, is made from this one dict (shared with the nodes manager)
        self.connection_kwargs["connection_class"] = TransportCheckedConnection
        for node in self.nodes_manager.startup_nodes.values():
            node.connection_class = TransportCheckedConnection

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().execute_command(*args, **kwargs)
        except AttributeError as exc:
            raise RedisConnectionError(f"connection torn down while reconnecting: {exc}") from exc

    def pipeline(self, transaction: Any | None = None, shard_hint: Any | None = None) -> ClusterPipeline:
        if shard_hint:
            return super().pipeline(transaction, shard_hint)  # refused by redis-py, as it should be
        # redis-py declares `_event_dispatcher` abstract for type checkers; ClusterPipeline sets it
        return ResilientClusterPipeline(self, transaction)  # type: ignore[abstract]


# the most a connection reads from its socket at once (redis-py's default: 64 KiB). A 2,000-memory index
# snapshot is ~5.6 MB: read 64 KiB at a time its GET took 4-16 ms, 1 MiB at a time 3-4 ms (issue 29,
# measured on loopback). Only a read's size: no buffer of that size is kept per connection.
SOCKET_READ_SIZE = 1 << 20


def build_redis(settings: Settings, client_name: str = "mnemo") -> RedisClient:
    if settings.redis_cluster_nodes:
        return ResilientRedisCluster(
            startup_nodes=cluster_nodes(settings.redis_cluster_nodes),
            # per node, and the cluster client fails instead of waiting for a free connection: room
            # for the peak concurrency (redis-py's default), never below the configured pool
            max_connections=max(CLUSTER_MIN_CONNECTIONS_PER_NODE, settings.redis_max_connections),
            socket_timeout=settings.redis_socket_timeout,
            socket_connect_timeout=settings.redis_socket_timeout,
            health_check_interval=30,
            client_name=client_name,
            decode_responses=True,
            socket_read_size=SOCKET_READ_SIZE,
            retry=redis_retry(),  # the cluster client also follows MOVED/ASK and refreshes its slot map
        )
    pool = BlockingConnectionPool.from_url(
        settings.redis_url,
        max_connections=settings.redis_max_connections,
        timeout=settings.redis_socket_timeout,  # wait for a free connection, then fail
        socket_timeout=settings.redis_socket_timeout,
        socket_connect_timeout=settings.redis_socket_timeout,
        health_check_interval=30,
        client_name=client_name,
        decode_responses=True,
        socket_read_size=SOCKET_READ_SIZE,
        retry=redis_retry(),
        connection_class=TransportCheckedConnection,
    )
    return Redis.from_pool(pool)


async def connect(redis: RedisClient) -> None:
    """Load a cluster client's slot map now, once: redis-py's asyncio cluster client initialises on its
    first command, and many first commands at once race (a connection's writer torn down under
    another: seen with 40 concurrent scripts). A one-server client connects lazily and safely."""
    if isinstance(redis, RedisCluster):
        await redis.initialize()


class LayoutMismatch(RuntimeError):
    pass


async def check_layout(redis: RedisClient, partitions: int) -> None:
    """Record (first process) or check (every other one) the key layout this deployment uses."""
    keys.use_partitions(partitions)
    await redis.hsetnx(keys.LAYOUT, "version", str(keys.LAYOUT_VERSION))
    await redis.hsetnx(keys.LAYOUT, "partitions", str(partitions))
    stored = await redis.hgetall(keys.LAYOUT)
    if stored.get("version") != str(keys.LAYOUT_VERSION) or stored.get("partitions") != str(partitions):
        raise LayoutMismatch(
            f"Redis holds key layout {stored} but this process is configured for version "
            f"{keys.LAYOUT_VERSION} with OUTBOX_PARTITIONS={partitions}: run `python -m app.cli.migrate_keys`"
        )
