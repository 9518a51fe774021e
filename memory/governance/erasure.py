"""Erase a user from every store mnemo keeps (GDPR right to erasure).

Order matters: pending outbox entries go first (so no background write brings data back), then the
long-term records (under the user's write lock, so an in-flight write finishes before and not after),
then every Redis key under the user's prefix (sessions, slots, locks, rate-limit log, index version,
entity registry, Chroma placement). Shared collections are never dropped: only this user's records are
deleted, on every Chroma server (a copy an interrupted rebalance left behind goes too).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from redis.asyncio import Redis

from memory import keys
from memory.locks import RedisLocks
from memory.longterm.chroma import ErasableStore
from memory.longterm.tombstones import Tombstones
from memory.outbox.stream import Outbox
from memory.service import MemoryService


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    deleted: dict[str, int]
    at: float


class Eraser:
    def __init__(self, store: ErasableStore, redis: Redis, memory: MemoryService, outbox: Outbox) -> None:
        self._store = store
        self._redis = redis
        self._memory = memory
        self._outbox = outbox
        self._locks = RedisLocks(redis)
        self._tombstones = Tombstones(redis)

    async def erase(self, user_id: str) -> ErasureReceipt:
        outbox = await self._outbox.drop_user(user_id)
        async with self._locks.hold(keys.ltm_lock(user_id), ttl_seconds=30, wait_seconds=60):
            chroma = await self._store.delete_user(user_id)
            # still under the lock: a write issued before this moment, already read from the outbox
            # by some worker, finds the marker when it gets the lock and is dropped
            await self._tombstones.mark_erased(user_id)
        redis_keys = 0
        async for key in self._redis.scan_iter(match=keys.user_pattern(user_id), count=500):
            redis_keys += int(await self._redis.unlink(key))
        self._memory.forget_user_caches(user_id)
        return ErasureReceipt(
            deleted={"chroma": chroma, "redis_keys": redis_keys, "outbox": outbox}, at=time.time()
        )
