"""Erase a user from every store mnemo keeps (GDPR right to erasure).

Order matters: pending outbox entries go first (so no background write brings data back), then the
long-term records (under the user's write lock, so an in-flight write finishes before and not after),
then every Redis key under the user's prefix (sessions, slots, locks, rate-limit log, index version,
entity registry). Shared collections are never dropped: only this user's records are deleted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from memory import keys
from memory.locks import RedisLocks
from memory.long_term_store import ChromaLongTermStore
from memory.service import MemoryService


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    deleted: dict[str, int]
    at: float


class Eraser:
    def __init__(
        self,
        store: ChromaLongTermStore,
        redis: Redis,
        memory: MemoryService,
        *,
        outbox_stream: str = keys.OUTBOX_STREAM,
    ) -> None:
        self._store = store
        self._redis = redis
        self._memory = memory
        self._stream = outbox_stream
        self._locks = RedisLocks(redis)

    async def erase(self, user_id: str) -> ErasureReceipt:
        outbox = await self._drop_outbox_entries(user_id)
        async with self._locks.hold(keys.ltm_lock(user_id), ttl_seconds=30, wait_seconds=60):
            chroma = await self._store.delete_user(user_id)
        redis_keys = 0
        async for key in self._redis.scan_iter(match=keys.user_pattern(user_id), count=500):
            redis_keys += int(await self._redis.unlink(key))
        self._memory.forget_user_caches(user_id)
        return ErasureReceipt(
            deleted={"chroma": chroma, "redis_keys": redis_keys, "outbox": outbox}, at=time.time()
        )

    async def _drop_outbox_entries(self, user_id: str) -> int:
        dropped = 0
        start = "-"
        while True:
            batch: Any = await self._redis.xrange(self._stream, min=start, count=500)
            if not batch:
                return dropped
            mine = [entry_id for entry_id, fields in batch if fields.get("user_id") == user_id]
            if mine:
                dropped += int(await self._redis.xdel(self._stream, *mine))
            last = batch[-1][0]
            start = f"({last}"
            if len(batch) < 500:
                return dropped
