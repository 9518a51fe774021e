"""Deleted and forgotten memories kept restorable for a grace period: the way back from a delete.

A delete (or a forget) goes on as before: hidden from every read at once, purged from Chroma and the
archive right after. Before it does, `RestorableBin.keep` copies each record as it was (text, metadata,
the tier it was in, who deleted it and how) under the user's prefix in Redis, where no read of the
memories looks: search, chat recall and export never see it. `MemoryRestorer` (memory/corrections)
writes a copy back; the grace period's end removes it for good:

- per user, `ltm:restorable` (id -> the record, JSON) and `ltm:restorable:at` (id -> when deleted);
  both keys expire a grace period after the user's last delete, and a read never answers an entry
  older than the grace period, however late the sweep;
- per outbox partition, `restorable` (user -> when their oldest entry's grace ends): the writers holding
  the partition remove expired entries (`sweep`, from `PurgeSweeper`).

All three share the partition's hash tag, so each change is one transaction on a Redis Cluster too. An
erase deletes the user's keys with every other key of theirs, and takes the user off the queue
(`unqueue`): an erased user leaves nothing restorable, not even their id in a queue.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from memory import keys
from memory.longterm.chroma import LongTermStore, from_record, to_metadata
from memory.longterm.history import Actor
from memory.models import ArchiveTier, Memory
from memory.redis_client import RedisClient

Clock = Callable[[], float]
How = Literal["deleted", "forgotten"]
DEFAULT_GRACE_SECONDS = 7 * 86_400

# KEYS: records hash, times zset, partition queue. ARGV: user id, cutoff (deleted before it: expired),
# grace seconds. Removes the expired entries; re-queues the user at their oldest entry's end, or drops
# them from the queue when none is left. Returns how many entries it removed.
_EXPIRE = """
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[2])
for _, id in ipairs(gone) do redis.call('HDEL', KEYS[1], id) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[2])
local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #oldest == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
else
  redis.call('ZADD', KEYS[3], tonumber(oldest[2]) + tonumber(ARGV[3]), ARGV[1])
end
return #gone
"""


@dataclass(frozen=True, slots=True)
class Deleted:
    """A memory as it was when deleted, and until when it can be restored."""

    memory: Memory  # its tier as it was (hot, warm or cold)
    deleted_at: float
    restorable_until: float
    how: How  # deleted one by one, or forgotten by criteria
    actor: str  # who deleted it (a token's subject)
    role: str


@dataclass(frozen=True, slots=True)
class DeletedPage:
    total: int
    items: list[Deleted]


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RestorableBin:
    """The restorable copies of each user's deleted memories, for `grace_seconds` after each delete
    (0: nothing is kept, deletes are final)."""

    def __init__(self, redis: RedisClient, *, grace_seconds: float, clock: Clock = time.time) -> None:
        self._redis = redis
        self.grace_seconds = grace_seconds
        self._clock = clock
        self._expire = redis.register_script(_EXPIRE)

    @property
    def enabled(self) -> bool:
        return self.grace_seconds > 0

    async def keep(
        self, user_id: str, memories: Sequence[Memory], *, how: How, actor: str, role: str
    ) -> None:
        """Copy these memories (whole: with their text) before they are deleted. One transaction."""
        if not memories or not self.enabled:
            return
        now = self._clock()
        records: dict[Any, Any] = {m.id: _encode(m, now, how, actor, role) for m in memories}
        ttl = int(self.grace_seconds) + 60
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(keys.ltm_restorable(user_id), mapping=records)
            pipe.zadd(keys.ltm_restorable_at(user_id), {m.id: now for m in memories})
            pipe.expire(keys.ltm_restorable(user_id), ttl)
            pipe.expire(keys.ltm_restorable_at(user_id), ttl)
            # an earlier entry's end stays the score (nx): the sweep re-queues the user after it
            pipe.zadd(keys.restorable_queue_of(user_id), {user_id: now + self.grace_seconds}, nx=True)
            await pipe.execute()

    async def keep_whole(
        self, store: LongTermStore, user_id: str, memories: Sequence[Memory], *, how: How, actor: Actor
    ) -> None:
        """`keep`, reading again with their text the hot memories a caller holds as headers only."""
        if not memories or not self.enabled:
            return
        bare = [m.id for m in memories if not m.content and m.archive_tier == "hot"]
        read = {m.id: m for m in await store.get(user_id, ids=bare)} if bare else {}
        whole = [read.get(m.id, m) for m in memories]
        await self.keep(user_id, whole, how=how, actor=actor.user_id, role=actor.role)

    async def page(self, user_id: str, *, limit: int, offset: int) -> DeletedPage:
        """The user's restorable memories, most recently deleted first."""
        cutoff = self._clock() - self.grace_seconds
        at_key = keys.ltm_restorable_at(user_id)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zcount(at_key, cutoff, "+inf")
            pipe.zrevrangebyscore(at_key, "+inf", cutoff, start=offset, num=limit)
            total, ids = await pipe.execute()
        ids = [_text(i) for i in ids]
        if not ids:
            return DeletedPage(int(total), [])
        raw = await self._redis.hmget(keys.ltm_restorable(user_id), ids)
        items = [self._decode(user_id, r) for r in raw if r is not None]
        return DeletedPage(int(total), [d for d in items if d is not None])

    async def get(self, user_id: str, memory_id: str) -> Deleted | None:
        """The restorable copy of this memory, or None (never deleted, restored, or its grace ended)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zscore(keys.ltm_restorable_at(user_id), memory_id)
            pipe.hget(keys.ltm_restorable(user_id), memory_id)
            at, raw = await pipe.execute()
        if at is None or raw is None or float(at) < self._clock() - self.grace_seconds:
            return None
        return self._decode(user_id, raw)

    async def drop(self, user_id: str, memory_ids: Sequence[str]) -> None:
        """These are restored (or must not be restored any more): no copy stays."""
        if not memory_ids:
            return
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hdel(keys.ltm_restorable(user_id), *memory_ids)
            pipe.zrem(keys.ltm_restorable_at(user_id), *memory_ids)
            await pipe.execute()

    async def due(self, partition: int, *, limit: int) -> list[str]:
        """Users of this partition with a restorable memory whose grace has ended, oldest first."""
        users = await self._redis.zrangebyscore(
            keys.restorable_queue(partition), "-inf", self._clock(), start=0, num=limit
        )
        return [_text(u) for u in users if isinstance(u, str | bytes)]

    async def expire(self, user_id: str) -> int:
        """Remove for good the user's copies whose grace has ended. Returns how many."""
        gone = await self._expire(
            keys=[
                keys.ltm_restorable(user_id),
                keys.ltm_restorable_at(user_id),
                keys.restorable_queue_of(user_id),
            ],
            args=[user_id, f"{self._clock() - self.grace_seconds:.6f}", f"{self.grace_seconds:.6f}"],
        )
        return int(gone)

    async def sweep(self, partitions: Sequence[int], *, batch: int = 50) -> int:
        """One pass over these partitions: every due user's expired copies go. Returns how many."""
        removed = 0
        for partition in sorted(partitions):
            for user_id in await self.due(partition, limit=batch):
                removed += await self.expire(user_id)
        return removed

    def _decode(self, user_id: str, raw: str | bytes) -> Deleted | None:
        try:
            data: dict[str, Any] = json.loads(_text(raw))
            meta = dict(data["meta"])
            if meta.get("user_id") != user_id:
                return None
            tier = data.get("tier")
            memory = replace(
                from_record(str(data["id"]), str(data["content"]), meta),
                archive_tier=tier if tier in ("hot", "warm", "cold") else "hot",
            )
            deleted_at = float(data["at"])
            how: How = "forgotten" if data.get("how") == "forgotten" else "deleted"
            return Deleted(
                memory=memory,
                deleted_at=deleted_at,
                restorable_until=deleted_at + self.grace_seconds,
                how=how,
                actor=str(data.get("actor", "")),
                role=str(data.get("role", "")),
            )
        except (ValueError, KeyError, TypeError):  # a copy this code cannot read is not restorable
            return None


def _encode(m: Memory, at: float, how: How, actor: str, role: str) -> str:
    tier: ArchiveTier = m.archive_tier
    return json.dumps(
        {
            "id": m.id,
            "content": m.content,
            "meta": to_metadata(m),
            "tier": tier,
            "at": at,
            "how": how,
            "actor": actor,
            "role": role,
        },
        ensure_ascii=False,
    )


async def unqueue(redis: RedisClient, user_id: str) -> None:
    """Erasure: the user off the partition's queue (their keys go with the user's other keys)."""
    await redis.zrem(keys.restorable_queue_of(user_id), user_id)
