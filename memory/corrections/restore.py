"""Undo a delete or a forget: list what is still restorable and write a memory back, same id.

A restored memory comes back to hot, whatever tier it was deleted from (as an edited archived memory
does: bringing it back is a sign it matters now). It is written as the write pipeline writes: under
the user's write lock, embedded again (both channels: the store's upsert writes the bridge vector
too), its keyword-index version moved with the record (other workers' caches), its relations indexed
again. Before the write, its tombstone goes (so late writes and rebalances treat it as alive) and the
deferred-delete store stops hiding it, waiting for a purge that read it to finish deleting
(`DeferredDeleteStore.unhide`): the write that follows is never undone by a purge of the delete.

The copy leaves the bin last, so a restore cut short by an outage (a 503) can be asked again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from memory.embedding.base import Embedder
from memory.errors import MemoryNotFound
from memory.longterm.chroma import LongTermStore
from memory.longterm.deferred_deletes import DeferredDeleteStore
from memory.longterm.dense_models import DenseModel, DenseModels
from memory.longterm.history import Actor, MemoryHistory
from memory.longterm.restorable import Deleted, DeletedPage, RestorableBin
from memory.longterm.tombstones import Tombstones
from memory.longterm.versions import LtmVersions
from memory.models import Memory
from memory.service import MemoryService

Lock = Callable[[str], contextlib.AbstractAsyncContextManager[Any]]


class MemoryRestorer:
    def __init__(
        self,
        memory: MemoryService,
        store: LongTermStore,
        embedder: Embedder,
        versions: LtmVersions,
        history: MemoryHistory,
        tombstones: Tombstones,
        restorable: RestorableBin,
        *,
        lock: Lock,
        dense: DenseModels | None = None,
    ) -> None:
        """`dense`: the dense models during a switch (None: `embedder` embeds every user)."""
        self._memory = memory
        self._store = store
        self._dense = dense or DenseModels(DenseModel("", embedder))
        self._versions = versions
        self._history = history
        self._tombstones = tombstones
        self._bin = restorable
        self._lock = lock

    @property
    def grace_seconds(self) -> float:
        return self._bin.grace_seconds

    async def deleted(self, user_id: str, *, limit: int, offset: int) -> DeletedPage:
        """The user's restorable memories, most recently deleted first."""
        return await self._bin.page(user_id, limit=limit, offset=offset)

    async def restore(self, user_id: str, memory_id: str, actor: Actor) -> Memory:
        """Write the memory back (hot, same id); MemoryNotFound when it is not restorable (never deleted,
        restored already, its grace period over, or the user erased since)."""
        async with self._lock(user_id):
            found: Deleted | None = await self._bin.get(user_id, memory_id)
            if found is None:
                raise MemoryNotFound(memory_id)
            memory = replace(found.memory, archive_tier="hot")
            model = await self._dense.for_user(user_id, fresh=True)  # under the lock: the store's
            vectors = await model.embedder.embed([memory.embed_text])
            await self._tombstones.unbury(user_id, [memory_id])
            if isinstance(self._store, DeferredDeleteStore):
                await self._store.unhide(user_id, [memory_id])
            await self._store.upsert([memory], vectors, models={user_id: model.tag} if model.tag else None)
            await self._versions.bump(user_id, upserted=[memory_id], records=[(memory, vectors[0])])
            await self._memory.index_relations(user_id, [memory])
            await self._history.record(
                user_id, memory_id, "restored", actor, {"from": "deleted", "tier": found.memory.archive_tier}
            )
            await self._bin.drop(user_id, [memory_id])
        self._memory.forget_user_caches(user_id)
        return memory
