"""The Redis client the domain takes, one server or a Redis Cluster, and the one primitive that must
know which: waiting until replicas hold a write (`WAIT`).

Everything else is the same command set on both (`redis.asyncio.Redis`, `redis.asyncio.RedisCluster`):
every multi-key transaction and script touches one hash slot (memory/keys.py), so a cluster runs them
on the slot's master as one server would.
"""

from __future__ import annotations

import secrets
from typing import TypeAlias

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from memory.errors import StoreUnavailable

RedisClient: TypeAlias = Redis | RedisCluster


async def close(redis: RedisClient) -> None:
    """Close the client and its connections (the two clients spell it differently)."""
    if isinstance(redis, RedisCluster):
        await redis.aclose()
    else:
        await redis.aclose(close_connection_pool=True)


async def server_time(redis: RedisClient, key: str) -> float:
    """The clock of the server that holds `key` (in a cluster: the master of its slot), in seconds.
    Stream entry ids carry that clock, so times compared with them must come from it too."""
    if isinstance(redis, RedisCluster):
        node = redis.get_node_from_key(key)
        seconds, micros = await redis.execute_command("TIME", target_nodes=node)
    else:
        seconds, micros = await redis.time()
    return float(seconds) + float(micros) / 1e6


class ReplicaAck:
    """After a write to `key`'s slot, wait until `replicas` replicas have it, at most `timeout_ms`.

    Redis replicates asynchronously: a write acknowledged by a master that dies before replicating is
    lost on failover. `WAIT n` blocks until n replicas acknowledged every write *this connection* made;
    the write to wait for was made on another pooled connection, so this makes a small write of its
    own to the same slot on the connection it then waits on: the replication stream is ordered, so
    once the replicas have that write, they have every write before it. A timeout raises
    `StoreUnavailable("redis")`: the caller answers 503 rather than pretending the write is safe.
    """

    def __init__(self, redis: RedisClient, *, replicas: int, timeout_ms: int) -> None:
        self._redis = redis
        self.replicas = replicas
        self._timeout_ms = timeout_ms

    async def wait(self, key: str, marker_key: str) -> int:
        """`marker_key` must hash to `key`'s slot; it is written with a short TTL. Returns the count
        of replicas that acknowledged (>= `replicas`), or 0 at once when no replica is required."""
        if self.replicas <= 0:
            return 0
        token = secrets.token_hex(8)
        if isinstance(self._redis, RedisCluster):
            node = self._redis.get_node_from_key(key)
            if node is None:
                raise StoreUnavailable("redis", f"no master serves the slot of {key!r}")
            conn = node.acquire_connection()
            try:
                await conn.send_command("SET", marker_key, token, "PX", "60000")
                await conn.read_response()
                await conn.send_command("WAIT", str(self.replicas), str(self._timeout_ms))
                acked = int(await conn.read_response())
            except BaseException:
                await conn.disconnect()
                raise
            finally:
                node.release(conn)
        else:
            async with self._redis.pipeline(transaction=False) as pipe:  # one connection, in order
                pipe.set(marker_key, token, px=60_000)
                pipe.execute_command("WAIT", self.replicas, self._timeout_ms)
                _, raw = await pipe.execute()
            acked = int(raw)
        if acked < self.replicas:
            raise StoreUnavailable(
                "redis", f"only {acked} of {self.replicas} replicas acknowledged within {self._timeout_ms} ms"
            )
        return acked
