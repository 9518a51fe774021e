"""Deletions that late writes must respect.

A write can be in flight when a memory is deleted or a user erased: an outbox entry the worker read
just before, or redelivered after a crash (writes are idempotent by message id, so it would recreate
the same memory). The write pipeline asks `Tombstones` under the user's write lock and drops what was
deleted: single memories by id, and everything issued before the user's last erase. Deletes bury before
they delete and do not take that lock, so a write asks again after its upsert (memory/write/policy.py).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from memory import keys
from memory.redis_client import RedisClient, server_time

TOMBSTONE_TTL_SECONDS = 30 * 24 * 3600  # longer than any outbox entry waits for a Chroma outage
ERASE_MARKER_TTL_SECONDS = 30 * 24 * 3600


class Tombstones:
    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    async def now(self, user_id: str) -> float:
        """The clock of the server holding the user's keys and outbox partition: outbox entry ids carry
        it too, so erase times compare with enqueue times."""
        return await server_time(self._redis, keys.erased_marker(user_id))

    async def bury(self, user_id: str, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        key = keys.ltm_tombstones(user_id)
        when = f"{time.time():.3f}"  # read by no one (only whether an id is buried): no server TIME trip
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=dict.fromkeys(memory_ids, when))
            pipe.expire(key, TOMBSTONE_TTL_SECONDS)
            await pipe.execute()

    async def unbury(self, user_id: str, memory_ids: Sequence[str]) -> None:
        """A restore: these memories are alive again (memory/corrections/restore.py)."""
        if memory_ids:
            await self._redis.hdel(keys.ltm_tombstones(user_id), *memory_ids)

    async def buried(self, user_id: str, memory_ids: Sequence[str]) -> set[str]:
        if not memory_ids:
            return set()
        ids = list(dict.fromkeys(memory_ids))
        found = await self._redis.hmget(keys.ltm_tombstones(user_id), ids)
        return {i for i, v in zip(ids, found, strict=True) if v is not None}

    async def mark_erased(self, user_id: str) -> float:
        at = await self.now(user_id)
        await self._redis.set(keys.erased_marker(user_id), f"{at:.6f}", ex=ERASE_MARKER_TTL_SECONDS)
        return at

    async def erased_at(self, user_id: str) -> float | None:
        """The last erase of this user. Markers of layout 1 (`mnemo:erased:<hash>`, global) are read
        too until they expire: the migration cannot place them, the hash hides the user."""
        raw = await self._redis.get(keys.erased_marker(user_id))
        legacy = await self._redis.get(keys.Legacy.erased_marker(user_id))
        times = [float(v) for v in (raw, legacy) if v is not None]
        return max(times) if times else None
