"""How writers share the outbox partitions: one lease per partition, a fair share per live writer.

Every writer (the `python -m app.cli.writer` processes, and API workers with OUTBOX_WORKER) heartbeats
into one sorted set (`mnemo:writers`, writer id -> time). On each refresh it counts the live writers,
takes `ceil(partitions / live)` as its share, renews the leases it holds (`SET PX`, owner-checked),
gives back the ones above its share, and takes free ones (`SET NX PX`) up to it, starting from a
position derived from its id so that writers do not all race for partition 0. A partition is read by
the holder of its lease only, so one user's turns are written in stream order by one writer at a time.

- A writer that joins: the others see one more live writer at their next refresh and give back their
  extra partitions, which the newcomer then takes (within two refresh intervals).
- A writer that stops cleanly gives its leases back and leaves the set at once.
- A writer that dies: its leases expire after `ttl_ms` (30 s by default) and the others take them; the
  new holder claims the dead writer's unacknowledged entries first, whatever their idle time (it is the
  only reader of the partition), then reads new ones, so order is kept and nothing is left behind.
- A Redis node that cannot answer (a cluster failover) costs only the partitions it serves: their
  renewals, releases and acquisitions are skipped for this refresh and the others' go on (the worker
  likewise reads the partitions that answer, memory/outbox/worker.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import time
from collections.abc import Callable

from redis.exceptions import RedisError

from memory import keys
from memory.redis_client import RedisClient

log = logging.getLogger(__name__)

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class PartitionLeases:
    def __init__(
        self,
        redis: RedisClient,
        writer_id: str,
        *,
        ttl_ms: int = 30_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._redis = redis
        self.writer_id = writer_id
        self.ttl_ms = ttl_ms
        self._clock = clock
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)
        self.held: list[int] = []
        self._last_refresh = 0.0

    @property
    def refresh_every_seconds(self) -> float:
        return self.ttl_ms / 3000

    def due(self) -> bool:
        return time.monotonic() - self._last_refresh >= self.refresh_every_seconds

    async def refresh(self) -> tuple[list[int], list[int]]:
        """Heartbeat, renew, rebalance. Returns (held partitions, newly acquired ones)."""
        self._last_refresh = time.monotonic()
        now_ms = int(self._clock() * 1000)
        total = keys.partitions()
        await self._redis.zadd(keys.WRITERS, {self.writer_id: now_ms})
        await self._redis.zremrangebyscore(keys.WRITERS, 0, now_ms - self.ttl_ms)
        live = max(1, int(await self._redis.zcard(keys.WRITERS)))
        share = math.ceil(total / live)

        kept: list[int] = []
        unanswered: list[int] = []
        for p in self.held:
            try:
                renewed = p < total and await self._renew(
                    keys=[keys.partition_lease(p)], args=[self.writer_id, self.ttl_ms]
                )
            except (RedisError, OSError):
                # its node cannot answer now (a failover): still ours as far as anyone can tell, and
                # nobody can read it meanwhile; the other partitions' renewals go on
                unanswered.append(p)
                kept.append(p)
                continue
            if renewed:
                kept.append(p)
            else:
                log.warning("partition lease lost", extra={"partition": p, "writer": self.writer_id})
        if unanswered:
            log.warning(
                "partition leases not renewed: their Redis node did not answer",
                extra={"partitions": unanswered, "writer": self.writer_id},
            )
        for p in kept[share:]:  # above the fair share: give back for the newcomers
            # not read here any more either way: a release that fails leaves the lease to its TTL
            with contextlib.suppress(RedisError, OSError):
                await self._release(keys=[keys.partition_lease(p)], args=[self.writer_id])
        kept = kept[:share]

        acquired: list[int] = []
        start = int.from_bytes(hashlib.blake2b(self.writer_id.encode(), digest_size=4).digest(), "big")
        for i in range(total):
            if len(kept) + len(acquired) >= share:
                break
            p = (start + i) % total
            if p in kept:
                continue
            try:
                taken = await self._redis.set(
                    keys.partition_lease(p), self.writer_id, nx=True, px=self.ttl_ms
                )
            except (RedisError, OSError):
                continue  # its node cannot answer now: a partition of another node may be free
            if taken:
                acquired.append(p)
        self.held = sorted(kept + acquired)
        if acquired:
            log.info(
                "partitions acquired",
                extra={"writer": self.writer_id, "acquired": acquired, "held": len(self.held), "live": live},
            )
        return self.held, acquired

    async def release_all(self) -> None:
        """A clean stop: leases back, out of the registry, so the others take over at once."""
        for p in self.held:
            await self._release(keys=[keys.partition_lease(p)], args=[self.writer_id])
        await self._redis.zrem(keys.WRITERS, self.writer_id)
        self.held = []
