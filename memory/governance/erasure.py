"""Erase a user from every store mnemo keeps (GDPR right to erasure).

Order matters: pending outbox entries go first (so no background write brings data back), then the
long-term records (under the user's write lock, so an in-flight write finishes before and not after),
then the warm archive records and cold Parquet rows (files rewritten without them), then every Redis key
under the user's prefix (sessions, slots, locks, rate-limit log, index version, restorable copies of
deleted memories, entity registry, change log, shared query vectors, Chroma placement) and the user's
dead letters. Shared
collections are never dropped: only this user's records are deleted, on every Chroma server (a copy an
interrupted rebalance left behind goes too).

Deleted is not yet gone from disk: the erase then asks for a compaction of each store's files
(`compaction.CompactionQueue`), and the receipt says by when each store's files will no longer hold the
data (`AtRest`): a time for what runs by itself, or the operator command where a store's files are out
of this process's reach.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from redis.exceptions import RedisError

from memory import keys
from memory.archive.view import ArchivedTiers
from memory.governance.compaction import STORES, AtRest, AtRestPolicy, CompactionQueue, RedisFiles, Store
from memory.locks import RedisLocks
from memory.longterm.chroma import ErasableStore
from memory.longterm.restorable import unqueue
from memory.longterm.tombstones import Tombstones
from memory.outbox.stream import Outbox
from memory.redis_client import RedisClient
from memory.service import MemoryService


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    deleted: dict[str, int]  # per store; `sessions`: the sessions whose short-term state went
    at: float
    at_rest: dict[Store, AtRest] = field(default_factory=dict)

    @property
    def at_rest_purged_by(self) -> float | None:
        """When no store's files hold the erased data any more; None while an operator must act."""
        times = [a.purged_by for a in self.at_rest.values()]
        return None if not times or any(t is None for t in times) else max(t for t in times if t is not None)


@dataclass(frozen=True, slots=True)
class ErasurePreview:
    """What an erase of the user would delete now, store by store (nothing is deleted to know it)."""

    memories: dict[str, int]  # long-term, by archive tier: hot (Chroma), warm (Chroma), cold (Parquet)
    kinds: dict[str, int]  # the same memories by kind: fact, episodic, unclassified
    sessions: int  # sessions with short-term state
    buffer_messages: int  # recent messages held in those sessions' buffers
    histories: int  # memories with a recorded history (edits, restores, deletes)
    redis_keys: int  # every Redis key under the user's prefix (the sessions and histories included)
    outbox: int  # chat turns not yet written to long-term memory
    dead_letters: int  # turns the writer could not read

    @property
    def held(self) -> bool:
        return any(self.memories.values()) or any((self.redis_keys, self.outbox, self.dead_letters))


class Eraser:
    def __init__(
        self,
        store: ErasableStore,
        redis: RedisClient,
        memory: MemoryService,
        outbox: Outbox,
        at_rest: AtRestPolicy | None = None,
        archive: ArchivedTiers | None = None,
    ) -> None:
        """`archive`: warm and cold are erased too (the user's Parquet files rewritten without them)."""
        self._store = store
        self._archive = archive
        self._redis = redis
        self._memory = memory
        self._outbox = outbox
        self._locks = RedisLocks(redis)
        self._tombstones = Tombstones(redis)
        self._policy = at_rest or AtRestPolicy()
        self._queue = CompactionQueue(redis)
        self._redis_files = RedisFiles(redis)

    async def preview(self, user_id: str) -> ErasurePreview:
        """Counts of what `erase` would delete, read from each store as they are now."""
        memories, kinds = await self._memory.counts(user_id)
        prefix = keys.user_prefix(user_id) + ":"
        sessions: set[str] = set()
        buffers: list[str] = []
        histories = redis_keys = 0
        async for key in self._redis.scan_iter(match=keys.user_pattern(user_id), count=500):
            name = key.decode() if isinstance(key, bytes) else str(key)
            redis_keys += 1
            rest = name[len(prefix) :]
            if (session := _session_of(name, user_id)) is not None:
                sessions.add(session)
                if rest.endswith("}:buffer"):
                    buffers.append(name)
            elif rest.startswith("ltm:history:"):
                histories += 1
        buffered = sum([int(await self._redis.zcard(b)) for b in buffers])  # a sorted set by time
        return ErasurePreview(
            memories=memories,
            kinds=kinds,
            sessions=len(sessions),
            buffer_messages=buffered,
            histories=histories,
            redis_keys=redis_keys,
            outbox=await self._outbox.count_of(user_id),
            dead_letters=await self._outbox.count_of(user_id, dead=True),
        )

    async def erase(self, user_id: str) -> ErasureReceipt:
        outbox = await self._outbox.drop_user(user_id)
        async with self._locks.hold(keys.ltm_lock(user_id), ttl_seconds=30, wait_seconds=60):
            chroma = await self._store.delete_user(user_id)
            archived = await self._archive.delete_user(user_id) if self._archive is not None else {}
            # still under the lock: a write issued before this moment, already read from the outbox
            # by some worker, finds the marker when it gets the lock and is dropped
            await self._tombstones.mark_erased(user_id)
        redis_keys = 0
        sessions: set[str] = set()
        async for key in self._redis.scan_iter(match=keys.user_pattern(user_id), count=500):
            removed = int(await self._redis.unlink(key))
            redis_keys += removed
            if removed and (session := _session_of(key, user_id)) is not None:
                sessions.add(session)
        # the restorable copies went with the user's keys; their id leaves the partition's queue too
        await unqueue(self._redis, user_id)
        dead_letters = await self._outbox.drop_dead_letters(user_id)
        self._memory.forget_user_caches(user_id)
        # after every delete: a compaction that starts later covers them
        requested = await self._queue.request(STORES)
        try:
            persists = (await self._redis_files.persistence()).any
        except RedisError:
            persists = True
        return ErasureReceipt(
            deleted={
                "chroma": chroma,
                "sessions": len(sessions),
                "redis_keys": redis_keys,
                "outbox": outbox,
                "dead_letters": dead_letters,
                **archived,
            },
            at=time.time(),
            at_rest=self._policy.plan(requested, redis_persists=persists),
        )


def _session_of(key: str | bytes, user_id: str) -> str | None:
    """The session a key of the user belongs to, or None for the user's other keys."""
    name = key.decode() if isinstance(key, bytes) else str(key)
    rest = name[len(keys.user_prefix(user_id)) + 1 :]
    if rest.startswith("s:{") and "}:" in rest:
        return rest[3 : rest.index("}:")]
    return None
