"""Deletes that Chroma has yet to apply: which ids every read hides, and which users still owe a purge.

A delete answers once its ids are hidden here (`hide`), not once Chroma deleted them: the Chroma delete
waits in the server behind the writers' upserts, and a user should not. Two keys carry it:

- per user, `ltm:purging` (id -> when): the ids every read of the store drops until Chroma deleted them
  (memory/longterm/deferred_deletes.py);
- per outbox partition, `purges` (user -> when the oldest unfinished purge was asked for): the writers
  holding the partition finish purges a crashed API worker or a Chroma outage left (`due`).

A third, `ltm:purge-lock`, orders purges and restores (memory/corrections/restore.py).

All share the user's hash tag, so hiding is one MULTI/EXEC on a cluster too. A purge deletes from
Chroma first and only then forgets the ids (`finish`): a reader that reads the hidden ids, then Chroma,
never sees a deleted record in between.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Collection, Sequence

from memory import keys
from memory.locks import RedisLocks
from memory.longterm.tombstones import TOMBSTONE_TTL_SECONDS
from memory.redis_client import RedisClient

Clock = Callable[[], float]

# KEYS: purging hash, partition queue. ARGV: user id, now, then the ids Chroma deleted.
# Forgets those ids; drops the user from the queue when nothing is left, else makes them due again later
# (ids hidden meanwhile have a purge of their own on the way).
_FINISH = """
for i = 3, #ARGV do redis.call('HDEL', KEYS[1], ARGV[i]) end
if redis.call('HLEN', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return redis.call('HLEN', KEYS[1])
"""


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


class Purges:
    """The hidden ids of each user and the per-partition queue of users with purges outstanding."""

    def __init__(self, redis: RedisClient, *, clock: Clock = time.time) -> None:
        self._redis = redis
        self._clock = clock
        self._finish = redis.register_script(_FINISH)
        self._locks = RedisLocks(redis)

    def lock(self, user_id: str) -> contextlib.AbstractAsyncContextManager[str]:
        """Held by a purge from its read of the hidden ids until Chroma deleted them, and by a restore
        while it stops hiding its id: so no purge deletes a memory restored after it read the ids."""
        return self._locks.hold(keys.ltm_purge_lock(user_id), ttl_seconds=30, wait_seconds=60, kind="purge")

    async def hide(self, user_id: str, memory_ids: Sequence[str]) -> None:
        """Hide these ids from every read until `finish`; queue the user for a purge (one transaction)."""
        if not memory_ids:
            return
        now = self._clock()
        key = keys.ltm_purging(user_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=dict.fromkeys(memory_ids, f"{now:.3f}"))
            pipe.expire(key, TOMBSTONE_TTL_SECONDS)
            pipe.zadd(keys.purge_queue_of(user_id), {user_id: now}, nx=True)
            await pipe.execute()

    async def hidden(self, user_id: str) -> frozenset[str]:
        """The ids to hide: deleted, not yet gone from Chroma (usually none)."""
        return frozenset(_text(i) for i in await self._redis.hkeys(keys.ltm_purging(user_id)))

    async def finish(self, user_id: str, memory_ids: Collection[str]) -> int:
        """Chroma deleted these ids: stop hiding them. Returns how many ids stay hidden (0: the user
        is off the queue)."""
        left = await self._finish(
            keys=[keys.ltm_purging(user_id), keys.purge_queue_of(user_id)],
            args=[user_id, f"{self._clock():.3f}", *memory_ids],
        )
        return int(left)

    async def due(self, partition: int, *, older_than_seconds: float, limit: int) -> list[str]:
        """Users of this partition whose purge was asked for more than `older_than_seconds` ago (the
        worker that asked had its chance), oldest first."""
        users = await self._redis.zrangebyscore(
            keys.purge_queue(partition), "-inf", self._clock() - older_than_seconds, start=0, num=limit
        )
        return [_text(u) for u in users if isinstance(u, str | bytes)]
