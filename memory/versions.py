"""Per-user long-term write versions in Redis (cache invalidation across workers)."""

from __future__ import annotations

import logging

from redis.asyncio import Redis
from redis.exceptions import RedisError

from memory import keys

log = logging.getLogger(__name__)
UNKNOWN = -1


class LtmVersions:
    def __init__(self, redis: Redis) -> None:
        self._redis = redis

    async def get(self, user_id: str) -> int:
        """The current version; UNKNOWN when Redis cannot say (callers then must not trust a cache)."""
        try:
            raw = await self._redis.get(keys.ltm_version(user_id))
        except RedisError:
            log.warning("ltm version unavailable; keyword index will be rebuilt", exc_info=True)
            return UNKNOWN
        return int(raw) if raw is not None else 0

    async def bump(self, user_id: str) -> None:
        try:
            await self._redis.incr(keys.ltm_version(user_id))
        except RedisError:
            log.warning("could not bump ltm version", exc_info=True)
